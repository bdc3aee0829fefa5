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

/**
 * Declares `title` on the shared Redis; `body` declares its cases and calls `newStore()` inside them (after the
 * block's client exists). Every store it makes shares the block's prefix, as instances of one deployment do.
 *
 * @example await describeOnSharedRedis('race-session', 'RedisStore (two instances)', (newStore) => cases('RedisStore', () => [newStore(), newStore()]));
 */
export async function describeOnSharedRedis(suite: string, title: string, body: (newStore: () => RedisStore) => void): Promise<void> {
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

    body(() => {
      if (client === undefined) throw new Error('the Redis client is made in beforeAll: call newStore() inside a case');
      return new RedisStore(client, { prefix });
    });
  });
}
