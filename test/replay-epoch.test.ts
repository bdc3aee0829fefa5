/**
 * Replay markers after the store lost its memory (src/stores/replay-epoch.ts): a client assertion, a brand JWT or a
 * DPoP proof spent before the store restarted empty is not accepted again within its lifetime, while credentials
 * made after the loss pass. On MemoryStore a store replaced by an empty one stands for the restart; on a private
 * `redis-server` it is a real one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Sentinel, SentinelOptions, Store } from '../src/index.js';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { REPLAY_EPOCH_KEY } from '../src/stores/replay-epoch.js';
import { advanceClock } from './helpers/clock.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { ASSERTION_TYPE, clientAssertion, clientKey, dpopProof, keyedOptions } from './helpers/key-bound.js';
import { PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';
import { restartableStore } from './helpers/restartable-store.js';

const APP_TOKEN_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`;
const APP_TOKEN_HTU = `http://localhost/sentinel/api/v2/account/${ACCOUNT}/app/token`;
const key = await clientKey();
const brand = await brandKey();

afterEach(() => {
  vi.restoreAllMocks();
});

function sentinelOn(store: Store, overrides: Partial<SentinelOptions> = {}): Sentinel {
  return makeSentinel({ ...keyedOptions(key, {}, { store, clockTolerance: 5 }), ...overrides });
}

function byAssertion(sentinel: Sentinel, assertion: string) {
  return postForm(
    sentinel,
    APP_TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: assertion,
    }).toString(),
  );
}

function byProof(sentinel: Sentinel, proof: string) {
  return postForm(
    sentinel,
    APP_TOKEN_PATH,
    new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    { headers: { dpop: proof } },
  );
}

function byBrandJWT(sentinel: Sentinel, jwt: string) {
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion: jwt, ...BOT }).toString());
}

describe('replay markers lost with the store (MemoryStore replaced by an empty one)', () => {
  it('a client assertion used before the loss is refused after it; one made after the loss passes', async () => {
    const store = restartableStore();
    const sentinel = sentinelOn(store);
    const used = await clientAssertion(key, { exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await byAssertion(sentinel, used)).status).toBe(200);
    expect((await byAssertion(sentinel, used)).status).toBe(401);

    store.restart();
    const replay = await byAssertion(sentinel, used);
    expect(replay.status).toBe(401);
    expect(jsonOf(replay)).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/lost its replay markers/) });
    expect(jsonOf(replay).access_token).toBeUndefined();

    advanceClock(10);
    expect((await byAssertion(sentinel, await clientAssertion(key))).status).toBe(200);
    // Without iat, an exp too far out for an assertion accepted before the loss proves it new as well.
    const now = Math.floor(Date.now() / 1000);
    expect((await byAssertion(sentinel, await clientAssertion(key, { iat: undefined, exp: now + 3600 }))).status).toBe(200);
    // …and one that could have been accepted before the loss is refused.
    const older = await byAssertion(sentinel, await clientAssertion(key, { iat: undefined, exp: now + 300 }));
    expect(jsonOf(older).error_description).toMatch(/lost its replay markers/);
  });

  it('an assertion issued in the future beyond the clock tolerance is refused', async () => {
    const sentinel = sentinelOn(restartableStore());
    const ahead = await byAssertion(sentinel, await clientAssertion(key, { iat: Math.floor(Date.now() / 1000) + 60 }));
    expect(ahead.status).toBe(401);
    expect(jsonOf(ahead).error_description).toMatch(/issued in the future/);
  });

  it('a DPoP proof used before the loss is refused after it; a proof made after the loss passes', async () => {
    const store = restartableStore();
    const sentinel = sentinelOn(store);
    const proof = await dpopProof(key, { htm: 'POST', htu: APP_TOKEN_HTU });
    expect((await byProof(sentinel, proof)).status).toBe(200);

    store.restart();
    const replay = await byProof(sentinel, proof);
    expect(replay.status).toBe(400);
    expect(jsonOf(replay)).toMatchObject({
      error: 'invalid_dpop_proof',
      error_description: expect.stringMatching(/lost its replay markers/),
    });

    advanceClock(10);
    expect((await byProof(sentinel, await dpopProof(key, { htm: 'POST', htu: APP_TOKEN_HTU }))).status).toBe(200);
  });

  it('a brand JWT used before the loss is refused after it; one made after the loss passes', async () => {
    const store = restartableStore();
    const sentinel = makeSentinel(exchangeOptions(brand, { store, clockTolerance: 5 }));
    const jwt = await brandJWT(brand, { exp: Math.floor(Date.now() / 1000) + 600 });
    expect((await byBrandJWT(sentinel, jwt)).status).toBe(200);

    store.restart();
    const replay = await byBrandJWT(sentinel, jwt);
    expect(replay.status).toBe(400);
    expect(jsonOf(replay)).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/lost its replay markers/) });

    advanceClock(10);
    expect((await byBrandJWT(sentinel, await brandJWT(brand))).status).toBe(200);
  });

  it('an instance that starts on the emptied store learns of the loss from one that saw it', async () => {
    const store = restartableStore();
    const witness = sentinelOn(store);
    const used = await clientAssertion(key, { exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await byAssertion(witness, used)).status).toBe(200);

    store.restart();
    // A new instance publishes an epoch that knows of no loss…
    const newcomer = sentinelOn(store);
    expect((await byAssertion(newcomer, await clientAssertion(key))).status).toBe(200);
    expect((await store.get(REPLAY_EPOCH_KEY))?.startsWith('kept.')).toBe(true);
    // …until the witness spends a marker: from then on the newcomer refuses the replay as well.
    expect((await byAssertion(witness, await clientAssertion(key))).status).toBe(401);
    expect((await store.get(REPLAY_EPOCH_KEY))?.startsWith('lost.')).toBe(true);
    const replay = await byAssertion(newcomer, used);
    expect(jsonOf(replay).error_description).toMatch(/lost its replay markers/);
  });

  it('an instance that had spent nothing before the loss still sees it, having read the epoch at startup', async () => {
    const store = restartableStore();
    const busy = sentinelOn(store);
    const idle = sentinelOn(store);
    await Promise.all([busy.ready(), idle.ready()]);
    const used = await clientAssertion(key, { exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await byAssertion(busy, used)).status).toBe(200);

    store.restart();
    // The idle instance spent no marker before the loss: what it read at startup is what makes it a witness.
    const replay = await byAssertion(idle, used);
    expect(replay.status).toBe(401);
    expect(jsonOf(replay).error_description).toMatch(/lost its replay markers/);
    expect((await store.get(REPLAY_EPOCH_KEY))?.startsWith('lost.')).toBe(true);
  });

  it('starts when the store cannot give its replay epoch, and says so', async () => {
    const store = restartableStore();
    await store.set(REPLAY_EPOCH_KEY, 'garbage', 60_000);
    const warnings: string[] = [];
    await sentinelOn(store, { logger: { warn: (message) => warnings.push(message) } }).ready();
    expect(warnings.join('\n')).toMatch(/could not read the store's replay-epoch:current at startup \(.*not a replay epoch/);
  });

  it('a fresh service on an empty store refuses nothing, and a stored epoch it cannot read fails closed', async () => {
    const store = restartableStore();
    const errors: unknown[] = [];
    const sentinel = sentinelOn(store, { onError: (error) => errors.push(error) });
    expect((await byAssertion(sentinel, await clientAssertion(key))).status).toBe(200);

    await store.set(REPLAY_EPOCH_KEY, 'garbage', 60_000);
    const response = await byAssertion(sentinel, await clientAssertion(key));
    expect(response.status).toBe(500);
    expect(jsonOf(response).access_token).toBeUndefined();
    expect(String(errors.at(-1))).toMatch(/not a replay epoch/);
  });
});

const binary = redisServerBinary('replay-epoch');

describe.skipIf(binary.skip)('replay markers lost with a private Redis restarted empty', () => {
  const redis = new PrivateRedis();
  let client: Redis;

  beforeAll(async () => {
    requireAvailable(binary);
    await redis.start();
    client = new Redis(redis.url, { ...redisClientOptions(), lazyConnect: false });
    client.on('error', () => {});
    await new Promise<void>((resolve) => client.once('ready', () => resolve()));
  }, 30_000);

  afterAll(async () => {
    client?.disconnect();
    await redis.destroy();
  });

  it('refuses a client assertion spent before the restart, and takes a new one afterwards', async () => {
    const sentinel = sentinelOn(new RedisStore(client, { prefix: 'replay-epoch:', commandTimeoutMs: 500 }));
    const used = await clientAssertion(key, { exp: Math.floor(Date.now() / 1000) + 300 });
    expect((await byAssertion(sentinel, used)).status).toBe(200);

    await redis.kill();
    await redis.start(); // empty: no persistence
    const replay = await (async () => {
      for (let attempt = 0; ; attempt++) {
        const response = await byAssertion(sentinel, used);
        if (response.status !== 500 || attempt > 100) return response;
        await sleep(20); // reconnecting
      }
    })();
    expect(replay.status).toBe(401);
    expect(jsonOf(replay).error_description).toMatch(/lost its replay markers/);

    advanceClock(10);
    expect((await byAssertion(sentinel, await clientAssertion(key))).status).toBe(200);
  }, 30_000);
});
