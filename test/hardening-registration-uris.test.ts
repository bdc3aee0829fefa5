/**
 * Registered URIs are read as written (RFC 3986), not as a forgiving parser repairs them: a redirect URI that
 * browsers read differently from the stored string (backslashes, a missing `//`, an empty host, userinfo hidden
 * behind a backslash, a host a browser rewrites) is refused wherever an app is registered — the `apps` option
 * (redirect and post-logout URIs, `jwksUri`), `registerApp()`, RFC 7591 registration and RFC 7592 update, on the
 * in-memory registry and on PostgreSQL, and `sentinel-idp apps register` — and what worked before still works.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { redirectURIProblem } from '../src/apps/app-validation.js';
import { runAppsRegister } from '../src/cli/apps-register.js';
import { contextOf } from '../src/http/context.js';
import type { CLIIO } from '../src/cli/io.js';
import { isConfigurationError, type Sentinel } from '../src/index.js';
import type { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

/** Redirect URIs a browser reads differently from the string, or that carry what a redirect URI must not. */
const REFUSED: readonly string[] = [
  'https:///cb',
  'https:/cb',
  'https:cb',
  'https:\\\\evil.example\\cb',
  'https://evil.example\\@good.example/cb',
  'https://good.example\\cb',
  'https://user@good.example/cb',
  'https://user:pw@good.example/cb',
  'https://good.example/cb#fragment',
  'https://good.example/c b',
  'https://good.example/cb\t',
  'https://good.example/\ncb',
  'https://good.example/cb\u0085',
  'https://good.example/cb\u00a0',
  'https://gööd.example/cb',
  'https://good.example/%zz',
  'https://evil%2Eexample/cb',
  'https://0x7f.1/cb',
  'https://good.example:port/cb',
  'https://good.example/[cb]',
  'http://0x7f.0.0.1:8080/cb',
  'http://evil.example/cb',
  'javascript:alert(1)',
  'com.example.app://user@host/cb',
  'com.example.app:\\cb',
  // Hosts RFC 3986 allows but no resolver knows, and that CSP reads as a wildcard, a directive or a second policy.
  'https://*.example.com/cb',
  'https://*/cb',
  'https://app;sandbox.example/cb',
  'https://app,b.example/cb',
  "https://app'b.example/cb",
  'https://app!b.example/cb',
  'https://app_b.example/cb',
  'https://app~b.example/cb',
  'https://app..example.com/cb',
  'https://.example.com/cb',
];

/** Redirect URIs that were accepted before and still are. */
const WEB_ACCEPTED: readonly string[] = [
  'https://app.example.com/cb',
  'https://app.example.com:8443/cb?tenant=a&x=%20',
  'https://APP.example.com/cb',
  'http://127.0.0.1:8080/cb',
  'http://localhost:3000/cb',
  'http://[::1]:8080/cb',
  'https://app-1.example.com./cb',
  'https://xn--bcher-kva.example/cb',
  'https://192.0.2.10/cb',
  'https://[2001:db8::1]:8443/cb',
];
// Private-use schemes keep RFC 3986's reg-name: a native app's host is no DNS name.
const NATIVE_ACCEPTED: readonly string[] = [
  'com.example.app:/oauth2redirect',
  'com.example.app://callback/cb',
  'com.example.app://call_back/cb',
];

function fieldOf(build: () => unknown): string | undefined {
  try {
    build();
  } catch (error) {
    return isConfigurationError(error) ? error.field : `not a ConfigurationError: ${String(error)}`;
  }
  return undefined;
}

function withApp(app: Record<string, unknown>): Parameters<typeof makeSentinel>[0] {
  return { apps: [{ accountId: ACCOUNT, clientId: 'c-hardening', clientSecret: 'a-secret-of-the-test-app', ...app }] };
}

const silentIO: CLIIO = { stdout: () => {}, stderr: () => {}, env: {}, readSecret: async () => null };

describe('redirect URIs are validated as written', () => {
  it.each(REFUSED.map((uri) => [JSON.stringify(uri), uri] as const))('refuses %s in every check', (_label, uri) => {
    expect(redirectURIProblem(uri)).not.toBeNull();
  });

  it.each([...WEB_ACCEPTED, ...NATIVE_ACCEPTED].map((uri) => [uri] as const))('still accepts %s', (uri) => {
    expect(redirectURIProblem(uri)).toBeNull();
    expect(fieldOf(() => makeSentinel(withApp({ redirectUris: [uri], postLogoutRedirectUris: [uri] })))).toBeUndefined();
  });

  it.each(REFUSED.map((uri) => [JSON.stringify(uri), uri] as const))('the apps option refuses %s', (_label, uri) => {
    expect(fieldOf(() => makeSentinel(withApp({ redirectUris: ['https://app.example.com/cb', uri] })))).toBe('apps[0].redirectUris[1]');
    expect(fieldOf(() => makeSentinel(withApp({ redirectUris: ['https://app.example.com/cb'], postLogoutRedirectUris: [uri] })))).toBe(
      'apps[0].postLogoutRedirectUris[0]',
    );
  });

  it.each(REFUSED.map((uri) => [JSON.stringify(uri), uri] as const))('registerApp() refuses %s and saves nothing', async (_label, uri) => {
    const sentinel = makeSentinel();
    const before = contextOf(sentinel).apps.listApps?.(ACCOUNT);
    const error = await sentinel.registerApp({ accountId: ACCOUNT, redirectUris: [uri] }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(isConfigurationError(error) ? error.field : error).toBe('app.redirectUris[0]');
    expect(contextOf(sentinel).apps.listApps?.(ACCOUNT)).toEqual(before);
  });

  it.each(REFUSED.map((uri) => [JSON.stringify(uri), uri] as const))('sentinel-idp apps register refuses %s', async (_label, uri) => {
    const run = runAppsRegister(['--account', ACCOUNT, '--redirect-uri', uri], silentIO);
    await expect(run).rejects.toThrow(/--redirect-uri #1/);
  });

  it('a jwksUri is read as written too', () => {
    const jwks = (jwksUri: string) =>
      fieldOf(() =>
        makeSentinel({
          apps: [
            {
              accountId: ACCOUNT,
              clientId: 'c-keys',
              tokenEndpointAuthMethod: 'private_key_jwt',
              jwksUri,
              grantTypes: ['client_credentials'],
            },
          ],
        }),
      );
    for (const uri of [
      'https:///jwks',
      'https:jwks',
      'https:\\\\evil.example\\jwks',
      'https://evil.example\\@good.example/jwks',
      'https://0x7f.1/jwks',
    ]) {
      expect(jwks(uri), uri).toBe('apps[0].jwksUri');
    }
    expect(jwks('https://app.example.com/.well-known/jwks.json')).toBeUndefined();
  });
});

/** The RFC 7591/7592 checks on one registry: refused with `invalid_redirect_uri`, and nothing stored or changed. */
function registrationChecks(name: string, build: () => { sentinel: Sentinel; count: () => Promise<number> }) {
  describe(`RFC 7591/7592 on ${name}`, () => {
    it.each(REFUSED.map((uri) => [JSON.stringify(uri), uri] as const))('refuses %s at registration and update', async (_label, uri) => {
      const { sentinel, count } = build();
      const before = await count();
      const created = await postRegistration(sentinel, { redirect_uris: ['https://app.example.com/cb', uri] });
      expect(created.status, created.body).toBe(400);
      expect(jsonOf(created).error).toBe('invalid_redirect_uri');
      expect(await count()).toBe(before);

      const info = await registerClient(sentinel, { redirect_uris: ['https://app.example.com/cb'] });
      const updated = await manageClient(sentinel, 'PUT', info, {
        body: { client_id: info.client_id, redirect_uris: ['https://app.example.com/cb', uri] },
      });
      expect(updated.status, updated.body).toBe(400);
      expect(jsonOf(updated).error).toBe('invalid_redirect_uri');
      const read = await manageClient(sentinel, 'GET', info);
      expect(jsonOf(read).redirect_uris).toEqual(['https://app.example.com/cb']);
    });

    it('still registers the https and loopback URIs it took before', async () => {
      const { sentinel } = build();
      const info = await registerClient(sentinel, { redirect_uris: WEB_ACCEPTED });
      expect(info.redirect_uris).toEqual(WEB_ACCEPTED);
    });
  });
}

registrationChecks('the in-memory registry', () => {
  const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
  return { sentinel, count: async () => (await contextOf(sentinel).apps.listApps?.(ACCOUNT))?.length ?? 0 };
});

await describeOnPostgres('hardening-registration-uris', 'on PostgreSQL', (registry) => {
  let store: PostgresAppStore;
  let sentinel: Sentinel;

  beforeAll(() => {
    store = registry().store;
    sentinel = makeSentinel({ apps: [], appStore: store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
  });

  registrationChecks('PostgreSQL', () => ({ sentinel, count: async () => (await store.listApps(ACCOUNT)).length }));

  it('registerApp() on PostgreSQL stores nothing for a refused URI', async () => {
    await expect(sentinel.registerApp({ accountId: ACCOUNT, redirectUris: ['https:///cb'] })).rejects.toThrow(/redirectUris/);
    expect((await store.listApps(ACCOUNT)).some((app) => app.redirectUris.includes('https:///cb'))).toBe(false);
  });
});
