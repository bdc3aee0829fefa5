/**
 * The Redis connection of the `keys` commands: a {@link RedisStore} over an ioredis client made from `--redis`.
 * ioredis is an optional peer dependency, loaded here only when a command needs it.
 */
import { RedisStore } from '../stores/redis.js';
import type { Store } from '../stores/store.js';
import { type OptionValues, requireString, UsageError } from './usage.js';

/** An open store and how to close its connection. */
export interface RedisConnection {
  store: Store;
  close(): Promise<void>;
}

/**
 * The `--redis` URL of `command`, refused as a wrong command line (exit 2, like a wrong `--database`) unless it is a
 * redis:// or rediss:// URL. The message never repeats the URL, which may carry a password.
 *
 * @example const url = requireRedisURL(values, 'keys list');
 */
export function requireRedisURL(values: OptionValues, command: string): string {
  const url = requireString(values, 'redis', command);
  if (!/^rediss?:\/\//.test(url)) throw new UsageError('--redis must be a redis:// or rediss:// URL', command);
  return url;
}

/**
 * Connects to `url` (redis:// or rediss://) and wraps the client in a RedisStore with `prefix`. Messages never
 * repeat the URL, which may carry a password.
 *
 * @example
 * const { store, close } = await openRedis('redis://127.0.0.1:6379', 'sentinel:');
 */
export async function openRedis(url: string, prefix: string): Promise<RedisConnection> {
  let Redis: typeof import('ioredis').Redis;
  try {
    ({ Redis } = await import('ioredis'));
  } catch {
    throw new Error('the keys commands need ioredis: npm install ioredis');
  }
  if (!/^rediss?:\/\//.test(url)) throw new Error('--redis must be a redis:// or rediss:// URL');
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {
    // Reported through the failing command; an unhandled 'error' event would crash the CLI with the URL in it.
  });
  try {
    await client.connect();
  } catch {
    client.disconnect();
    throw new Error('could not connect to the Redis given by --redis');
  }
  return {
    store: new RedisStore(client, { prefix }),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
