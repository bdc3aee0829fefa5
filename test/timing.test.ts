/**
 * Timing (RFC 6749 §2.3.1 and §10.10): an unknown client, a wrong secret, a missing secret and an app
 * of another account take the same code path at every client-authenticating endpoint. Shown without clocks: node:crypto
 * is wrapped so every SHA-256 digest (createHash or the one-shot hash) and every `timingSafeEqual` is counted, and each failure must cost exactly the
 * same number of both — at least one digest comparison, even when there is no stored hash to compare with.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const counts = vi.hoisted(() => ({ sha256: 0, timingSafeEqual: 0 }));

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const createHash = ((algorithm: string, options?: Parameters<typeof actual.createHash>[1]) => {
    if (algorithm.toLowerCase() === 'sha256') counts.sha256 += 1;
    return actual.createHash(algorithm, options);
  }) as typeof actual.createHash;
  // The one-shot digest counts the same as a Hash object's.
  const hash = ((algorithm: string, data: Parameters<typeof actual.hash>[1], encoding?: Parameters<typeof actual.hash>[2]) => {
    if (algorithm.toLowerCase() === 'sha256') counts.sha256 += 1;
    return actual.hash(algorithm, data, encoding);
  }) as typeof actual.hash;
  const timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    counts.timingSafeEqual += 1;
    return actual.timingSafeEqual(a, b);
  }) as typeof actual.timingSafeEqual;
  return { ...actual, default: { ...actual, createHash, hash, timingSafeEqual }, createHash, hash, timingSafeEqual };
});

const { verifyAppSecret, verifyClientSecret, hashClientSecret } = await import('../src/apps/client-secrets.js');
const { call, FORM, TOKEN_PATH, ACCOUNT_PATH } = await import('./helpers/direct-flow.js');
const { appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel, OTHER_CLIENT_ID, OTHER_SECRET } = await import(
  './helpers/fixtures.js'
);

interface Cost {
  status: number;
  error: unknown;
  sha256: number;
  timingSafeEqual: number;
}

type Sentinel = ReturnType<typeof makeSentinel>;

async function cost(sentinel: Sentinel, path: string, body: string, authorization?: string): Promise<Cost> {
  counts.sha256 = 0;
  counts.timingSafeEqual = 0;
  const headers: Record<string, string> = { 'content-type': FORM };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await call(sentinel, { method: 'POST', path, body, headers });
  return {
    status: response.status,
    error: JSON.parse(response.body ?? '{}').error,
    sha256: counts.sha256,
    timingSafeEqual: counts.timingSafeEqual,
  };
}

const UNKNOWN_CLIENT = '99999999-9999-4999-8999-999999999999';
const WRONG_SECRET = 'wrongsecretwrongsecret0000';

/** The failures compared at one endpoint: the body carries `client_id`/`client_secret` after `base`. */
function failures(base: Record<string, string>): Record<string, { body: string; authorization?: string }> {
  const form = (extra: Record<string, string>): string => new URLSearchParams({ ...base, ...extra }).toString();
  return {
    'unknown client': { body: form({ client_id: UNKNOWN_CLIENT, client_secret: CLIENT_SECRET }) },
    'wrong secret': { body: form({ client_id: CLIENT_ID, client_secret: WRONG_SECRET }) },
    'app of another account': { body: form({ client_id: OTHER_CLIENT_ID, client_secret: OTHER_SECRET }) },
    'unknown client, Basic': { body: form({}), authorization: basic(UNKNOWN_CLIENT, CLIENT_SECRET) },
    'wrong secret, Basic': { body: form({}), authorization: basic(CLIENT_ID, WRONG_SECRET) },
    'app of another account, Basic': { body: form({}), authorization: basic(OTHER_CLIENT_ID, OTHER_SECRET) },
  };
}

const ENDPOINTS: Array<{ name: string; path: string; base: Record<string, string> }> = [
  { name: 'v2 app token', path: appTokenPath(), base: { grant_type: 'client_credentials' } },
  {
    name: 'token (authorization_code)',
    path: TOKEN_PATH,
    base: { grant_type: 'authorization_code', code: 'c'.repeat(43), redirect_uri: 'https://app.example.com/cb' },
  },
  { name: 'token (refresh_token)', path: TOKEN_PATH, base: { grant_type: 'refresh_token', refresh_token: 'r'.repeat(43) } },
  { name: 'revoke', path: `${TOKEN_PATH}/revoke`, base: { token: 't'.repeat(43) } },
  { name: 'introspect', path: `${ACCOUNT_PATH}/token/introspect`, base: { token: 't'.repeat(43) } },
];

describe('client authentication takes the same path whether the client exists or not', () => {
  let sentinel: Sentinel;

  beforeEach(() => {
    sentinel = makeSentinel();
  });

  it('verifyClientSecret: one SHA-256 digest and one timingSafeEqual for a match, a mismatch and no stored hash', () => {
    const stored = hashClientSecret(CLIENT_SECRET);
    const measured = [
      [CLIENT_SECRET, stored],
      [WRONG_SECRET, stored],
      [CLIENT_SECRET, undefined],
      ['', undefined],
      [CLIENT_SECRET, 'not-a-hash'],
    ].map(([presented, hash]) => {
      counts.sha256 = 0;
      counts.timingSafeEqual = 0;
      const ok = verifyClientSecret(presented as string, hash);
      return { ok, sha256: counts.sha256, timingSafeEqual: counts.timingSafeEqual };
    });
    expect(measured.map((entry) => entry.ok)).toEqual([true, false, false, false, false]);
    for (const entry of measured)
      expect({ sha256: entry.sha256, timingSafeEqual: entry.timingSafeEqual }).toEqual({ sha256: 1, timingSafeEqual: 1 });
  });

  it('verifyAppSecret: one digest and the same comparisons for no app, no rotation and up to three retiring secrets', () => {
    const future = Math.floor(Date.now() / 1000) + 3600;
    const app = (retiring: number) => ({
      ...makeSentinel().config.apps[0]!,
      clientSecretHash: hashClientSecret(CLIENT_SECRET),
      retiringSecrets: Array.from({ length: retiring }, (_, at) => ({ hash: hashClientSecret(`old-${at}`), expiresAt: future })),
    });
    const measured = [
      [WRONG_SECRET, null],
      [WRONG_SECRET, app(0)],
      [WRONG_SECRET, app(3)],
      [CLIENT_SECRET, app(3)],
      ['old-2', app(3)],
    ].map(([presented, owner]) => {
      counts.sha256 = 0;
      counts.timingSafeEqual = 0;
      const ok = verifyAppSecret(presented as string, owner as ReturnType<typeof app> | null);
      return { ok, sha256: counts.sha256, timingSafeEqual: counts.timingSafeEqual };
    });
    expect(measured.map((entry) => entry.ok)).toEqual([false, false, false, true, true]);
    for (const entry of measured)
      expect({ sha256: entry.sha256, timingSafeEqual: entry.timingSafeEqual }).toEqual({ sha256: 1, timingSafeEqual: 4 });
    // A retiring secret past its end no longer matches.
    const expired = { ...app(1), retiringSecrets: [{ hash: hashClientSecret('old-0'), expiresAt: 1 }] };
    expect(verifyAppSecret('old-0', expired)).toBe(false);
  });

  for (const endpoint of ENDPOINTS) {
    it(`${endpoint.name}: unknown client, wrong secret and another account's app cost the same digests and comparisons`, async () => {
      const measured: Record<string, Cost> = {};
      for (const [name, attempt] of Object.entries(failures(endpoint.base))) {
        measured[name] = await cost(sentinel, endpoint.path, attempt.body, attempt.authorization);
      }
      for (const [name, entry] of Object.entries(measured)) {
        expect(entry.error, name).toBe('invalid_client');
        expect(entry.timingSafeEqual, `${name}: a digest comparison is made`).toBeGreaterThanOrEqual(1);
        expect(entry.sha256, `${name}: the presented secret is digested`).toBeGreaterThanOrEqual(1);
      }
      const reference = measured['wrong secret']!;
      for (const [name, entry] of Object.entries(measured)) {
        expect({ sha256: entry.sha256, timingSafeEqual: entry.timingSafeEqual }, name).toEqual({
          sha256: reference.sha256,
          timingSafeEqual: reference.timingSafeEqual,
        });
      }
    });
  }

  it('a confidential client that sends no secret costs the same as an unknown client', async () => {
    const path = appTokenPath();
    const missing = await cost(sentinel, path, new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID }).toString());
    const unknown = await cost(
      sentinel,
      path,
      new URLSearchParams({ grant_type: 'client_credentials', client_id: UNKNOWN_CLIENT }).toString(),
    );
    expect(missing.error).toBe('invalid_client');
    expect(unknown.error).toBe('invalid_client');
    expect(missing.timingSafeEqual).toBeGreaterThanOrEqual(1);
    expect({ sha256: missing.sha256, timingSafeEqual: missing.timingSafeEqual }).toEqual({
      sha256: unknown.sha256,
      timingSafeEqual: unknown.timingSafeEqual,
    });
  });

  it('the counters see the service (a success is counted too, so the wrapper is in the path)', async () => {
    const success = await cost(
      sentinel,
      appTokenPath(),
      new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    );
    expect(success.status).toBe(200);
    expect(success.timingSafeEqual).toBeGreaterThanOrEqual(1);
  });
});
