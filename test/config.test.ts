import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  createSentinel,
  generatePrivateJWK,
  hashClientSecret,
  isConfigurationError,
  MemoryPasskeys,
  MemoryStore,
  type SentinelOptions,
} from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, CONSUMER_UUID, SIGNING_KEY } from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';

function fieldOf(options: SentinelOptions): string {
  try {
    createSentinel(options);
  } catch (error) {
    if (isConfigurationError(error)) return error.field;
    throw error;
  }
  throw new Error('expected a ConfigurationError');
}

const app = (overrides: Record<string, unknown> = {}) => ({
  accountId: ACCOUNT,
  clientId: CLIENT_ID,
  clientSecret: 's',
  redirectUris: ['https://app.example.com/cb'],
  ...overrides,
});

describe('createSentinel options', () => {
  it('fills nested defaults from the schema alone', () => {
    const { config } = createSentinel({ issuer: 'https://id.example.com', keys: [SIGNING_KEY] });
    expect(config.session).toEqual({
      cookieName: 'sentinel_session',
      absoluteTtl: 8 * 3600,
      idleTtl: 3600,
      maxGrantsPerApp: 16,
      maxAppsPerSession: 64,
      maxSessionsPerUser: 64,
    });
    expect(config.refreshToken).toEqual({ idleTtl: 14 * 86_400, absoluteTtl: 30 * 86_400 });
    expect(config.throttle).toEqual({ maxFailures: 5, maxFailuresPerIp: 50, maxFailuresPerNetwork: 500, windowSeconds: 900 });
    expect(config.branding).toEqual({ productName: 'Sign in', colors: {} });
    expect(config.telemetry).toEqual({ identifiersInMetrics: false });
    expect(config.i18n.defaultLocale).toBe('en');
    expect(config.dpop.proofMaxAgeSeconds).toBe(60);
    expect(config.clientJwks.timeoutMs).toBe(2000);
    expect(config.passkeys.offerRegistration).toBe(false);
  });

  it.each([
    ['http issuer on a public host', { issuer: 'http://id.example.com' }, 'issuer'],
    ['relative issuer', { issuer: '/id' }, 'issuer'],
    ['issuer with a query', { issuer: 'https://id.example.com?x=1' }, 'issuer'],
    ['missing issuer', { issuer: undefined as unknown as string }, 'issuer'],
    ['duplicate client id in one account', { apps: [app(), app()] }, 'apps[1].clientId'],
    ['relative redirect URI', { apps: [app({ redirectUris: ['/cb'] })] }, 'apps[0].redirectUris[0]'],
    ['redirect URI with a fragment', { apps: [app({ redirectUris: ['https://a.example/cb#x'] })] }, 'apps[0].redirectUris[0]'],
    ['http redirect URI on a public host', { apps: [app({ redirectUris: ['http://a.example/cb'] })] }, 'apps[0].redirectUris[0]'],
    ['javascript: redirect URI', { apps: [app({ redirectUris: ['javascript:alert(1)'] })] }, 'apps[0].redirectUris[0]'],
    ['unknown grant type', { apps: [app({ grantTypes: ['password'] })] }, 'apps[0].grantTypes[0]'],
    ['confidential app without secret', { apps: [app({ clientSecret: undefined })] }, 'apps[0].clientSecret'],
    ['malformed secret hash', { apps: [app({ clientSecret: undefined, clientSecretHash: 'plain' })] }, 'apps[0].clientSecretHash'],
    ['code lifetime over 10 minutes', { codeTtl: 601 }, 'codeTtl'],
    ['public key given as signing key', { keys: [{ kty: 'EC', crv: 'P-256', x: SIGNING_KEY.x, y: SIGNING_KEY.y }] }, 'keys[0]'],
    ['non-function consumer validator', { consumerId: 'uuid' as unknown as () => boolean }, 'consumerId'],
  ])('%s names the field', (_name, overrides, field) => {
    expect(fieldOf({ ...baseOptions(), apps: [], ...overrides } as SentinelOptions)).toBe(field);
  });

  it('accepts loopback http issuers and redirect URIs, private-use schemes, and a same id in two accounts', () => {
    expect(() =>
      createSentinel({
        ...baseOptions(),
        issuer: 'http://127.0.0.1:3000',
        apps: [
          app({ redirectUris: ['http://127.0.0.1:8080/cb', 'http://localhost/cb', 'com.example.app:/oauth'] }),
          app({ accountId: 'other' }),
        ],
      }),
    ).not.toThrow();
  });

  it('hashes plain secrets at startup and keeps no plain copy', async () => {
    const sentinel = createSentinel({ ...baseOptions(), apps: [app({ clientSecret: 'plain-secret-value' })] });
    const stored = await contextOf(sentinel).apps.findApp(ACCOUNT, CLIENT_ID);
    expect(stored?.clientSecretHash).toBe(hashClientSecret('plain-secret-value'));
    expect(JSON.stringify(sentinel.config)).not.toContain('plain-secret-value');
    expect(JSON.stringify(stored)).not.toContain('plain-secret-value');
  });

  it('generates a key with a warning when none is configured', () => {
    const warn = vi.fn();
    const sentinel = createSentinel({ ...baseOptions(), keys: undefined, logger: { warn } });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/restart/);
    // An ES256 key for access tokens and an RS256 key for ID tokens (OpenID Connect Discovery §3).
    expect(sentinel.jwks().keys.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
  });

  it('warns when keys are configured without an RSA key, and refuses an app whose ID token algorithm has no key', () => {
    const warn = vi.fn();
    createSentinel({ ...baseOptions(), logger: { warn } });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/no RS256 key/);
    const silent = vi.fn();
    createSentinel({ ...baseOptions(), keys: [generatePrivateJWK('ES256'), generatePrivateJWK('RS256')], logger: { warn: silent } });
    expect(silent).not.toHaveBeenCalled();
    const options = baseOptions();
    options.apps = [{ ...options.apps![0]!, idTokenSignedResponseAlg: 'RS256' }];
    expect(() => createSentinel(options)).toThrow(/apps\[0\]\.idTokenSignedResponseAlg/);
  });

  it('refuses a private JWK whose public part does not belong to its private part', () => {
    const one = generatePrivateJWK('ES256');
    const other = generatePrivateJWK('ES256');
    // It would sign tokens that the key it publishes never verifies.
    expect(() => createSentinel({ ...baseOptions(), keys: [{ ...one, x: other.x, y: other.y }] })).toThrow(/keys\[0\]: is not a key pair/);
  });

  it('refuses passkey origins a browser would never run the RP id on, and takes those it would', () => {
    const issuer = 'https://id.example.com';
    const withPasskeys = (passkeys: SentinelOptions['passkeys']) => ({ ...baseOptions(), issuer, passkeys });
    // Every ceremony fails in the browser for these: another site, a parent of the RP id, plain http off loopback.
    expect(fieldOf(withPasskeys({ rpId: 'other.example' }))).toBe('passkeys.rpId');
    expect(fieldOf(withPasskeys({ rpId: 'login.id.example.com' }))).toBe('passkeys.rpId');
    expect(fieldOf(withPasskeys({ origins: ['https://id.example.com', 'https://evil.example'] }))).toBe('passkeys.origins');
    expect(fieldOf(withPasskeys({ rpId: 'example.com', origins: ['https://notexample.com'] }))).toBe('passkeys.origins');
    expect(() => createSentinel(withPasskeys({ rpId: 'example.com', origins: ['http://id.example.com'] }))).toThrow(
      /passkeys\.origins: http:\/\/id\.example\.com must use https/,
    );
    // Shaped like an origin but no URL at all: named, not a TypeError from deep inside the start.
    expect(fieldOf(withPasskeys({ origins: ['https://id.example.com:99999'] }))).toBe('passkeys.origins[0]');
    expect(fieldOf(withPasskeys({ origins: ['https://id example.com'] }))).toBe('passkeys.origins[0]');
    // The defaults, a registrable suffix shared by sibling hosts, and loopback development.
    expect(() => createSentinel(withPasskeys({}))).not.toThrow();
    expect(() =>
      createSentinel(withPasskeys({ rpId: 'example.com', origins: ['https://id.example.com', 'https://app.example.com'] })),
    ).not.toThrow();
    expect(() =>
      createSentinel({ ...baseOptions(), issuer: 'http://localhost:3000', passkeys: { origins: ['http://localhost:3000'] } }),
    ).not.toThrow();
  });

  it('refuses a session cookie name whose prefix makes browsers drop every cookie of the service', () => {
    // __Host- needs Path=/ (the cookies have the service's path); __Secure- needs Secure (an http issuer's lack it).
    for (const cookieName of ['__Host-sid', '__host-sid', '__HOST-sid']) {
      expect(fieldOf({ ...baseOptions(), issuer: 'https://id.example.com', session: { cookieName } })).toBe('session.cookieName');
    }
    expect(fieldOf({ ...baseOptions(), session: { cookieName: '__Secure-sid' } })).toBe('session.cookieName');
    expect(fieldOf({ ...baseOptions(), session: { cookieName: '__secure-sid' } })).toBe('session.cookieName');
    // Over https a __Secure- cookie is Secure, as every cookie of the service is there.
    expect(() =>
      createSentinel({ ...baseOptions(), issuer: 'https://id.example.com', session: { cookieName: '__Secure-sid' } }),
    ).not.toThrow();
    expect(() => createSentinel({ ...baseOptions(), session: { cookieName: 'Host-sid' } })).not.toThrow();
  });

  it('refuses an IP address given as the passkey RP id; warns of an IP issuer whose host would be it', () => {
    // WebAuthn §5.1.3 step 7: the effective domain must be a domain, so every ceremony would fail in the browser.
    for (const rpId of ['192.0.2.7', '127.0.0.1']) {
      expect(fieldOf({ ...baseOptions(), issuer: `https://${rpId}`, passkeys: { rpId } })).toBe('passkeys.rpId');
    }
    expect(() => createSentinel({ ...baseOptions(), issuer: 'http://127.0.0.1:3000', passkeys: { rpId: '127.0.0.1' } })).toThrow(
      /127\.0\.0\.1 is an IP address/,
    );
    // The issuer's own address with passkeys on: a warning (password sign-in works there), once, naming the fix.
    const users = { authenticate: async () => null, passkeys: new MemoryPasskeys() };
    for (const issuer of ['http://127.0.0.1:3000', 'http://[::1]:3000', 'https://192.0.2.7']) {
      const warn = vi.fn();
      createSentinel({ ...baseOptions(), issuer, users, logger: { warn } });
      const warned = warn.mock.calls.map(([message]) => String(message)).filter((message) => message.includes('IP address'));
      expect(warned, issuer).toHaveLength(1);
      expect(warned[0]).toContain('Use an issuer on a host name (localhost in development)');
    }
    // Without passkeys, or on a host name, nothing is said.
    for (const options of [
      { issuer: 'http://127.0.0.1:3000', users: { authenticate: users.authenticate } },
      { issuer: 'http://localhost:3000', users },
    ]) {
      const warn = vi.fn();
      createSentinel({ ...baseOptions(), ...options, logger: { warn } });
      expect(warn.mock.calls.some(([message]) => String(message).includes('IP address'))).toBe(false);
    }
  });

  it('refuses an appStore without hasAccount(), or with an AppStore method that is no function', () => {
    // Either would start, then answer every request that reaches the registry with a 500.
    const refused = (appStore: object) => {
      try {
        createSentinel({ ...baseOptions(), apps: [], appStore: appStore as never });
      } catch (error) {
        if (isConfigurationError(error)) return `${error.field}: ${error.message}`;
        throw error;
      }
      return 'accepted';
    };
    const findApp = () => null;
    const hasAccount = () => false;
    expect(refused({ findApp })).toMatch(/^appStore: .*must implement findApp\(\) and hasAccount\(\) \(hasAccount is missing\)$/);
    expect(refused({ hasAccount })).toMatch(/^appStore: .*\(findApp is missing\)$/);
    expect(refused({ findApp, hasAccount, listApps: [] })).toMatch(/^appStore: .*listApps must be a function when given$/);
    expect(refused({ findApp, hasAccount, listApps: undefined, extra: 1 })).toBe('accepted');
    class Registry {
      findApp() {
        return null;
      }
      hasAccount() {
        return false;
      }
    }
    expect(refused(new Registry())).toBe('accepted');
  });

  it('refuses a store that lacks a Store method, or has an optional one that is no function', () => {
    // The check named six methods and looked at take() and swap() only: a store without get() started, then failed
    // every request that reads state with a 500.
    const { get: _get, ...withoutGet } = Object.fromEntries(
      ['get', 'set', 'take', 'delete', 'increment', 'swap'].map((name) => [name, async () => null]),
    );
    const refused = (store: object) => {
      try {
        createSentinel(baseOptions({ store: store as never }));
      } catch (error) {
        if (isConfigurationError(error)) return `${error.field}: ${error.message}`;
        throw error;
      }
      return 'accepted';
    };
    expect(refused(withoutGet)).toMatch(/^store: .*must implement the Store interface .*\(get is missing\)$/);
    expect(refused({ ...withoutGet, get: 'x' })).toMatch(/\(get is missing\)$/);
    expect(refused({ ...withoutGet, get: async () => null, ready: true })).toMatch(/^store: .*ready must be a function when given$/);
    expect(refused({ ...withoutGet, get: async () => null, close: () => {} })).toBe('accepted');
    expect(refused(new MemoryStore())).toBe('accepted');
  });

  it('refuses a consumerClaim that would overwrite a claim the service writes', () => {
    for (const claim of ['cnf', 'aud', 'sub', 'act', 'token_use']) {
      expect(() => createSentinel({ ...baseOptions(), consumerClaim: claim })).toThrow(
        /consumerClaim: must not be a claim the service writes/,
      );
    }
    expect(() => createSentinel({ ...baseOptions(), consumerClaim: 'https://platform.example/consumer_id' })).not.toThrow();
  });
});

describe('registerApp', () => {
  it('returns a UUID client id and a ≥ 256-bit secret that works once registered', async () => {
    const sentinel = createSentinel(baseOptions());
    const result = await sentinel.registerApp({
      accountId: ACCOUNT,
      redirectUris: ['https://n.example/cb'],
      grantTypes: ['client_credentials'],
    });
    expect(result.clientId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Buffer.from(result.clientSecret!, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(result.app.clientSecretHash).toBe(`sha256:${createHash('sha256').update(result.clientSecret!).digest('base64url')}`);
    expect(JSON.stringify(result.app)).not.toContain(result.clientSecret);
    const response = await sentinel.handle({
      method: 'POST',
      path: `/sentinel/api/v2/account/${ACCOUNT}/app/token`,
      query: new URLSearchParams({ state: CONSUMER_UUID }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: result.clientId,
        client_secret: result.clientSecret!,
      }).toString(),
    });
    expect(response?.status).toBe(200);
  });

  it('defaults and validates exactly like an apps entry', async () => {
    const sentinel = createSentinel(baseOptions());
    const { app: registered } = await sentinel.registerApp({ accountId: ACCOUNT, redirectUris: ['https://n.example/cb'] });
    const configured = createSentinel({ ...baseOptions(), apps: [app()] }).config.apps[0];
    expect(registered.grantTypes).toEqual(configured?.grantTypes);
    expect(registered.grantTypes).toEqual(['authorization_code', 'client_credentials', 'refresh_token']);
    expect(registered.tokenEndpointAuthMethod).toBe(configured?.tokenEndpointAuthMethod);
    await expect(sentinel.registerApp({ accountId: '' })).rejects.toMatchObject({ field: 'app.accountId' });
    await expect(sentinel.registerApp({ accountId: ACCOUNT, grantTypes: [] })).rejects.toMatchObject({ field: 'app.grantTypes' });
  });

  it('refuses a scope that is not RFC 6749 scope tokens, in apps and in registerApp, as registration does', async () => {
    // Returned verbatim as the scope of the app's tokens: a control character, a quote or a doubled space in it is
    // a scope no client can parse, and '' names nothing.
    for (const scope of ['read\nwrite', 'read  write', ' read', 'say"hi"', 'a\\b', '', 'café']) {
      expect(fieldOf({ ...baseOptions(), apps: [app({ scope })] })).toBe('apps[0].scope');
      await expect(createSentinel(baseOptions()).registerApp({ accountId: ACCOUNT, scope })).rejects.toMatchObject({
        field: 'app.scope',
      });
    }
    expect(createSentinel({ ...baseOptions(), apps: [app({ scope: 'read write:all urn:x:y' })] }).config.apps[0]?.scope).toBe(
      'read write:all urn:x:y',
    );
  });

  it('refuses invalid registrations with the field named', async () => {
    const sentinel = createSentinel(baseOptions());
    await expect(
      sentinel.registerApp({ accountId: ACCOUNT, redirectUris: ['http://evil.example/cb'], grantTypes: ['authorization_code'] }),
    ).rejects.toMatchObject({
      field: 'app.redirectUris[0]',
    });
  });
});
