/**
 * The options of `RedisStore`, and their checks: every one is refused at construction when misspelled or of the
 * wrong kind, so a store never runs under a default the host did not mean.
 */
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';

/**
 * Options of {@link RedisStore}. `commandTimeoutMs` turns a dead Redis into a prompt `500 server_error` (RFC 6749
 * §5.2) instead of a hung request.
 *
 * @example
 * const options: RedisStoreOptions = { prefix: 'idp:', commandTimeoutMs: 1000 };
 * const store = new RedisStore(client, options);
 */
export interface RedisStoreOptions {
  /**
   * Prepended to every key, so one Redis can hold several issuers (or other applications) without collisions.
   * Default `'sentinel:'`. Stacks with ioredis' own `keyPrefix` option if the client has one. Keep `{` and `}` out of
   * it: a `{` it does not close would take over every key's Redis Cluster hash tag, and is refused.
   *
   * @example
   * new RedisStore(client, { prefix: 'idp-staging:' });
   */
  prefix?: string;
  /**
   * Upper bound, in milliseconds, on how long any store operation may take before it rejects with an `Error`.
   * Default 2000. `0` disables the bound (not recommended).
   *
   * Why: with ioredis' defaults, a command issued while Redis is unreachable waits in the offline queue through
   * many reconnection attempts, and a command sent to a Redis that accepts connections but does not answer (paused,
   * overloaded, half-open TCP) waits forever. Either way the HTTP request behind it would hang. With this bound a
   * dead Redis becomes a prompt `500 server_error` instead.
   *
   * A timed-out command may still reach Redis later (for example from ioredis' offline queue after a reconnect).
   * For `take` that means the record may be consumed without anyone receiving it, which fails safe: the code or
   * refresh token just becomes unusable. A client made with `redisClientOptions()` (no offline queue, no resend) avoids late replays.
   *
   * @example
   * new RedisStore(client, { commandTimeoutMs: 500 });
   */
  commandTimeoutMs?: number;
  /**
   * Start even though Redis may evict keys (`maxmemory-policy` other than `noeviction` on some node): `ready()` then
   * warns instead of rejecting. Default `false`: an evicted throttle counter, revocation or replay marker cannot be
   * told from one never written, so a Redis that may evict them would fail open without a sign, and `ready()` (so
   * `sentinel.ready()`) rejects rather than start on one. A policy that cannot be read (CONFIG renamed or refused, as
   * managed services do) is warned about either way.
   *
   * @example
   * new RedisStore(client, { allowEviction: true }); // a shared cache Redis whose policy the team cannot change yet
   */
  allowEviction?: boolean;
}

/** The options as the store runs with them. */
export interface ResolvedRedisStoreOptions {
  prefix: string;
  timeoutMs: number;
  allowEviction: boolean;
}

/**
 * Checks `options` and fills in the defaults.
 * @throws TypeError naming the option that is misspelled or wrong.
 * @example const { prefix, timeoutMs } = resolveRedisStoreOptions({ prefix: 'idp:' });
 */
export function resolveRedisStoreOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  // A misspelled `prefx` would put every issuer sharing this Redis under the default prefix.
  assertKnownKeys(options, { prefix: true, commandTimeoutMs: true, allowEviction: true } satisfies KeysOf<RedisStoreOptions>, 'RedisStore');
  if (options.allowEviction !== undefined && typeof options.allowEviction !== 'boolean') {
    throw new TypeError('RedisStore: allowEviction must be a boolean');
  }
  const prefix = options.prefix ?? 'sentinel:';
  if (typeof prefix !== 'string') throw new TypeError('RedisStore: prefix must be a string');
  // An unclosed `{` would make `code:{gid}` and `grant:{gid}` hash apart: no code exchange could swap its keys.
  if (prefix.includes('{') && hashTag(prefix) === null) {
    throw new TypeError("RedisStore: prefix must not open a '{' it does not close (keep braces out of it)");
  }
  const timeoutMs = options.commandTimeoutMs ?? 2000;
  // setTimeout silently turns delays above 2^31-1 ms (and Infinity) into 1 ms, which would fail every command.
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0 || timeoutMs > 2_147_483_647) {
    throw new TypeError('RedisStore: commandTimeoutMs must be a number of milliseconds between 0 and 2147483647');
  }
  return { prefix, timeoutMs, allowEviction: options.allowEviction === true };
}

/** The part of a key Redis Cluster hashes: between the first `{` and the next `}`, when not empty. */
export function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open === -1) return null;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : null;
}
