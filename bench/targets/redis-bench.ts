/** Helpers of the Redis rows: a bench server's keys live under a prefix of its own and are removed on close. */
import type { Redis } from 'ioredis';

/** Deletes every key under `prefix` (SCAN, never KEYS or FLUSHDB: the Redis may be shared). */
export async function deleteBenchKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.unlink(...keys);
  } while (cursor !== '0');
}
