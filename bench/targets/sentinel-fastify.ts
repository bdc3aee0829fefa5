/**
 * sentinel-idp through its Fastify adapter: `await app.register(toFastify(sentinel))`. Variants: `sync` signs on the
 * main thread (`signing: 'sync'`); `redis` uses a RedisStore with the client options the store recommends, its keys
 * under a prefix of this process, deleted on close.
 */
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { HOST } from '../fixtures.js';
import { benchRedis } from './redis-bench.js';
import { createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget } from './types.js';

interface RedisModule {
  RedisStore: new (client: unknown, options?: { prefix?: string }) => unknown;
  redisClientOptions(): Record<string, unknown>;
}

export async function start(port: number, variant?: string): Promise<RunningTarget> {
  let store: unknown;
  let onClose: (() => Promise<void>) | undefined;
  if (variant === 'redis') {
    const { RedisStore, redisClientOptions } = await importRepoModule<RedisModule>('src/stores/redis.js');
    const redis = benchRedis('sentinel', redisClientOptions());
    await new Promise((resolve, reject) => redis.client.once('ready', resolve).once('error', reject));
    store = new RedisStore(redis.client, { prefix: redis.prefix });
    onClose = redis.close;
  }
  const { toFastify } = await importRepoModule<{ toFastify(s: SentinelLike): FastifyPluginAsync }>('adapters/fastify/index.js');
  const sentinel = await createBenchSentinel(port, variant === 'sync' ? 'sync' : undefined, store);
  const app = Fastify({ logger: false });
  await app.register(toFastify(sentinel));
  await app.listen({ host: HOST, port });
  return {
    close: async () => {
      await app.close();
      await onClose?.();
    },
  };
}
