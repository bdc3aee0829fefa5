/**
 * Shared test fixtures: one account with a confidential app, a public app, a second account, and a factory for
 * sentinels with those apps. Secrets here are test values.
 */
import { CC_ONLY_SECRET, CLIENT_SECRET, OTHER_SECRET, PASSWORD } from './fixture-secrets.js';
import { createSentinel, generatePrivateJWK, type JWK, type Sentinel, type SentinelOptions } from '../../src/index.js';

export { CC_ONLY_SECRET, CLIENT_SECRET, OTHER_SECRET, PASSWORD };

export const ISSUER = 'http://localhost';
/** The origin and the WebAuthn relying party id of passkeys registered against {@link ISSUER}. */
export const PASSKEY_ORIGIN = new URL(ISSUER).origin;
export const PASSKEY_RP_ID = new URL(ISSUER).hostname;
export const ACCOUNT = 'le81823118';
export const OTHER_ACCOUNT = '90210';
export const CLIENT_ID = '6f1c0b7e-3d7a-4c1e-9a51-1f0a2b3c4d5e';
export const REDIRECT_URI = 'https://app.example.com/cb';
export const SECOND_REDIRECT_URI = 'https://app.example.com/other?tenant=a';
export const PUBLIC_CLIENT_ID = '0e7d9c8b-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
export const CC_ONLY_CLIENT_ID = '11111111-2222-4333-8444-555555555555';
export const OTHER_CLIENT_ID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
export const CONSUMER_UUID = '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b';
export const CONSUMER_HEX = `${'a'.repeat(32)}0123456789abcdef0123456789abcdef`;
export const USERNAME = 'alice';
export const USER_ID = 'u-alice';

/** One signing key per test process (generation costs a few ms). */
export const SIGNING_KEY: JWK = generatePrivateJWK('ES256');

/**
 * The hooks of the suite-wide audit sink (test/setup/suite-audit.ts), when it runs: events, log lines and error
 * reports of every sentinel built here are scanned for secrets after each test file.
 */
function suiteAuditHooks(): Partial<SentinelOptions> {
  const sink = (globalThis as Record<symbol, { options(): Partial<SentinelOptions> } | undefined>)[
    Symbol.for('sentinel-idp.test.suiteAuditSink')
  ];
  return sink === undefined ? {} : sink.options();
}

/** The base options: two accounts, a confidential app with two redirect URIs, a public app, a cc-only app. */
export function baseOptions(overrides: Partial<SentinelOptions> = {}): SentinelOptions {
  return {
    issuer: ISSUER,
    keys: [SIGNING_KEY],
    apps: [
      {
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        name: 'Acme Messenger',
        redirectUris: [REDIRECT_URI],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
      {
        accountId: ACCOUNT,
        clientId: PUBLIC_CLIENT_ID,
        tokenEndpointAuthMethod: 'none',
        name: 'Acme Mobile',
        redirectUris: [REDIRECT_URI, SECOND_REDIRECT_URI],
      },
      {
        accountId: ACCOUNT,
        clientId: CC_ONLY_CLIENT_ID,
        clientSecret: CC_ONLY_SECRET,
        redirectUris: [],
        grantTypes: ['client_credentials'],
      },
      {
        accountId: OTHER_ACCOUNT,
        clientId: OTHER_CLIENT_ID,
        clientSecret: OTHER_SECRET,
        redirectUris: ['https://other.example.com/cb'],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
    ],
    users: {
      authenticate: async ({ accountId, username, password }) =>
        (accountId === ACCOUNT || accountId === OTHER_ACCOUNT) && username === USERNAME && password === PASSWORD ? { id: USER_ID } : null,
    },
    logger: { warn: () => {} },
    ...suiteAuditHooks(),
    ...overrides,
  };
}

/** A second user, for a browser that another person signs in to after the first ({@link withBob}). */
export const BOB = { username: 'bob', id: 'u-bob', password: 'bob-password-1234' };

/** The `users` option of {@link baseOptions} with {@link BOB} beside the fixture user. */
export function withBob(): NonNullable<SentinelOptions['users']> {
  return {
    authenticate: async ({ username, password }) =>
      username === USERNAME && password === PASSWORD
        ? { id: USER_ID }
        : username === BOB.username && password === BOB.password
          ? { id: BOB.id }
          : null,
  };
}

/** A sentinel over {@link baseOptions}. */
export function makeSentinel(overrides: Partial<SentinelOptions> = {}): Sentinel {
  return createSentinel(baseOptions(overrides));
}

/** The v2 app token path for an account and consumer; `null` leaves `state` out. */
export function appTokenPath(consumerId: string | null = CONSUMER_UUID, accountId = ACCOUNT): string {
  const base = `/sentinel/api/v2/account/${accountId}/app/token`;
  return consumerId === null ? base : `${base}?state=${encodeURIComponent(consumerId)}`;
}

/** A client_credentials form body. */
export function ccBody(overrides: Record<string, string> = {}): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    ...overrides,
  }).toString();
}

/** An HTTP Basic header value (RFC 6749 §2.3.1 form-encodes both parts first). */
export function basic(clientId: string, secret: string): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}
