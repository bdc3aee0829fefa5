/**
 * A brand JWT's `jti` is single use per account and issuer, as never-evicted security state (the `brand-jti`
 * prefix), on MemoryStore and on RedisStore: a replay is refused on another instance sharing the store, only one of
 * many concurrent presentations of one JWT gets a token, the marker outlives the JWT's remaining life, and on
 * MemoryStore a flood of ordinary entries cannot push it out.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type Store } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, BRAND_ISSUER, botApp, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, CLIENT_SECRET, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const key = await brandKey();
const OTHER_BOT = 'b0b0b0b0-5555-4666-8777-888888888888';

function bearer(sentinel: Sentinel, assertion: string) {
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT }).toString());
}

function cases(name: string, stores: () => [Store, Store], ttlOf?: () => Promise<number[]>): void {
  it(`${name}: a replay on another instance sharing the store is refused`, async () => {
    const [first, second] = stores();
    const one = makeSentinel(exchangeOptions(key, { store: first }));
    const two = makeSentinel(exchangeOptions(key, { store: second }));
    const jwt = await brandJWT(key, { exp: Math.floor(Date.now() / 1000) + 600 });
    expect((await bearer(one, jwt)).status).toBe(200);
    const replay = await bearer(two, jwt);
    expect(replay.status).toBe(400);
    expect(jsonOf(replay)).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/already been used/) });
    if (ttlOf !== undefined) {
      // Remembered until the JWT could no longer pass anyway: its exp, plus the clock tolerance.
      for (const ttl of await ttlOf()) {
        expect(ttl).toBeGreaterThan(590_000);
        expect(ttl).toBeLessThanOrEqual(600_000 + 61_000);
      }
    }
  });

  it(`${name}: of 20 concurrent presentations of one JWT exactly one gets a token`, async () => {
    const [first, second] = stores();
    const instances = [makeSentinel(exchangeOptions(key, { store: first })), makeSentinel(exchangeOptions(key, { store: second }))];
    const jwt = await brandJWT(key);
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, index) => bearer(instances[index % 2] as Sentinel, jwt)));
    expect(statuses.filter((response) => response.status === 200)).toHaveLength(1);
    expect(statuses.filter((response) => response.status === 400)).toHaveLength(19);
  });
}

describe('brand jti on MemoryStore', () => {
  cases('MemoryStore', () => {
    const store = new MemoryStore();
    return [store, store];
  });

  it('a flood of ordinary entries past the store bound does not evict the marker', async () => {
    const store = new MemoryStore({ max: 10 });
    const sentinel = makeSentinel(exchangeOptions(key, { store }));
    const jwt = await brandJWT(key);
    expect((await bearer(sentinel, jwt)).status).toBe(200);
    for (let index = 0; index < 200; index += 1) await store.set(`flood:${index}`, 'x', 600_000);
    expect(await store.get('flood:0')).toBeNull();
    expect((await bearer(sentinel, jwt)).status).toBe(400);
  });
});

describe('brand jti scope', () => {
  it("is per account and issuer: one account's use neither spends nor is spent by another's", async () => {
    const SHARED = 'messaging-platform';
    const otherBot = botApp({ accountId: OTHER_ACCOUNT, clientId: OTHER_BOT });
    const options = exchangeOptions(key);
    const sentinel = makeSentinel({
      ...options,
      apps: [...(options.apps ?? []), otherBot],
      trustedIssuers: [ACCOUNT, OTHER_ACCOUNT].map((accountId) => ({
        accountId,
        issuer: BRAND_ISSUER,
        audience: SHARED,
        jwks: { keys: [key.publicJwk as Record<string, unknown>] },
      })),
    });
    const otherPath = TOKEN_PATH.replace(`/${ACCOUNT}/`, `/${OTHER_ACCOUNT}/`);
    const atOther = (assertion: string) =>
      postForm(
        sentinel,
        otherPath,
        new URLSearchParams({ grant_type: JWT_BEARER, assertion, client_id: OTHER_BOT, client_secret: CLIENT_SECRET }).toString(),
      );
    const jwt = await brandJWT(key, { aud: SHARED });
    expect((await bearer(sentinel, jwt)).status).toBe(200);
    expect((await atOther(jwt)).status).toBe(200);
    expect(jsonOf(await bearer(sentinel, jwt)).error_description).toMatch(/already been used/);
    expect(jsonOf(await atOther(jwt)).error_description).toMatch(/already been used/);
  });
});

describe('brand jti when its area of MemoryStore is full', () => {
  it('refuses new JWTs rather than forgetting a spent one: a replay stays refused', async () => {
    // A tiny budget for each security prefix (a few markers) and for ordinary prefixes (three entries).
    const store = new MemoryStore({ max: 3, securityMaxBytes: 2048 });
    const sentinel = makeSentinel(exchangeOptions(key, { store, onError: () => {} }));
    const first = await brandJWT(key);
    expect((await bearer(sentinel, first)).status).toBe(200);
    const later: number[] = [];
    for (let index = 0; index < 40; index += 1) later.push((await bearer(sentinel, await brandJWT(key))).status);
    // Security state is never evicted: once the area is full, new JWTs are turned away (a 5xx, never a token).
    const accepted = later.findIndex((status) => status !== 200);
    expect(accepted, later.join(',')).toBeGreaterThanOrEqual(0);
    expect(later.slice(accepted).every((status) => status >= 500)).toBe(true);
    const replay = await bearer(sentinel, first);
    expect(replay.status).toBe(400);
    expect(jsonOf(replay).error_description).toMatch(/already been used/);
  });
});

await describeOnSharedRedis('exchange-jti', 'brand jti on RedisStore (two instances)', (newStore, block) => {
  cases(
    'RedisStore',
    () => [newStore(), newStore()],
    async () => {
      const { client, prefix } = block();
      const keys = await client.keys(`${prefix}brand-jti:*`);
      expect(keys.length).toBeGreaterThan(0);
      return Promise.all(keys.map((name) => client.pttl(name)));
    },
  );
});
