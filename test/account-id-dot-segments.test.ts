/**
 * `.` and `..` are no account ids: `encodeURIComponent` leaves them as they are and every URL parser resolves them
 * away, so an issuer `…/account/..` and a `registration_client_uri` `…/account/../register/{id}` name paths that are
 * no route. Every account route refuses them before its handler runs (400 invalid_request), the `apps` and
 * `trustedIssuers` options refuse them at startup, and the CLI refuses them as `--account`: one check
 * (src/lib/account-id.ts) for all.
 */
import { describe, expect, it } from 'vitest';
import { type App, type AppStore, createSentinel, hashClientSecret } from '../src/index.js';
import { requireAccountId } from '../src/cli/usage.js';
import { isAccountId } from '../src/lib/account-id.js';
import { call, FORM, jsonOf } from './helpers/direct-flow.js';
import { baseOptions, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';
import { INITIAL_ACCESS_TOKEN } from './helpers/registration-client.js';

const DOT_SEGMENTS = ['.', '..'];
// How a client gets a dot segment past its own URL parser: percent-encoded, which the router decodes.
const encoded = (segment: string): string => segment.replaceAll('.', '%2E');

describe('account ids that are dot segments', () => {
  it('refuses registration in them with 400 invalid_request, before the initial access token is looked at', async () => {
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    for (const segment of DOT_SEGMENTS) {
      const response = await call(sentinel, {
        method: 'POST',
        path: `/sentinel/api/account/${encoded(segment)}/register`,
        headers: { authorization: `Bearer ${INITIAL_ACCESS_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grant_types: ['client_credentials'] }),
      });
      expect(response.status, segment).toBe(400);
      expect(jsonOf(response)).toMatchObject({ error: 'invalid_request', error_description: 'the account id in the path is malformed' });
    }
  });

  it('refuses the rest of the account id syntax at registration only: elsewhere such an id is an unknown account', async () => {
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    for (const account of ['a%2Fb', 'a%00b', 'x'.repeat(257)]) {
      const registered = await call(sentinel, {
        method: 'POST',
        path: `/sentinel/api/account/${account}/register`,
        headers: { authorization: `Bearer ${INITIAL_ACCESS_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grant_types: ['client_credentials'] }),
      });
      expect(registered.status, account).toBe(400);
      const metadata = await call(sentinel, { path: `/sentinel/api/account/${account}/.well-known/openid-configuration` });
      expect(metadata.status, account).toBe(404);
    }
  });

  it('still registers in an account whose id merely contains dots', async () => {
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const response = await call(sentinel, {
      method: 'POST',
      path: `/sentinel/api/account/${encoded('...')}/register`,
      headers: { authorization: `Bearer ${INITIAL_ACCESS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_types: ['client_credentials'] }),
    });
    expect(response.status).toBe(201);
    expect((jsonOf(response) as { registration_client_uri: string }).registration_client_uri).toContain('/account/.../register/');
  });

  it('mints no token and starts no sign-in for them, even when the host registry answers an app there', async () => {
    // A host registry (not the `apps` option, which refuses such ids) that holds an app in every account asked for.
    const app: App = {
      accountId: '..',
      clientId: 'dot-app',
      clientSecretHash: hashClientSecret(CLIENT_SECRET),
      redirectUris: ['https://app.example.com/cb'],
      grantTypes: ['authorization_code', 'client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    };
    const store: AppStore = {
      findApp: (accountId, clientId) => (clientId === app.clientId ? { ...app, accountId } : null),
      hasAccount: () => true,
    };
    const sentinel = makeSentinel({ apps: [], appStore: store });
    const basic = `Basic ${Buffer.from(`dot-app:${CLIENT_SECRET}`).toString('base64')}`;
    for (const segment of DOT_SEGMENTS) {
      const account = encoded(segment);
      for (const path of [
        `/sentinel/api/account/${account}/token`,
        `/sentinel/api/account/${account}/app/token?state=${CONSUMER_UUID}`,
        `/sentinel/api/v2/account/${account}/app/token?state=${CONSUMER_UUID}`,
      ]) {
        const response = await call(sentinel, {
          method: 'POST',
          path,
          headers: { authorization: basic, 'content-type': FORM },
          body: 'grant_type=client_credentials',
        });
        expect(response.status, path).toBe(400);
        expect(jsonOf(response), path).toMatchObject({ error: 'invalid_request' });
      }
      const authorize = await call(sentinel, {
        path: `/sentinel/api/account/${account}/authorize`,
        query: new URLSearchParams({
          response_type: 'code',
          client_id: 'dot-app',
          redirect_uri: 'https://app.example.com/cb',
          scope: 'openid',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      });
      expect(authorize.status, 'authorize').toBe(400);
      expect(authorize.headers.location).toBeUndefined();
      const metadata = await call(sentinel, { path: `/sentinel/api/account/${account}/.well-known/openid-configuration` });
      expect(metadata.status, 'metadata').toBe(400);
    }
    // The same store still serves an ordinary account.
    const ordinary = await call(sentinel, {
      method: 'POST',
      path: '/sentinel/api/account/acme/token',
      headers: { authorization: basic, 'content-type': FORM },
      body: 'grant_type=client_credentials',
    });
    expect(ordinary.status).toBe(200);
  });

  it('refuses them in the apps and trustedIssuers options at startup', () => {
    const CC_APP = { clientId: 'c', clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: ['client_credentials' as const] };
    const BRAND = { issuer: 'https://brand.example.com', jwksUri: 'https://brand.example.com/jwks.json' };
    // The same entries in an ordinary account start.
    createSentinel(baseOptions({ apps: [{ ...CC_APP, accountId: '...' }], trustedIssuers: [{ ...BRAND, accountId: '...' }] }));
    for (const segment of DOT_SEGMENTS) {
      expect(() => createSentinel(baseOptions({ apps: [{ ...CC_APP, accountId: segment }] }))).toThrow(
        /apps\[0\]\.accountId: must be .*not "\." or "\.\."/,
      );
      expect(() => createSentinel(baseOptions({ trustedIssuers: [{ ...BRAND, accountId: segment }] }))).toThrow(
        /trustedIssuers\[0\]\.accountId/,
      );
    }
  });

  it('is the check the CLI applies to --account', () => {
    for (const value of ['.', '..', 'a/b', 'a?b', 'a#b', 'a\u0000b', 'x'.repeat(257)]) {
      expect(isAccountId(value), value).toBe(false);
      expect(() => requireAccountId({ account: value }, 'token'), value).toThrow(/--account must be/);
    }
    for (const value of ['...', '.a', 'a.', 'le81823118', 'a b', 'ü']) {
      expect(isAccountId(value), value).toBe(true);
      expect(requireAccountId({ account: value }, 'token')).toBe(value);
    }
  });
});
