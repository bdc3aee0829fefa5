/**
 * get-jwks (the key fetcher behind @fastify/jwt's JWKS set-up) with its default settings: it derives
 * `{iss}/.well-known/jwks.json` from a token's issuer, or reads `jwks_uri` from `{iss}/.well-known/openid-configuration`
 * with `providerDiscovery`. Both must find the service's keys on every host.
 */
import buildGetJwks from 'get-jwks';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel } from '../src/index.js';
import { basic, baseOptions, CC_ONLY_CLIENT_ID, CC_ONLY_SECRET, ISSUER } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { postForm, TOKEN_PATH } from './helpers/oauth.js';
import { oidcOptions } from './helpers/oidc.js';

const open: MountedHost[] = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

for (const host of HOSTS) {
  describe(host.name, () => {
    it('get-jwks finds the signing key from the token issuer, by default path and by discovery', async () => {
      const mounted = await host.mount(createSentinel(baseOptions(oidcOptions())));
      open.push(mounted);
      // The issuer is http://localhost; the host listens on an ephemeral port, so get-jwks' fetches are re-pointed.
      const realFetch = globalThis.fetch;
      vi.stubGlobal('fetch', (url: string, init?: RequestInit) => realFetch(String(url).replace(ISSUER, mounted.url), init));
      const response = await postForm(
        mounted.server,
        TOKEN_PATH,
        { grant_type: 'client_credentials' },
        basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET),
      );
      const token: string = response.body.access_token;
      const { kid, alg } = decodeProtectedHeader(token);
      const iss = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).iss as string;
      for (const getJwks of [buildGetJwks(), buildGetJwks({ providerDiscovery: true })]) {
        const pem = await getJwks.getPublicKey({ domain: iss, kid, alg });
        const { payload } = await jwtVerify(token, await importSPKI(pem, alg as string), { issuer: iss });
        expect(payload.sub).toBe(CC_ONLY_CLIENT_ID);
      }
    });
  });
}
