/**
 * RedisStore's startup check (src/stores/redis-eviction.ts): `sentinel.ready()` rejects when Redis may evict keys
 * (`maxmemory-policy` other than `noeviction`, on any node of a cluster): an evicted throttle counter or revocation
 * cannot be told from one never written, so the service would fail open without a sign. With `allowEviction` it
 * warns, once, through the service's logger instead, and it warns when the policy cannot be read (CONFIG renamed
 * away). Private redis-servers started here, and a private cluster.
 */
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/index.js';
import { RedisStore, redisClientOptions, redisClusterOptions } from '../src/stores/redis.js';
import { call } from './helpers/direct-flow.js';
import { appTokenPath, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';
import { clusterAvailability, connectCluster, type RunningCluster, startCluster } from './helpers/redis-cluster.js';
import { PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';

const binary = redisServerBinary('hardening-redis-eviction');
const clusterFound = clusterAvailability('hardening-redis-eviction');
const EVICTION = /maxmemory-policy is allkeys-lru.*not noeviction/;

/** What `sentinel.ready()` over `store` rejects with (`undefined`: it resolved). */
async function refusal(store: Store): Promise<string | undefined> {
  const sentinel = makeSentinel({ store, logger: { warn: () => {} } });
  return sentinel.ready().then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
}

/** A sentinel over `store` whose warnings are collected, after `ready()`. */
async function readySentinel(store: Store) {
  const warnings: string[] = [];
  const sentinel = makeSentinel({ store, logger: { warn: (message: string) => warnings.push(message) } });
  await sentinel.ready();
  // Only the store's warnings: the fixtures' static ES256 key has its own (no RS256 key).
  return { sentinel, warnings: warnings.filter((message) => /Redis/.test(message)) };
}

async function issues(sentinel: ReturnType<typeof makeSentinel>): Promise<boolean> {
  const response = await call(sentinel, {
    method: 'POST',
    path: appTokenPath(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  return response.status === 200;
}

function client(server: PrivateRedis): Redis {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
  redis.on('error', () => {});
  return redis;
}

describe.skipIf(binary.skip)('RedisStore.ready() on a single Redis', () => {
  const servers: PrivateRedis[] = [];
  const clients: Redis[] = [];

  beforeAll(() => requireAvailable(binary));

  afterAll(async () => {
    for (const redis of clients) redis.disconnect();
    for (const server of servers) await server.destroy();
  });

  async function start(args: string[]): Promise<Redis> {
    const server = new PrivateRedis(args);
    servers.push(server);
    await server.start();
    const redis = client(server);
    clients.push(redis);
    return redis;
  }

  it('refuses to start when Redis may evict (allkeys-lru), naming the policy and the way out', async () => {
    const redis = await start(['--maxmemory-policy', 'allkeys-lru']);
    const message = await refusal(new RedisStore(redis, { prefix: 'eviction:' }));
    expect(message).toMatch(EVICTION);
    expect(message).toMatch(/allowEviction: true/);
    // The same server once set right: the start goes on.
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await refusal(new RedisStore(redis, { prefix: 'eviction:' }))).toBeUndefined();
  });

  it('with allowEviction, warns once through the logger when Redis may evict, and keeps serving', async () => {
    const redis = await start(['--maxmemory-policy', 'allkeys-lru']);
    const store = new RedisStore(redis, { prefix: 'eviction:', allowEviction: true });
    const { sentinel, warnings } = await readySentinel(store);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(EVICTION);
    expect(warnings[0]).not.toMatch(/ on 127\.0\.0\.1/);
    await sentinel.ready();
    expect(warnings).toHaveLength(1);
    expect(await issues(sentinel)).toBe(true);

    // The same server once set right: a new store says nothing.
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    expect((await readySentinel(new RedisStore(redis, { prefix: 'eviction:' }))).warnings).toEqual([]);
  });

  it('says nothing with noeviction', async () => {
    const redis = await start(['--maxmemory-policy', 'noeviction']);
    const { sentinel, warnings } = await readySentinel(new RedisStore(redis));
    expect(warnings).toEqual([]);
    expect(await issues(sentinel)).toBe(true);
  });

  it('warns that the policy could not be checked when CONFIG is renamed away, and keeps serving', async () => {
    const redis = await start(['--maxmemory-policy', 'noeviction', '--rename-command', 'CONFIG', '']);
    const { sentinel, warnings } = await readySentinel(new RedisStore(redis));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not check the Redis maxmemory-policy .*make sure it is noeviction/);
    expect(await issues(sentinel)).toBe(true);
  });

  it('checks the policy of a client made with redisClientOptions() that is still connecting', async () => {
    const server = new PrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
    servers.push(server);
    await server.start();
    // As the deployment guide sets it up: no offline queue, and `sentinel.ready()` right after the client is made.
    const redis = new Redis(server.url, redisClientOptions());
    redis.on('error', () => {});
    clients.push(redis);
    expect(redis.status).not.toBe('ready');
    expect(await refusal(new RedisStore(redis, { prefix: 'eviction:' }))).toMatch(EVICTION);
  });

  it('RedisStore.ready(warn) checks without a sentinel too', async () => {
    const redis = await start(['--maxmemory-policy', 'volatile-ttl']);
    await expect(new RedisStore(redis).ready(() => {})).rejects.toThrow(/maxmemory-policy is volatile-ttl/);
    const seen: string[] = [];
    await new RedisStore(redis, { allowEviction: true }).ready((message) => seen.push(message));
    expect(seen).toEqual([expect.stringMatching(/maxmemory-policy is volatile-ttl/)]);
  });
});

describe.skipIf(clusterFound.skip)('RedisStore.ready() on a Redis Cluster', () => {
  const prefix = `sentinel-eviction-test:${randomBytes(8).toString('hex')}:`;
  let cluster: RunningCluster | undefined;
  let redis: Cluster;

  beforeAll(async () => {
    requireAvailable(clusterFound);
    cluster = await startCluster();
    redis = await connectCluster(cluster);
  }, 60_000);

  afterAll(async () => {
    if (redis !== undefined) {
      for (const node of redis.nodes('master')) {
        for (const key of await node.keys(`${prefix}*`)) await node.del(key);
      }
      await redis.quit();
    }
    await cluster?.stop();
  });

  it('reads every node: one node with allkeys-lru is named in the warning; all noeviction says nothing', async () => {
    const [first] = redis.nodes('master');
    if (first === undefined) throw new Error('no master');
    const original = (await first.config('GET', 'maxmemory-policy')) as [string, string];
    const before = await readySentinel(new RedisStore(redis, { prefix, allowEviction: true }));
    expect(before.warnings).toEqual(original[1] === 'noeviction' ? [] : [expect.stringMatching(/maxmemory-policy/)]);
    try {
      await first.config('SET', 'maxmemory-policy', 'allkeys-lru');
      expect(await refusal(new RedisStore(redis, { prefix }))).toContain(`allkeys-lru on ${first.options.host}:${first.options.port}`);
      const { sentinel, warnings } = await readySentinel(new RedisStore(redis, { prefix, allowEviction: true }));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(EVICTION);
      expect(warnings[0]).toContain(`allkeys-lru on ${first.options.host}:${first.options.port}`);
      expect(await issues(sentinel)).toBe(true);
    } finally {
      await first.config('SET', 'maxmemory-policy', original[1]);
    }
  });

  it('checks every node of a Cluster made with redisClusterOptions() that is still connecting', async () => {
    const [first] = redis.nodes('master');
    if (first === undefined || cluster === undefined) throw new Error('no master');
    const original = (await first.config('GET', 'maxmemory-policy')) as [string, string];
    const fresh = new Cluster(cluster.nodes, redisClusterOptions());
    fresh.on('error', () => {});
    try {
      await first.config('SET', 'maxmemory-policy', 'allkeys-lru');
      expect(fresh.status).not.toBe('ready');
      expect(await refusal(new RedisStore(fresh, { prefix }))).toMatch(EVICTION);
    } finally {
      fresh.disconnect();
      await first.config('SET', 'maxmemory-policy', original[1]);
    }
  });
});
