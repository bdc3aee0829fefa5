/**
 * sentinel-idp through its Fastify adapter with a RedisStore (the client options the store recommends) at REDIS_URL
 * (default redis://127.0.0.1:6379), under a key prefix of its own per server process, deleted on close.
 */
import { Redis } from 'ioredis';
import { deleteBenchKeys } from './redis-bench.js';
import { importRepoModule } from './sentinel-common.js';
import { startFastify } from './sentinel-fastify.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'sentinel-idp, Fastify adapter, RedisStore', kind: 'sentinel' };

interface RedisModule {
  RedisStore: new (client: Redis, options?: { prefix?: string }) => unknown;
  redisClientOptions(): Record<string, unknown>;
}

export async function start(port: number): Promise<RunningTarget> {
  const { RedisStore, redisClientOptions } = await importRepoModule<RedisModule>('src/stores/redis.js');
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', redisClientOptions());
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  const prefix = `bench-sentinel:${process.pid}:`;
  return startFastify(port, undefined, new RedisStore(client, { prefix }), async () => {
    await deleteBenchKeys(client, prefix);
    client.disconnect();
  });
}
