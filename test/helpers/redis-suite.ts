/**
 * A describe block on the shared Redis with a key prefix of its own: skipped with the reason when Redis is absent
 * (failing instead under SENTINEL_REQUIRE_REDIS=1), one client for the block, and every key under the prefix deleted
 * afterwards, so suites that run the same cases on MemoryStore and RedisStore write only the cases.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import { RedisStore } from '../../src/stores/redis.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './redis.js';

/** The block's own Redis client and key prefix, for a case that reads what the stores wrote. */
export interface SharedRedisBlock {
  client: Redis;
  prefix: string;
}

/**
 * Declares `title` on the shared Redis; `body` declares its cases and calls `newStore()` (and `block()`) inside them,
 * after the block's client exists. Every store it makes shares the block's prefix, as instances of one deployment do.
 *
 * @example await describeOnSharedRedis('race-session', 'RedisStore (two instances)', (newStore) => cases('RedisStore', () => [newStore(), newStore()]));
 */
export async function describeOnSharedRedis(
  suite: string,
  title: string,
  body: (newStore: () => RedisStore, block: () => SharedRedisBlock) => void,
): Promise<void> {
  const redis = await sharedRedis(suite);
  describe.skipIf(redis.skip)(title, () => {
    const prefix = `sentinel-${suite}-test:${randomBytes(8).toString('hex')}:`;
    let client: Redis | undefined;

    beforeAll(() => {
      requireAvailable(redis);
      client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    });

    afterAll(async () => {
      if (client === undefined) return;
      await deleteByPrefix(client, prefix);
      client.disconnect();
    });

    const made = (): Redis => {
      if (client === undefined) throw new Error('the Redis client is made in beforeAll: use it inside a hook or case');
      return client;
    };
    body(
      () => new RedisStore(made(), { prefix }),
      () => ({ client: made(), prefix }),
    );
  });
}
