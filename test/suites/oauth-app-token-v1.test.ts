/**
 * Black-box suite of the platform's v1 app token (`POST …/api/account/{accountId}/app/token`): an app-level
 * client credentials token that must never pass as a consumer-bound one.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../../src/index.js';
import { ACCOUNT, appTokenPath, basic, ccBody, CLIENT_ID, CLIENT_SECRET, PUBLIC_CLIENT_ID } from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { claimsOf } from '../helpers/jwt.js';
import { expectError, expectNoStore, FORM, postForm } from '../helpers/oauth.js';

const V1_PATH = `/sentinel/api/account/${ACCOUNT}/app/token`;

/** Runs the v1 app token suite against `host`. */
function appTokenV1Suite(host: Host): void {
  const mount = useMount(host);

  describe('v1 app token', () => {
    it('issues an app token: sub = client id, gty client_credentials, marked as an app token', async () => {
      const { server, sentinel } = await mount();
      const response = await postForm(server, `${V1_PATH}?v=1.0`, {
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      expect(response.status).toBe(200);
      expectNoStore(response);
      expect(Object.keys(response.body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
      expect(response.body.expires_in).toBe('3600');
      const claims = await sentinel.verifyAccessToken(response.body.access_token, { accountId: ACCOUNT });
      expect(claims.sub).toBe(CLIENT_ID);
      expect(claims.gty).toBe('client_credentials');
      expect(claims.token_use).toBe('app');
      const viaBasic = await postForm(server, V1_PATH, { grant_type: 'client_credentials' }, basic(CLIENT_ID, CLIENT_SECRET));
      expect(viaBasic.status).toBe(200);
    });

    it('never passes where a consumer-bound token is required, even when the consumer id equals the client id', async () => {
      const { server, sentinel } = await mount();
      const brand = `/api/account/${ACCOUNT}/consumer/${CLIENT_ID}/brand/tokens`;
      const consumerToken = await request(server).post(appTokenPath(CLIENT_ID)).set('content-type', FORM).send(ccBody());
      expect(consumerToken.status).toBe(200);
      expect((await request(server).get(brand).set('authorization', `Bearer ${consumerToken.body.access_token}`)).status).toBe(200);
      const appToken = await postForm(server, V1_PATH, {
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      expect(claimsOf(appToken.body.access_token).sub).toBe(CLIENT_ID);
      const refused = await request(server).get(brand).set('authorization', `Bearer ${appToken.body.access_token}`);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/invalid_token/);
      await expect(sentinel.verifyAccessToken(appToken.body.access_token, { consumerId: CLIENT_ID })).rejects.toMatchObject({
        code: 'invalid_token',
      });
    });

    it('refuses bad credentials, public clients, wrong grant types and apps without client_credentials', async () => {
      const denied: SentinelEvent[] = [];
      const { server, sentinel } = await mount({ onEvent: (event) => event.type === 'token.denied' && denied.push(event) });
      expectError(
        await postForm(server, V1_PATH, { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: 'wrong' }),
        400,
        'invalid_client',
      );
      expectError(
        await postForm(server, V1_PATH, { grant_type: 'client_credentials', client_id: PUBLIC_CLIENT_ID }),
        400,
        'invalid_client',
      );
      expectError(
        await postForm(server, V1_PATH, { grant_type: 'authorization_code', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
        400,
        'unsupported_grant_type',
      );
      expectError(
        await postForm(server, `${V1_PATH}?v=9`, { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
        400,
        'invalid_request',
      );
      const registered = await sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: ['https://x.example.com/cb'],
        grantTypes: ['authorization_code'],
      });
      const noGrant = await postForm(server, V1_PATH, {
        grant_type: 'client_credentials',
        client_id: registered.clientId,
        client_secret: registered.clientSecret!,
      });
      expectError(noGrant, 400, 'unauthorized_client');
      expect(denied).toHaveLength(5);
      expect(JSON.stringify(denied)).not.toContain(registered.clientSecret!);
    });
  });
}

appTokenV1Suite(HANDLE_HOST);
