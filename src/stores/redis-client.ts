/**
 * Client settings for the ioredis client a `RedisStore` runs on (supported: ioredis 5 and 6, the peer range
 * `^5.0.0 || ^6.0.0`). They make a dead Redis a prompt `500 server_error` and a returning Redis usable again within
 * about a quarter of a second.
 *
 * Why a retry strategy of our own: ioredis' default backs off further with every failed attempt, so after an outage
 * of a few seconds the next attempt may come seconds after Redis is back (measured: 2.0–2.3 s after a 5 s outage).
 * A capped delay keeps reconnecting at a steady pace, costing a refused TCP connect every 200 ms while Redis is down.
 */

/**
 * Longest pause between two reconnection attempts, in milliseconds: how late, at most, the store notices that Redis
 * is back and stops answering `500 server_error` (RFC 6749 §5.2).
 *
 * @example
 * expect(redisRetryStrategy(1000)).toBe(REDIS_RECONNECT_CAP_MS);
 */
export const REDIS_RECONNECT_CAP_MS = 200;

/**
 * ioredis `retryStrategy`: 50 ms after the first failed attempt, growing by 50 ms per attempt up to 200 ms, and never
 * giving up (ioredis stops reconnecting for good when this returns a non-number). Until it reconnects, requests
 * that need the store answer `500 server_error` (RFC 6749 §5.2).
 *
 * @example
 * const redis = new Redis(url, { retryStrategy: redisRetryStrategy });
 */
export function redisRetryStrategy(attempt: number): number {
  return Math.min(Math.max(1, attempt) * 50, REDIS_RECONNECT_CAP_MS);
}

/**
 * The ioredis options of {@link redisClientOptions} (a subset of ioredis' `RedisOptions`, spelled out so that the
 * core never imports ioredis).
 *
 * @example
 * const options: RedisClientOptions = { ...redisClientOptions(), commandTimeout: 500 }; // RFC 6749 §5.2
 */
export interface RedisClientOptions {
  enableOfflineQueue: boolean;
  maxRetriesPerRequest: number;
  commandTimeout: number;
  connectTimeout: number;
  /** Milliseconds to wait before reconnect attempt `attempt`, `redisRetryStrategy` by default. */
  retryStrategy: (attempt: number) => number;
  enableAutoPipelining: boolean;
  /** `false`: a command whose connection dropped before its reply fails instead of running a second time. */
  autoResendUnfulfilledCommands: boolean;
}

/**
 * The ioredis options a `RedisStore` wants, to spread into `new Redis(url, …)` (override any of them after the
 * spread): fail fast while Redis is unreachable (no offline queue, one retry per command, a command timeout for a
 * Redis that accepts connections but does not answer) and reconnect at a steady pace ({@link redisRetryStrategy}).
 * A dead Redis is then a prompt `500 server_error` (RFC 6749 §5.2), never a hung request.
 *
 * Commands in flight when a connection drops are not sent again after the reconnect (ioredis resends them by
 * default): Redis may have run them before the connection went, and the store's commands are not idempotent. Sent
 * twice, an INCR counts one failed sign-in as two and answers a first DPoP proof or client assertion as a replay,
 * and a swap that applied finds its own write and answers that the code or refresh token was already spent. Such a
 * command fails when `commandTimeout` ends it instead (`500 server_error`), and whatever it did stays done once.
 *
 * Auto-pipelining is on: the commands of all requests issued in one turn of the event loop leave in one write, and
 * their replies come back in one read. Each request still waits only for its own commands, and each command stays
 * atomic on the server; what changes is the number of system calls, the largest part of a store call on a busy
 * instance.
 *
 * @example
 * import { Redis } from 'ioredis';
 * import { RedisStore, redisClientOptions } from 'sentinel-idp/redis';
 * const store = new RedisStore(new Redis(process.env.REDIS_URL!, redisClientOptions()), { prefix: 'idp:' });
 */
export function redisClientOptions(): RedisClientOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    retryStrategy: redisRetryStrategy,
    enableAutoPipelining: true,
    autoResendUnfulfilledCommands: false,
  };
}

/**
 * The ioredis Cluster options of {@link redisClusterOptions} (a subset of ioredis' `ClusterOptions`).
 *
 * @example
 * const options: RedisClusterClientOptions = { ...redisClusterOptions(), scaleReads: 'master' };
 */
export interface RedisClusterClientOptions {
  /** The options of each node's connection: {@link redisClientOptions}. */
  redisOptions: RedisClientOptions;
  enableOfflineQueue: boolean;
  /** `0`: a command whose node connection closed fails instead of being sent again (it may have run). */
  retryDelayOnFailover: number;
  enableAutoPipelining: boolean;
}

/**
 * The ioredis `Cluster` options a `RedisStore` on Redis Cluster wants: {@link redisClientOptions} for each node, no
 * offline queue, and no resending of a command whose node connection closed. ioredis gives node connections no
 * reconnection of their own: a closed one fails its commands in flight as "Connection is closed", and by default
 * (`retryDelayOnFailover` 100) the Cluster client sends them again, so an INCR or a swap that ran before the
 * connection went runs twice, as {@link redisClientOptions} explains. Redirections (MOVED, ASK, TRYAGAIN), which
 * Redis answers only to a command it did not run, are still followed.
 *
 * @example
 * import { Cluster } from 'ioredis';
 * import { RedisStore, redisClusterOptions } from 'sentinel-idp/redis';
 * const store = new RedisStore(new Cluster([{ host: 'redis-1', port: 6379 }], redisClusterOptions()), { prefix: 'idp:' });
 */
export function redisClusterOptions(): RedisClusterClientOptions {
  return { redisOptions: redisClientOptions(), enableOfflineQueue: false, retryDelayOnFailover: 0, enableAutoPipelining: true };
}
