/**
 * The persistence contract. Everything the service remembers between requests lives behind this interface; every
 * key, its value, TTL and owner are listed in docs/ARCHITECTURE.md#stored-records.
 *
 * Keys are opaque strings; secrets (codes, session ids, refresh tokens) appear in keys only as SHA-256 digests.
 * The atomic `take` ends a one-time record that nothing else has to change with (a pending interaction, a session at
 * logout, a pushed request, a passkey challenge); the atomic multi-key {@link Store.swap} is what makes authorization
 * codes single-use (RFC 6749 §4.1.2) and refresh tokens rotate with reuse detection (RFC 9700 §4.14.2) in one step:
 * either the old credential is spent *and* the new state written, or nothing changed (docs/store-design.md).
 *
 * @example
 * // A store over a key/value service with TTLs and an atomic get-and-delete:
 * const store: Store = {
 *   get: (key) => kv.get(key),
 *   set: (key, value, ttlMs) => kv.set(key, value, { px: ttlMs }),
 *   take: (key) => kv.getdel(key),
 *   delete: (key) => kv.del(key).then(() => undefined),
 *   increment: (key, ttlMs) => kv.incrWithWindow(key, ttlMs),
 *   swap: (entries) => kv.transaction(entries), // compare every `expect`, then write every `value`, atomically
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
   * exactly one receives the value. It ends one-time records on their own (pending interactions, sessions at
   * logout, logout confirmations, pushed requests, passkey challenges); codes and refresh tokens are spent by
   * {@link Store.swap} instead, because their new grant state must be written in the same step.
   */
  take(key: string): Promise<string | null>;
  /** Removes `key`; absent keys are fine. */
  delete(key: string): Promise<void>;
  /**
   * Atomically adds one to the counter under `key` and returns the new count. The first increment starts a
   * window of `ttlMs`; later increments do not extend it (fixed-window throttling).
   */
  increment(key: string, ttlMs: number): Promise<number>;
  /**
   * Atomic multi-key compare-and-set. When every entry's key currently holds exactly its `expect` (`null`: the key
   * is absent), every entry's `value` is written (`null`: the key is deleted) and the result is `true`; otherwise
   * nothing changes and the result is `false`. Of concurrent swaps expecting the same value, at most one applies.
   *
   * All keys of one swap share one hash tag (the part between the first `{` and `}`), so that on Redis Cluster they
   * live in one slot and one script can change them together.
   */
  swap(entries: readonly SwapEntry[]): Promise<boolean>;
  /**
   * Optional: atomically gives one slot of a counter back (never starting a counter, window unchanged) and returns
   * the new count; a counter it brings to zero is deleted (`0` is returned), so that successes leave no counters
   * behind, and the next increment starts a new window. The login and registration-token throttles return a
   * successful attempt's slot with it (MemoryStore and RedisStore have it). Without it, a successful login clears its username counter instead and
   * address counters keep their slots, as does a right user code of the device flow on both of its counters, which
   * only errs toward throttling sooner.
   */
  decrement?(key: string): Promise<number>;
  /**
   * Optional: checks the backing service once at startup and tells `warn` what could lose the service's state
   * (RedisStore: an eviction policy other than `noeviction`). `sentinel.ready()` awaits it; it should not reject.
   */
  ready?(warn: (message: string) => void): Promise<void>;
  /**
   * Optional (with {@link Store.claimJobs} and {@link Store.settleJob}): adds jobs to a durable queue, each due at
   * `dueAt` (milliseconds since the epoch). A job whose `id` is already queued is left as it is unless it is due later
   * than the new one: adding the same job twice (a retried request) queues it once, and a claimed job (due when its
   * lease ends) added again is put back with the new payload and due time, so its claimer's settle no longer applies
   * and what was queued during its attempt gets one of its own. Back-channel logout deliveries wait here, so an instance that
   * restarts or dies loses none (docs/guides/sessions-and-logout.md). MemoryStore and RedisStore have the three;
   * without them the service keeps its deliveries in process.
   */
  enqueueJobs?(queue: string, jobs: readonly QueuedJob[]): Promise<void>;
  /**
   * Optional: atomically takes up to `max` jobs due at `now` and pushes each one's due time to `now + leaseMs`, so
   * of concurrent claimers (on any instance) one gets each job, and a job whose claimer dies comes due again when
   * its lease ends (at-least-once). Each job comes with its `lease`, the due time the claim set.
   */
  claimJobs?(queue: string, now: number, leaseMs: number, max: number): Promise<ClaimedJob[]>;
  /**
   * Optional: ends a claimed job (`next` `null`) or puts it back with a new payload and due time (a retry). Applies
   * only while the job still holds the `lease` of the claim (else another instance has claimed it since), and
   * resolves whether it did.
   */
  settleJob?(queue: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean>;
}

/**
 * One job of a {@link Store.enqueueJobs} queue.
 *
 * @example
 * const job: QueuedJob = { id: 'a1b2', payload: '{"clientId":"client-a"}', dueAt: Date.now() };
 */
export interface QueuedJob {
  /** Unique within its queue: the same id queued twice is one job. */
  id: string;
  payload: string;
  /** Milliseconds since the epoch. */
  dueAt: number;
}

/**
 * A job as {@link Store.claimJobs} hands it out: with the lease its claimer settles it under.
 *
 * @example
 * for (const job of await store.claimJobs!('logout', Date.now(), 30_000, 16)) await store.settleJob!('logout', job.id, job.lease, null);
 */
export interface ClaimedJob {
  id: string;
  payload: string;
  /** The due time the claim set (milliseconds since the epoch): the claim's fencing token. */
  lease: number;
}

/**
 * One key of a {@link Store.swap}: the compare-and-set step behind single-use codes (RFC 6749 §4.1.2) and refresh
 * rotation with reuse detection (RFC 9700 §4.14.2).
 *
 * @example
 * const entry: SwapEntry = { key: 'grant:{g1}', expect: before, value: after, ttlMs: 3_600_000 };
 */
export interface SwapEntry {
  key: string;
  /** The value the key must hold for the swap to apply; `null` requires the key to be absent. */
  expect: string | null;
  /** The value to leave under the key; `null` deletes it. */
  value: string | null;
  /** Lifetime of `value` in milliseconds (required unless `value` is `null`). */
  ttlMs?: number | undefined;
}
