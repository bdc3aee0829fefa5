/**
 * The Redis connection of the `keys` commands: a {@link RedisStore} over an ioredis client made from `--redis`.
 * ioredis is an optional peer dependency, loaded here only when a command needs it.
 */
import { RedisStore } from '../stores/redis.js';
import type { Store } from '../stores/store.js';
import type { CLIIO } from './io.js';
import { carriesPassword, optionalString, type OptionValues, requireString, UsageError } from './usage.js';

/** An open store and how to close its connection. */
export interface RedisConnection {
  store: Store;
  close(): Promise<void>;
}

/**
 * The database `url` names: its path (`/2`) or, without one, its `db` query parameter (ioredis reads both); 0 with
 * neither. `null` when that is not a non-negative integer: ioredis would send it to SELECT anyway, and a refused
 * SELECT during its handshake goes unreported while the commands run on database 0 (or the reply kills the process).
 */
function databaseOf(url: URL): number | null {
  const path = url.pathname === '' || url.pathname === '/' ? undefined : url.pathname.slice(1);
  const given = path ?? url.searchParams.get('db') ?? '0';
  return /^\d+$/.test(given) && Number.isSafeInteger(Number(given)) ? Number(given) : null;
}

function parsedURL(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * Environment variable read for the Redis URL when `--redis` is left out: a URL with a password then stays out of
 * the command line, which other users see in process lists and which shell history keeps.
 */
export const REDIS_URL_ENV = 'SENTINEL_REDIS_URL';

/**
 * The Redis URL of `command`: `--redis`, else {@link REDIS_URL_ENV} from `env`. Refused as a wrong command line
 * (exit 2, like a wrong `--database`) unless it is a redis:// or rediss:// URL that parses, whose database, if it
 * names one, is a non-negative integer (`redis://host:6379/2`). The message never repeats the URL, which may carry a
 * password.
 *
 * @example const url = requireRedisURL(values, 'keys list', io.env);
 */
export function requireRedisURL(values: OptionValues, command: string, env: CLIIO['env']): string {
  const fromEnvironment = env[REDIS_URL_ENV];
  const source = values.redis === undefined && fromEnvironment !== undefined && fromEnvironment !== '' ? REDIS_URL_ENV : '--redis';
  if (source === '--redis' && values.redis === undefined) throw new UsageError(`--redis is required (or set ${REDIS_URL_ENV})`, command);
  const url = source === REDIS_URL_ENV ? (fromEnvironment as string) : requireString(values, 'redis', command);
  if (!/^rediss?:\/\//.test(url)) throw new UsageError(`${source} must be a redis:// or rediss:// URL`, command);
  const parsed = parsedURL(url);
  // One that does not parse (a port past 65535, an unclosed "[") is the command line's mistake too: openRedis could
  // only fail it later as the URL parser's bare "Invalid URL", naming neither the option nor the exit code's reason.
  if (parsed === undefined) throw new UsageError(`${source} is not a valid URL`, command);
  if (databaseOf(parsed) === null) {
    throw new UsageError(`${source} must name its database as /<number> (a non-negative integer), or not at all`, command);
  }
  return url;
}

/**
 * The `--prefix` of `command` (default `sentinel:`), refused as a wrong command line (exit 2) when the RedisStore of
 * the instances could not have it: checked by the store's own rule, before anything connects.
 *
 * @example const prefix = requireRedisPrefix(values, 'keys list');
 */
export function requireRedisPrefix(values: OptionValues, command: string): string {
  const prefix = optionalString(values, 'prefix', command) ?? 'sentinel:';
  try {
    // The constructor only checks and keeps its arguments: the client is never used.
    new RedisStore({} as never, { prefix });
  } catch (error) {
    const problem = error instanceof Error ? error.message.replace(/^RedisStore: prefix /, '') : 'is not one RedisStore takes';
    throw new UsageError(`--prefix ${problem}`, command);
  }
  return prefix;
}

/**
 * Tells the operator, once per run, that the `--redis` argument carries a password (which is not repeated):
 * {@link REDIS_URL_ENV} keeps it out of the process list.
 * @example warnPasswordInRedisArgument(values, io);
 */
export function warnPasswordInRedisArgument(values: OptionValues, io: CLIIO): void {
  const given = values.redis;
  if (typeof given !== 'string' || !carriesPassword(given)) return;
  io.stderr(
    `sentinel-idp: warning: the password in --redis is visible to other users in process lists and kept in shell history; set ${REDIS_URL_ENV} instead\n`,
  );
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
  const target = parsedURL(url);
  if (target === undefined) throw new Error('--redis is not a valid URL');
  const database = databaseOf(target);
  if (database === null) throw new Error('--redis must name its database as /<number> (a non-negative integer), or not at all');
  // The database is selected below, where a refusal is seen: ioredis selects it during its handshake and reports a
  // refusal only as an 'error' event, leaving the connection on database 0.
  target.pathname = '';
  target.searchParams.delete('db');
  const client = new Redis(target.href, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {
    // Reported through the failing command; an unhandled 'error' event would crash the CLI with the URL in it.
  });
  // Made before connecting (lazyConnect: no socket yet), so a prefix it refuses leaves no connection open.
  const store = new RedisStore(client, { prefix });
  try {
    await client.connect();
  } catch {
    client.disconnect();
    throw new Error('could not connect to the Redis given by --redis');
  }
  if (database !== 0) {
    try {
      await client.select(database);
    } catch {
      client.disconnect();
      throw new Error(`the Redis given by --redis refused to select database ${database}`);
    }
  }
  return {
    store,
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
