/**
 * ID tokens and the token endpoint as OpenID Connect clients use them, modelled on the OpenID Foundation's
 * oidcc-server, oidcc-codereuse, oidcc-refresh-token and oidcc-server-rotate-keys modules.
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { generatePrivateJWK, MemoryStore } from '../../src/index.js';
import {
  basic as basicAuth,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  SIGNING_KEY,
  USER_ID,
  baseOptions,
} from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { claimsOf } from '../helpers/jwt.js';
import { authorizePath, callbackOf, oidcOptions, RSA_KEY, signInFlow, submitLogin, USERINFO, verifyIDToken } from '../helpers/oidc.js';
import { exchange, postForm, refresh, TOKEN_PATH } from '../helpers/oauth.js';
import { pkcePair } from '../helpers/pkce.js';

function expectedAtHash(accessToken: string, hash: 'sha256' | 'sha384'): string {
  const digest = createHash(hash).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** Runs the token modules against `host`. */
function oidcTokenSuite(host: Host): void {
  const mount = useMount(host);

  describe('OpenID Connect tokens', () => {
    it('oidcc-server: an RS256 ID token with iss, aud, azp, nonce, auth_time and at_hash', async () => {
      const { server } = await mount(oidcOptions());
      const tokens = await signInFlow(server, request.agent(server), { nonce: 'n-server' });
      const { payload, alg, kid } = await verifyIDToken(server, tokens.idToken, { nonce: 'n-server' });
      expect(alg).toBe('RS256');
      expect(kid).toBe(RSA_KEY.kid);
      expect(payload.at_hash).toBe(expectedAtHash(tokens.accessToken, 'sha256'));
      // Access tokens keep the first configured key.
      expect(JSON.parse(Buffer.from(tokens.accessToken.split('.')[0] ?? '', 'base64url').toString()).alg).toBe('ES256');
    });

    it("honours an app's idTokenSignedResponseAlg", async () => {
      const base = oidcOptions();
      const es384 = generatePrivateJWK('ES384');
      const apps = base.apps!.map((app) => (app.clientId === CLIENT_ID ? { ...app, idTokenSignedResponseAlg: 'ES384' as const } : app));
      const { server } = await mount({ ...base, keys: [SIGNING_KEY, RSA_KEY, es384], apps });
      const tokens = await signInFlow(server, request.agent(server));
      const { payload, alg } = await verifyIDToken(server, tokens.idToken);
      expect(alg).toBe('ES384');
      expect(payload.at_hash).toBe(expectedAtHash(tokens.accessToken, 'sha384'));
    });

    it('oidcc-codereuse: a second redemption fails and revokes the tokens of the first', async () => {
      // Strict mode: the default retryGrace (10 s) refuses a replay without revoking, so a client whose answer was
      // lost is not mistaken for an attacker; certification redeems again at once and expects revocation.
      const { server } = await mount(oidcOptions({ retryGrace: 0 }));
      const agent = request.agent(server);
      const { verifier, challenge } = pkcePair();
      const login = await agent.get(authorizePath({ code_challenge: challenge, code_challenge_method: 'S256' }));
      const code = callbackOf(await submitLogin(agent, login.headers.location as string)).get('code') ?? '';
      const first = await exchange(server, code, { code_verifier: verifier });
      expect(first.status).toBe(200);
      expect((await request(server).get(USERINFO).set('authorization', `Bearer ${first.body.access_token}`)).status).toBe(200);
      const second = await exchange(server, code, { code_verifier: verifier });
      expect(second.status).toBe(400);
      expect(second.body.error).toBe('invalid_grant');
      expect((await request(server).get(USERINFO).set('authorization', `Bearer ${first.body.access_token}`)).status).toBe(401);
    });

    it('oidcc-refresh-token: the refreshed ID token keeps sub, aud and auth_time and has no nonce', async () => {
      const { server } = await mount(oidcOptions());
      const tokens = await signInFlow(server, request.agent(server), { nonce: 'n-refresh' });
      const refreshed = await refresh(server, tokens.refreshToken ?? '');
      expect(refreshed.status).toBe(200);
      const original = claimsOf(tokens.idToken);
      const { payload } = await verifyIDToken(server, refreshed.body.id_token);
      expect(payload.sub).toBe(original.sub);
      expect(payload.aud).toBe(original.aud);
      expect(payload.auth_time).toBe(original.auth_time);
      expect(payload.nonce).toBeUndefined();
      expect(payload.at_hash).toBe(expectedAtHash(refreshed.body.access_token, 'sha256'));
      expect((await request(server).get(USERINFO).set('authorization', `Bearer ${refreshed.body.access_token}`)).body.sub).toBe(USER_ID);
    });

    it('oidcc-server-rotate-keys: a new RSA key signs, the old one stays published and old ID tokens verify', async () => {
      const store = new MemoryStore();
      const before = await mount(oidcOptions({ store }));
      const old = await signInFlow(before.server, request.agent(before.server));
      const next = generatePrivateJWK('RS256');
      const after = await mount(oidcOptions({ store, keys: [SIGNING_KEY, next, RSA_KEY] }));
      const jwks = await request(after.server).get(`/sentinel/api/account/${baseOptions().apps![0]!.accountId}/.well-known/jwks.json`);
      expect(jwks.body.keys.map((key: { kid: string }) => key.kid)).toEqual([SIGNING_KEY.kid, next.kid, RSA_KEY.kid]);
      const fresh = await signInFlow(after.server, request.agent(after.server));
      expect((await verifyIDToken(after.server, fresh.idToken)).kid).toBe(next.kid);
      expect((await verifyIDToken(after.server, old.idToken)).kid).toBe(RSA_KEY.kid);
    });

    it('client_credentials at the advertised token endpoint issues an app token', async () => {
      const { server, sentinel } = await mount(oidcOptions());
      const response = await postForm(
        server,
        TOKEN_PATH,
        { grant_type: 'client_credentials' },
        basicAuth(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET),
      );
      expect(response.status).toBe(200);
      expect(response.body.token_type).toBe('Bearer');
      const claims = await sentinel.verifyAccessToken(response.body.access_token);
      expect(claims.sub).toBe(CC_ONLY_CLIENT_ID);
      expect(claims.gty).toBe('client_credentials');
      expect(claims.token_use).toBe('app');
      const publicClient = await postForm(server, TOKEN_PATH, {
        grant_type: 'client_credentials',
        client_id: baseOptions().apps![1]!.clientId,
      });
      expect(publicClient.body.error).toBe('invalid_client');
    });
  });
}

oidcTokenSuite(HANDLE_HOST);
