/**
 * RedisStore against a real Redis at REDIS_URL (default redis://127.0.0.1:6379).
 *
 * Unreachable Redis: the suite is skipped with a warning, unless SENTINEL_REQUIRE_REDIS=1 (CI), where it fails.
 * Every key this file writes lives under one random per-run prefix and is deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';
import { runStoreContract } from './helpers/store-contract.js';

const redis = await sharedRedis('store-redis');
const skip = redis.skip;

describe.skipIf(skip)('RedisStore (real Redis)', () => {
  const runPrefix = `sentinel-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis;
  /** A client with the options the store recommends, auto-pipelining included: the contract must hold on it too. */
  let pipelined: Redis;
  let stores = 0;

  async function connect(options: RedisOptions): Promise<Redis> {
    const connected = new Redis(REDIS_URL, options);
    connected.on('error', () => {}); // connection errors surface as rejected commands
    await new Promise<void>((resolve, reject) => {
      connected.once('ready', resolve);
      connected.once('end', () => reject(new Error('Redis connection ended before ready')));
    });
    return connected;
  }

  beforeAll(async () => {
    requireAvailable(redis);
    client = await connect({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    pipelined = await connect(redisClientOptions());
  });

  afterAll(async () => {
    if (client === undefined) return;
    await deleteByPrefix(client, runPrefix);
    await client.quit();
    await pipelined?.quit();
  });

  /** A store with a prefix of its own under this run's prefix. */
  function freshStore(options: { commandTimeoutMs?: number } = {}): { store: RedisStore; prefix: string } {
    const prefix = `${runPrefix}${++stores}:`;
    return { store: new RedisStore(client, { prefix, ...options }), prefix };
  }

  runStoreContract('RedisStore', async () => {
    const { store, prefix } = freshStore();
    return { store, cleanup: () => deleteByPrefix(client, prefix) };
  });

  runStoreContract('RedisStore on an auto-pipelining client (redisClientOptions)', async () => {
    const prefix = `${runPrefix}${++stores}:`;
    return { store: new RedisStore(pipelined, { prefix }), cleanup: () => deleteByPrefix(client, prefix) };
  });

  describe('RedisStore specifics', () => {
    it('isolates stores with different prefixes on the same Redis', async () => {
      const a = freshStore().store;
      const b = freshStore().store;
      await a.set('code:k', 'from-a', 60_000);
      await expect(b.get('code:k')).resolves.toBeNull();
      await expect(b.take('code:k')).resolves.toBeNull();
      await b.delete('code:k');
      await expect(a.get('code:k')).resolves.toBe('from-a');

      await b.set('code:k', 'from-b', 60_000);
      await expect(a.take('code:k')).resolves.toBe('from-a');
      await expect(b.get('code:k')).resolves.toBe('from-b');

      await a.increment('throttle:k', 60_000);
      await a.increment('throttle:k', 60_000);
      await expect(b.increment('throttle:k', 60_000)).resolves.toBe(1);
    });

    it('stores under prefix + key with a TTL in milliseconds', async () => {
      const { store, prefix } = freshStore();
      await store.set('session:abc', 'v', 60_000);
      await expect(client.get(`${prefix}session:abc`)).resolves.toBe('v');
      const pttl = await client.pttl(`${prefix}session:abc`);
      // Seconds mistaken for milliseconds would give ~60 000 000; no TTL would give -1.
      expect(pttl).toBeGreaterThan(30_000);
      expect(pttl).toBeLessThanOrEqual(60_000);

      await store.increment('throttle:abc', 60_000);
      const counterTtl = await client.pttl(`${prefix}throttle:abc`);
      expect(counterTtl).toBeGreaterThan(30_000);
      expect(counterTtl).toBeLessThanOrEqual(60_000);
    });

    it("uses 'sentinel:' as the default prefix", async () => {
      const suffix = `${runPrefix}default-prefix`;
      const store = new RedisStore(client);
      try {
        await store.set(suffix, 'v', 60_000);
        await expect(client.get(`sentinel:${suffix}`)).resolves.toBe('v');
      } finally {
        await client.del(`sentinel:${suffix}`);
      }
    });

    it('gives a counter without a TTL one on the next increment, so it can never lock out forever', async () => {
      const { store, prefix } = freshStore();
      await client.set(`${prefix}throttle:stuck`, '5');
      await expect(store.increment('throttle:stuck', 60_000)).resolves.toBe(6);
      const pttl = await client.pttl(`${prefix}throttle:stuck`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(60_000);
    });

    it('rejects with an Error that carries neither keys nor values', async () => {
      const { store, prefix } = freshStore();
      await client.set(`${prefix}throttle:secret-key`, 'secret-value');
      const error = await store.increment('throttle:secret-key', 60_000).then(
        () => {
          throw new Error('increment of a non-integer should have failed');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      const { message } = error as Error;
      expect(message).toMatch(/^RedisStore: EVAL(SHA)? failed/);
      expect(message).toMatch(/not an integer/);
      expect(message).not.toMatch(/secret/);
      expect((error as { command?: unknown }).command).toBeUndefined();
      expect((error as { cause?: unknown }).cause).toBeUndefined();
    });

    it('rejects invalid TTLs before talking to Redis', async () => {
      const { store } = freshStore();
      await expect(store.set('k', 'v', Number.NaN)).rejects.toThrow(TypeError);
      await expect(store.set('k', 'v', Number.POSITIVE_INFINITY)).rejects.toThrow(TypeError);
      await expect(store.increment('k', Number.NaN)).rejects.toThrow(TypeError);
    });

    it('validates its options', () => {
      for (const commandTimeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
        expect(() => new RedisStore(client, { commandTimeoutMs })).toThrow(TypeError);
      }
      expect(() => new RedisStore(client, { prefix: 1 as unknown as string })).toThrow(TypeError);
      expect(() => new RedisStore(null as unknown as Redis)).toThrow(TypeError);
    });

    it('refuses a prefix whose { would swallow the hash tags of the keys, and keeps one that closes its own', async () => {
      // 'idp{' + 'code:{g}' hashes on 'code:{g', 'idp{' + 'grant:{g}' on 'grant:{g': a code exchange could never
      // swap both keys in one slot, so every exchange would fail. An empty '{}' makes Redis hash whole keys alike.
      for (const prefix of ['idp{', 'idp{:', '{}idp:', 'a}{b:']) {
        expect(() => new RedisStore(client, { prefix }), prefix).toThrow(/prefix/);
      }
      const tag = `${runPrefix}tagged`;
      const closed = new RedisStore(client, { prefix: `{${tag}}:` });
      await expect(
        closed.swap([
          { key: 'code:{g1}', expect: null, value: 'c', ttlMs: 60_000 },
          { key: 'grant:{g1}', expect: null, value: 'g', ttlMs: 60_000 },
        ]),
      ).resolves.toBe(true);
      await deleteByPrefix(client, `{${tag}}:`);
    });

    it('works with the time bound disabled', async () => {
      const { store } = freshStore({ commandTimeoutMs: 0 });
      await store.set('session:x', 'v', 60_000);
      await expect(store.take('session:x')).resolves.toBe('v');
    });
  });
});
