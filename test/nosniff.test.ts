/**
 * `X-Content-Type-Options: nosniff` on every kind of response, through every host: JSON (token success and
 * error, cacheable JWKS and metadata) and redirects (302 to the login page, 303 back to the app), not only pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, appTokenPath, CLIENT_ID, ccBody, makeSentinel, PASSWORD, REDIRECT_URI, USERNAME } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';

const ACCOUNT_PATH = `/sentinel/api/account/${ACCOUNT}`;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

for (const host of HOSTS) {
  describe(`nosniff through ${host.name}`, () => {
    let mounted: MountedHost;
    beforeAll(async () => {
      mounted = await host.mount(makeSentinel());
    });
    afterAll(() => mounted.close());

    const nosniff = (response: Response): string | null => response.headers.get('x-content-type-options');

    it('on JSON: token success and error, JWKS, metadata', async () => {
      const token = await fetch(`${mounted.url}${appTokenPath()}`, { method: 'POST', headers: FORM, body: ccBody() });
      expect(token.status).toBe(200);
      expect(nosniff(token)).toBe('nosniff');
      const error = await fetch(`${mounted.url}${ACCOUNT_PATH}/token`, { method: 'POST', headers: FORM, body: 'grant_type=nope' });
      expect(error.status).toBe(400);
      expect(nosniff(error)).toBe('nosniff');
      const jwks = await fetch(`${mounted.url}/sentinel/well-known/jwks`);
      expect(jwks.status).toBe(200);
      expect(nosniff(jwks)).toBe('nosniff');
      const metadata = await fetch(`${mounted.url}${ACCOUNT_PATH}/.well-known/openid-configuration`);
      expect(metadata.status).toBe(200);
      expect(nosniff(metadata)).toBe('nosniff');
    });

    it('on redirects: 302 to the login page and 303 back to the app', async () => {
      const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 's' });
      const authorize = await fetch(`${mounted.url}${ACCOUNT_PATH}/authorize?${query}`, { redirect: 'manual' });
      expect(authorize.status).toBe(302);
      expect(nosniff(authorize)).toBe('nosniff');
      const loginURL = `${mounted.url}${authorize.headers.get('location')}`;
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(await (await fetch(loginURL)).text())?.[1] ?? '';
      const signedIn = await fetch(loginURL, {
        method: 'POST',
        redirect: 'manual',
        headers: FORM,
        body: new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString(),
      });
      expect(signedIn.status).toBe(303);
      expect(nosniff(signedIn)).toBe('nosniff');
    });
  });
}
