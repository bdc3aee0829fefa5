/**
 * Black-box suite of the per-account authorization server metadata (RFC 8414).
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, ISSUER } from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { ACCOUNT_ISSUER } from '../helpers/oauth.js';
import { contextOf } from '../../src/http/context.js';

/** Runs the metadata suite against `host`. */
function metadataSuite(host: Host): void {
  const mount = useMount(host);

  describe('metadata (RFC 8414)', () => {
    it("serves the account issuer's metadata at the path-inserted and the appended well-known URLs", async () => {
      const { server, sentinel } = await mount();
      const inserted = await request(server).get(`/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`);
      expect(inserted.status).toBe(200);
      expect(inserted.headers['content-type']).toBe('application/json;charset=UTF-8');
      expect(inserted.body).toMatchObject({
        issuer: ACCOUNT_ISSUER,
        authorization_endpoint: `${ACCOUNT_ISSUER}/authorize`,
        token_endpoint: `${ACCOUNT_ISSUER}/token`,
        revocation_endpoint: `${ACCOUNT_ISSUER}/token/revoke`,
        introspection_endpoint: `${ACCOUNT_ISSUER}/token/introspect`,
        jwks_uri: `${ISSUER}/sentinel/well-known/jwks`,
        response_types_supported: ['code'],
        grant_types_supported: [
          'authorization_code',
          'refresh_token',
          'client_credentials',
          'urn:ietf:params:oauth:grant-type:device_code',
        ],
        device_authorization_endpoint: `${ACCOUNT_ISSUER}/device_authorization`,
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'],
        pushed_authorization_request_endpoint: `${ACCOUNT_ISSUER}/par`,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        id_token_signing_alg_values_supported: [contextOf(sentinel).keys.signer.alg],
      });
      const appended = await request(server).get(`/sentinel/api/account/${ACCOUNT}/.well-known/oauth-authorization-server`);
      expect(appended.body).toEqual(inserted.body);
      const oidc = await request(server).get(`/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`);
      expect(oidc.body).toEqual(inserted.body);
    });

    it('answers 404 JSON for an unknown account and 405 for POST', async () => {
      const { server } = await mount();
      const unknown = await request(server).get('/.well-known/oauth-authorization-server/sentinel/api/account/nope');
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('invalid_request');
      expect((await request(server).post(`/sentinel/api/account/${ACCOUNT}/.well-known/oauth-authorization-server`)).status).toBe(405);
    });

    it('follows a custom basePath', async () => {
      const { server } = await mount({ basePath: '/idp' });
      const response = await request(server).get(`/.well-known/oauth-authorization-server/idp/api/account/${ACCOUNT}`);
      expect(response.status).toBe(200);
      expect(response.body.issuer).toBe(`${ISSUER}/idp/api/account/${ACCOUNT}`);
      expect(response.body.token_endpoint).toBe(`${ISSUER}/idp/api/account/${ACCOUNT}/token`);
    });
  });
}

metadataSuite(HANDLE_HOST);
