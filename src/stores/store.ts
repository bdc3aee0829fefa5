/**
 * The persistence contract. Everything the service remembers between requests lives behind this interface:
 *
 * | key prefix      | value (JSON)                                   | TTL                         |
 * |-----------------|------------------------------------------------|-----------------------------|
 * | `interaction:`  | validated authorize request + CSRF secret       | 10 min                      |
 * | `session:`      | device session (user, account, auth time)       | idle / absolute timeout     |
 * | `code:`         | authorization code record (hashed key)          | code lifetime (≤ 600 s)     |
 * | `code-used:`    | grant id of a redeemed code (replay detection)  | access/refresh lifetime     |
 * | `refresh:`      | refresh token record (hashed key)               | idle / absolute lifetime    |
 * | `grant:`        | grant (refresh family) state                    | absolute lifetime           |
 * | `revoked:`      | revoked grant or token id                       | access-token lifetime       |
 * | `throttle:`     | failure counter                                 | throttle window             |
 * | `keyring:`      | `keyRotation` key ring (private keys sealed)     | none (ten years)            |
 * | `keyring-lock:` | writer lock of the key ring (`increment`)       | 10 s                        |
 *
 * Keys are opaque strings; secrets (codes, session ids, refresh tokens) appear in keys only as SHA-256 digests.
 * The atomic `take` is what makes codes single-use (RFC 6749 §4.1.2) and refresh-token rotation detect reuse
 * (RFC 9700 §4.14.2), including across instances.
 *
 * @example
 * // A store over a key/value service with TTLs and an atomic get-and-delete:
 * const store: Store = {
 *   get: (key) => kv.get(key),
 *   set: (key, value, ttlMs) => kv.set(key, value, { px: ttlMs }),
 *   take: (key) => kv.getdel(key),
 *   delete: (key) => kv.del(key).then(() => undefined),
 *   increment: (key, ttlMs) => kv.incrWithWindow(key, ttlMs),
 * };
 * createSentinel({ issuer, apps, store });
 */
export interface Store {
  /** The value stored under `key`, or `null` when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Stores `value` under `key` for `ttlMs` milliseconds, replacing any previous value. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Atomically reads and deletes `key`: of any number of concurrent calls (across instances sharing the store),
   * exactly one receives the value. This is what makes authorization codes and refresh tokens single-use.
   */
  take(key: string): Promise<string | null>;
  /** Removes `key`; absent keys are fine. */
  delete(key: string): Promise<void>;
  /**
   * Atomically adds one to the counter under `key` and returns the new count. The first increment starts a
   * window of `ttlMs`; later increments do not extend it (fixed-window throttling).
   */
  increment(key: string, ttlMs: number): Promise<number>;
}
