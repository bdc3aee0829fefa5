/**
 * OpenID Connect Discovery, modelled on the OpenID Foundation's oidcc-discovery-* checks of the Config OP plan:
 * the document lists what works, and every listed endpoint answers.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, ISSUER } from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { ACCOUNT_ISSUER } from '../helpers/oauth.js';
import { DISCOVERY, oidcOptions } from '../helpers/oidc.js';

/** Runs the discovery modules against `host`. */
function oidcDiscoverySuite(host: Host): void {
  const mount = useMount(host);

  describe('OpenID Connect Discovery', () => {
    it('oidcc-discovery-endpoint-verification: the required members, with the issuer matching the URL', async () => {
      const { server } = await mount(oidcOptions());
      const response = await request(server).get(DISCOVERY);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        issuer: ACCOUNT_ISSUER,
        authorization_endpoint: `${ACCOUNT_ISSUER}/authorize`,
        token_endpoint: `${ACCOUNT_ISSUER}/token`,
        userinfo_endpoint: `${ACCOUNT_ISSUER}/userinfo`,
        end_session_endpoint: `${ACCOUNT_ISSUER}/end_session`,
        jwks_uri: `${ISSUER}/sentinel/well-known/jwks`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        subject_types_supported: ['public'],
        grant_types_supported: [
          'authorization_code',
          'refresh_token',
          'client_credentials',
          'urn:ietf:params:oauth:grant-type:device_code',
        ],
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
        claims_parameter_supported: true,
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
      });
      expect(`${DISCOVERY}`.startsWith(new URL(response.body.issuer).pathname)).toBe(true);
    });

    it('oidcc-discovery-rs256: RS256 is listed and used for ID tokens when an RSA key is configured', async () => {
      const { server } = await mount(oidcOptions());
      const body = (await request(server).get(DISCOVERY)).body;
      expect(body.id_token_signing_alg_values_supported).toContain('RS256');
      expect(body.id_token_signing_alg_values_supported).toContain('ES256');
    });

    it('oidcc-discovery-claims-supported: scopes and claims of OpenID Connect Core §5.4', async () => {
      const { server } = await mount(oidcOptions());
      const body = (await request(server).get(DISCOVERY)).body;
      expect(body.scopes_supported).toEqual(['openid', 'profile', 'email', 'address', 'phone']);
      for (const claim of [
        'sub',
        'name',
        'email',
        'email_verified',
        'address',
        'phone_number',
        'auth_time',
        'nonce',
        'at_hash',
        'acr',
        'amr',
        'sid',
      ]) {
        expect(body.claims_supported).toContain(claim);
      }
      expect(body.prompt_values_supported).toEqual(['none', 'login', 'consent', 'select_account']);
    });

    it('oidcc-discovery-jwks-uri: the JWKS answers at jwks_uri and at {issuer}/.well-known/jwks.json, public parts only', async () => {
      const { server } = await mount(oidcOptions());
      const body = (await request(server).get(DISCOVERY)).body;
      const published = await request(server).get(new URL(body.jwks_uri).pathname);
      const guessed = await request(server).get(`/sentinel/api/account/${ACCOUNT}/.well-known/jwks.json`);
      expect(guessed.status).toBe(200);
      expect(guessed.body).toEqual(published.body);
      expect(published.body.keys.map((key: { kty: string }) => key.kty).sort()).toEqual(['EC', 'RSA']);
      for (const key of published.body.keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key[secret]).toBeUndefined();
      expect((await request(server).get('/sentinel/api/account/nope/.well-known/jwks.json')).status).toBe(404);
    });

    it('every listed endpoint answers (none is a 404)', async () => {
      const { server } = await mount(oidcOptions());
      const body = (await request(server).get(DISCOVERY)).body;
      for (const name of [
        'authorization_endpoint',
        'token_endpoint',
        'userinfo_endpoint',
        'end_session_endpoint',
        'revocation_endpoint',
        'introspection_endpoint',
      ]) {
        const path = new URL(body[name]).pathname;
        const response =
          name === 'token_endpoint' || name.startsWith('revocation') || name.startsWith('introspection')
            ? await request(server).post(path)
            : await request(server).get(path);
        expect(response.status, name).not.toBe(404);
        expect(response.status, name).toBeLessThan(500);
      }
    });
  });
}

oidcDiscoverySuite(HANDLE_HOST);
