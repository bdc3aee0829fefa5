/**
 * Races: 200 parallel redemptions of one authorization code give exactly one token; 200 parallel
 * uses of one refresh token give exactly one success, and reuse then revokes the whole family (RFC 9700 §4.14.2).
 * Both against MemoryStore and RedisStore (REDIS_URL, default redis://127.0.0.1:6379, under a unique prefix; skipped
 * with a reason when unreachable, a failure when SENTINEL_REQUIRE_REDIS=1). The codes come from the real browser
 * flow through `sentinel.handle()`.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type Store } from '../src/index.js';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { exchangeCode, jsonOf, signIn, useRefreshToken } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const PARALLEL = 200;

async function isAccepted(sentinel: Sentinel, token: string): Promise<boolean> {
  try {
    await sentinel.verifyAccessToken(token, { accountId: ACCOUNT });
    return true;
  } catch {
    return false;
  }
}

function raceSuite(storeName: string, makeStore: () => Store): void {
  let sentinel: Sentinel;
  let events: SentinelEvent[];

  beforeAll(() => {
    events = [];
    // No retry grace: the losers of a race and the replay right after it must count as replays.
    sentinel = makeSentinel({ store: makeStore(), retryGrace: 0, onEvent: (event) => events.push(event) });
  });

  it(`${storeName}: ${PARALLEL} parallel redemptions of one code → exactly one token; a replay revokes it`, async () => {
    const { code, verifier } = await signIn(sentinel);
    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => exchangeCode(sentinel, code, verifier)));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    const losers = responses.filter((response) => response.status !== 200);
    expect(losers).toHaveLength(PARALLEL - 1);
    expect(new Set(losers.map((response) => `${response.status} ${jsonOf(response).error}`))).toEqual(new Set(['400 invalid_grant']));
    expect(events.filter((event) => event.type === 'token.issued' && event.grantType === 'authorization_code')).toHaveLength(1);

    const tokens = jsonOf(winners[0]!);
    // One more replay after the race: the tokens the code gave are revoked (RFC 6749 §4.1.2).
    expect((await exchangeCode(sentinel, code, verifier)).status).toBe(400);
    expect(await isAccepted(sentinel, tokens.access_token as string)).toBe(false);
    expect((await useRefreshToken(sentinel, tokens.refresh_token as string)).status).toBe(400);
    expect(events.some((event) => event.type === 'code.replayed')).toBe(true);
  });

  it(`${storeName}: ${PARALLEL} parallel uses of one refresh token → exactly one success; the family is then revoked`, async () => {
    const { code, verifier } = await signIn(sentinel);
    const first = jsonOf(await exchangeCode(sentinel, code, verifier));
    const refreshToken = first.refresh_token as string;
    expect(refreshToken).toBeTruthy();
    const before = events.filter((event) => event.type === 'token.issued').length;

    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => useRefreshToken(sentinel, refreshToken)));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    const losers = responses.filter((response) => response.status !== 200);
    expect(new Set(losers.map((response) => `${response.status} ${jsonOf(response).error}`))).toEqual(new Set(['400 invalid_grant']));
    expect(events.filter((event) => event.type === 'token.issued').length - before).toBe(1);

    // The rotated token presented again is reuse: the whole family goes, including the winner's new tokens.
    const rotated = jsonOf(winners[0]!);
    expect((await useRefreshToken(sentinel, refreshToken)).status).toBe(400);
    expect(events.some((event) => event.type === 'refresh.reused')).toBe(true);
    expect(jsonOf(await useRefreshToken(sentinel, rotated.refresh_token as string)).error).toBe('invalid_grant');
    expect(await isAccepted(sentinel, rotated.access_token as string)).toBe(false);
    expect(await isAccepted(sentinel, first.access_token as string)).toBe(false);
  });
}

describe('races on MemoryStore', () => {
  raceSuite('MemoryStore', () => new MemoryStore());
});

const redis = await sharedRedis('concurrency');

describe.skipIf(redis.skip)('races on RedisStore', () => {
  const prefix = `sentinel-concurrency-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis | undefined;

  beforeAll(() => {
    requireAvailable(redis);
  });

  afterAll(async () => {
    if (client === undefined) return;
    await deleteByPrefix(client, prefix);
    client.disconnect();
  });

  raceSuite('RedisStore', () => {
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    return new RedisStore(client, { prefix });
  });
});

// The options the store recommends pipeline the commands of concurrent requests into one write: the 200 racers'
// reads and scripts then reach Redis in batches, and single use must hold all the same.
describe.skipIf(redis.skip)('races on RedisStore with an auto-pipelining client (redisClientOptions)', () => {
  const prefix = `sentinel-concurrency-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis | undefined;

  beforeAll(async () => {
    requireAvailable(redis);
    // No offline queue in these options: connect before the first command.
    client = new Redis(REDIS_URL, redisClientOptions());
    await new Promise((resolve) => client?.once('ready', resolve));
  });

  afterAll(async () => {
    if (client === undefined) return;
    await deleteByPrefix(client, prefix);
    client.disconnect();
  });

  raceSuite('RedisStore, auto-pipelined', () => new RedisStore(client as Redis, { prefix }));
});
