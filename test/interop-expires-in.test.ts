/**
 * `expires_in` by endpoint: the account token endpoint (code exchange, refresh, client_credentials) answers the
 * RFC 6749 §5.1 number, which standard clients compute with (rack-oauth2 adds it to a time); the platform's
 * app-token paths (v1 and v2) keep the string of digits their contract shows, unless `expiresIn: 'number'`.
 */
import { describe, expect, it } from 'vitest';
import { appTokenPath, ACCOUNT, ccBody } from './helpers/fixtures.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import { useMount } from './helpers/mount.js';
import { codeFor, exchange, postForm, postRaw, refresh, TOKEN_PATH, CLIENT } from './helpers/oauth.js';

const V1_PATH = `/sentinel/api/account/${ACCOUNT}/app/token`;
const mount = useMount(HANDLE_HOST);

describe('expires_in at the account token endpoint is a number', () => {
  for (const expiresIn of [undefined, 'string', 'number'] as const) {
    it(`for the code exchange, the refresh and client_credentials (expiresIn option ${expiresIn ?? 'unset'})`, async () => {
      const { server, sentinel } = await mount(expiresIn === undefined ? {} : { expiresIn });
      const exchanged = await exchange(server, await codeFor(sentinel));
      expect(exchanged.status).toBe(200);
      expect(exchanged.body.expires_in).toBe(3600);
      const refreshed = await refresh(server, exchanged.body.refresh_token);
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.expires_in).toBe(3600);
      const credentials = await postForm(server, `${TOKEN_PATH}?v=1.0`, { grant_type: 'client_credentials', ...CLIENT });
      expect(credentials.status).toBe(200);
      expect(credentials.body.expires_in).toBe(3600);
      // The body is written by hand: make sure it is the JSON number, not a quoted one that a parser coerced.
      expect(credentials.text).toContain('"expires_in":3600');
    });
  }
});

describe('expires_in on the platform app-token paths follows expiresIn', () => {
  it('is a string of digits by default on v2 and v1', async () => {
    const { server } = await mount();
    const v2 = await postRaw(server, appTokenPath(), ccBody());
    expect(v2.status).toBe(200);
    expect(v2.body.expires_in).toBe('3600');
    const v1 = await postRaw(server, `${V1_PATH}?v=1.0`, ccBody());
    expect(v1.status).toBe(200);
    expect(v1.body.expires_in).toBe('3600');
  });

  it("is a number on both with expiresIn: 'number'", async () => {
    const { server } = await mount({ expiresIn: 'number' });
    expect((await postRaw(server, appTokenPath(), ccBody())).body.expires_in).toBe(3600);
    expect((await postRaw(server, `${V1_PATH}?v=1.0`, ccBody())).body.expires_in).toBe(3600);
  });
});
