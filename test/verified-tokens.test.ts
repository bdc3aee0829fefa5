/**
 * The bearer guard's verified-token cache (src/guard/verified-token-cache.ts): a repeated token skips only its signature check.
 * Every case first makes the token a cache entry, then shows that what can change since is still checked on the hit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import * as jwt from '../src/keys/jws.js';
import { VerifiedTokenCache, verifiedTokenCache } from '../src/guard/verified-token-cache.js';
import { appPresence } from '../src/guard/app-presence.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { call, exchangeCode, jsonOf, postForm, signIn, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';
import { clientKey, dpopProof, keyedSentinel } from './helpers/key-bound.js';
import { kidOf } from './helpers/jwt.js';

const FORM = 'application/x-www-form-urlencoded';
const EXPECTED = { accountId: ACCOUNT, consumerId: CONSUMER_UUID };
const OTHER_CONSUMER = '7a0c2f4e-1b3d-4e5f-8a9b-0c1d2e3f4a5b';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

async function consumerToken(sentinel: Sentinel, headers: Record<string, string> = {}): Promise<string> {
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': FORM, authorization: basic(CLIENT_ID, CLIENT_SECRET), ...headers },
    body: 'grant_type=client_credentials',
  });
  expect(response.status).toBe(200);
  return (JSON.parse(response.body as string) as { access_token: string }).access_token;
}

function cacheOf(sentinel: Sentinel): VerifiedTokenCache {
  const cache = verifiedTokenCache(contextOf(sentinel));
  if (cache === undefined) throw new Error('the cache is on by default');
  return cache;
}

describe.each(['threadpool', 'sync'] as const)('verification %s', (verification) => {
  const sentinelWith = (overrides: Partial<SentinelOptions> = {}): Sentinel => makeSentinel({ verification, ...overrides });

  it('caches a verified token and serves the repeat without verifying its signature again', async () => {
    const sentinel = sentinelWith();
    const token = await consumerToken(sentinel);
    const verify = vi.spyOn(jwt, 'verifyJWTIn');
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(cacheOf(sentinel).has(token)).toBe(true);
    expect(cacheOf(sentinel).size).toBe(1);
    const again = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED);
    expect(again.ok && again.claims.sub).toBe(CONSUMER_UUID);
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('hands every hit its own copy of the claims', async () => {
    const sentinel = sentinelWith();
    const token = await consumerToken(sentinel);
    const first = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED);
    if (!first.ok) throw new Error('refused');
    first.claims.sub = 'decorated by the host';
    const second = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED);
    expect(second.ok && second.claims.sub).toBe(CONSUMER_UUID);
  });

  it('accepts the header spellings RFC 6750 allows on a hit as on a miss, and refuses the others', async () => {
    const sentinel = sentinelWith();
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    for (const header of [`bearer ${token}`, `Bearer  ${token}`, `Bearer ${token} `]) {
      expect((await sentinel.checkBearer(header, EXPECTED)).ok).toBe(true);
    }
    for (const header of [`Bearer ${token}x`, `Bearer ${token},`, `Basic ${token}`, `Bearer${token}`, `Bearer ${token.slice(0, -1)}`]) {
      expect((await sentinel.checkBearer(header, EXPECTED)).ok).toBe(false);
    }
  });

  it('refuses a token whose signature was altered, and caches nothing for it', async () => {
    const sentinel = sentinelWith();
    const token = await consumerToken(sentinel);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect((await sentinel.checkBearer(`Bearer ${flipped}`, EXPECTED)).ok).toBe(false);
    expect(cacheOf(sentinel).size).toBe(0);
  });

  it('refuses a cached token for another consumer or another account', async () => {
    const sentinel = sentinelWith();
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    const otherConsumer = await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: OTHER_CONSUMER });
    expect(otherConsumer.ok).toBe(false);
    expect((await sentinel.checkBearer(`Bearer ${token}`, { accountId: OTHER_ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(false);
    expect(cacheOf(sentinel).size).toBe(1);
  });

  it('refuses a cached user token once its grant is revoked', async () => {
    const sentinel = sentinelWith();
    const { code, verifier } = await signIn(sentinel);
    const tokens = jsonOf(await exchangeCode(sentinel, code, verifier)) as { access_token: string };
    await expect(sentinel.verifyAccessToken(tokens.access_token, { accountId: ACCOUNT })).resolves.toMatchObject({
      sub: expect.any(String),
    });
    expect(cacheOf(sentinel).has(tokens.access_token)).toBe(true);
    const body = new URLSearchParams({ token: tokens.access_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect((await postForm(sentinel, `${TOKEN_PATH}/revoke`, body.toString())).status).toBe(200);
    expect(cacheOf(sentinel).has(tokens.access_token)).toBe(true);
    await expect(sentinel.verifyAccessToken(tokens.access_token, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('the bearer guard refuses a cached token of an app deleted through this instance', async () => {
    const registry = new MemoryAppStore(makeSentinel().config.apps);
    const sentinel = sentinelWith({ apps: [], appStore: registry });
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    expect(cacheOf(sentinel).has(token)).toBe(true);
    // What a deletion through this instance does (registration/manage.ts): the registry and the guard forget the app.
    registry.deleteApp(ACCOUNT, CLIENT_ID);
    appPresence(contextOf(sentinel)).forget(ACCOUNT, CLIENT_ID);
    const refused = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.response.status).toBe(401);
  });

  it('the bearer guard refuses a cached user token once its grant is revoked', async () => {
    const sentinel = sentinelWith();
    const { code, verifier } = await signIn(sentinel);
    const tokens = jsonOf(await exchangeCode(sentinel, code, verifier)) as { access_token: string };
    const bearer = `Bearer ${tokens.access_token}`;
    expect((await sentinel.checkBearer(bearer, { accountId: ACCOUNT })).ok).toBe(true);
    expect(cacheOf(sentinel).has(tokens.access_token)).toBe(true);
    const body = new URLSearchParams({ token: tokens.access_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect((await postForm(sentinel, `${TOKEN_PATH}/revoke`, body.toString())).status).toBe(200);
    // Still cached: the guard's hit path must not answer for a grant-bound token, whose liveness is a store read.
    expect(cacheOf(sentinel).has(tokens.access_token)).toBe(true);
    const refused = await sentinel.checkBearer(bearer, { accountId: ACCOUNT });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.response.status).toBe(401);
  });

  it('refuses a cached token once its key is revoked from the ring', async () => {
    const sentinel = makeSentinel({
      verification,
      keys: undefined,
      store: new MemoryStore(),
      jwksMaxAge: 10,
      accessTokenTtl: 120,
      idTokenTtl: 60,
      keyRotation: {
        encryptionKey: randomBytes(32).toString('base64url'),
        rotateEverySeconds: 600,
        prePublishSeconds: 20,
        refreshSeconds: 10,
      },
    });
    await sentinel.ready();
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    expect(cacheOf(sentinel).has(token)).toBe(true);
    expect(await sentinel.revokeKey(kidOf(token))).toBe(true);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(false);
  });

  it('refuses a cached DPoP-bound token presented without its proof, or as a Bearer token', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key, {}, { verification });
    const htu = `http://localhost${appTokenPath(null)}`;
    const token = await consumerToken(sentinel, { dpop: await dpopProof(key, { htm: 'POST', htu }) });
    const resource = async (proof?: string) => ({
      method: 'GET',
      url: '/api/things',
      headers: { host: 'api.example.com', ...(proof === undefined ? {} : { dpop: proof }) },
    });
    const proof = await dpopProof(key, {
      htm: 'GET',
      htu: 'http://api.example.com/api/things',
      ath: createHash('sha256').update(token).digest('base64url'),
    });
    expect((await sentinel.checkBearer(`DPoP ${token}`, EXPECTED, await resource(proof))).ok).toBe(true);
    expect(cacheOf(sentinel).has(token)).toBe(true);
    expect((await sentinel.checkBearer(`DPoP ${token}`, EXPECTED, await resource())).ok).toBe(false);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED, await resource())).ok).toBe(false);
    // The same proof again is a replay: the jti check runs on the hit as well.
    expect((await sentinel.checkBearer(`DPoP ${token}`, EXPECTED, await resource(proof))).ok).toBe(false);
  });

  it('does not serve an expired token from the cache', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sentinel = sentinelWith({ accessTokenTtl: 120, clockTolerance: 0 });
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    // The cache's own timer runs on the monotonic clock, which this test does not move: only the exp check can refuse.
    vi.setSystemTime(Date.now() + 121_000);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(false);
  });
});

describe('bounds', () => {
  it('stays within its entry and byte limits whatever the number of distinct tokens', async () => {
    const sentinel = makeSentinel({ verifiedTokens: { maxEntries: 100_000, maxBytes: 120_000, maxAgeSeconds: 60 } });
    const cache = cacheOf(sentinel);
    for (let i = 0; i < 400; i++) {
      const token = await consumerToken(sentinel);
      expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
      expect(cache.bytes).toBeLessThanOrEqual(120_000);
    }
    expect(cache.size).toBeGreaterThan(50);
    expect(cache.size).toBeLessThan(400);
  });

  it('holds at most maxEntries and never keeps an entry past its cap', () => {
    const cache = new VerifiedTokenCache({ maxEntries: 1000, maxBytes: 10_000_000, maxAgeSeconds: 1 });
    const key = { kid: 'k' } as never;
    const now = Date.now();
    for (let i = 0; i < 20_000; i++) cache.set(`token-${i}`, { exp: Math.floor(now / 1000) + 3600, sub: `c${i}` }, key, now);
    expect(cache.size).toBe(1000);
    // An entry already expired is not stored at all.
    cache.set('stale', { exp: Math.floor(now / 1000) - 1 }, key, now);
    expect(cache.has('stale')).toBe(false);
    // Past maxAgeSeconds a held entry is a miss, whatever its exp.
    const keys = { byKid: new Map([['k', key]]) } as never;
    expect(cache.get('token-19999', keys, now)).toBeDefined();
    expect(cache.get('token-19999', keys, now + 1000)).toBeUndefined();
  });

  it('can be turned off', async () => {
    const sentinel = makeSentinel({ verifiedTokens: false });
    const token = await consumerToken(sentinel);
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
    expect(verifiedTokenCache(contextOf(sentinel))).toBeUndefined();
  });
});
