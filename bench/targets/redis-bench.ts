/** Helpers of the Redis rows: a bench server's keys live under a prefix of its own and are removed on close. */
import { Redis, type RedisOptions } from 'ioredis';

/** A client of the Redis at REDIS_URL (default 127.0.0.1:6379), a key prefix of this process, and its clean-up. */
export function benchRedis(name: string, options: RedisOptions): { client: Redis; prefix: string; close(): Promise<void> } {
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', options);
  const prefix = `bench-${name}:${process.pid}:`;
  return {
    client,
    prefix,
    async close() {
      // SCAN, never KEYS or FLUSHDB: the Redis may be shared.
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await client.unlink(...keys);
      } while (cursor !== '0');
      client.disconnect();
    },
  };
}
