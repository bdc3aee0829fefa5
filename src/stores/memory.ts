/**
 * The embedded default store: bounded LRU caches from lru-cache, one per key prefix, plus a non-evicting area for
 * security state.
 *
 * Why one cache per prefix: a flood of abandoned authorize requests (each leaves an `interaction:` record) must
 * not evict the live device sessions or codes of real users. Each prefix gets its own bound, so the worst a flood
 * can do is evict other pending interactions.
 *
 * Why bytes: an entry count does not bound memory when one entry can be a hundred times another (a long `state`).
 * Each prefix holds at most `maxBytes` (default 64 MiB) and `max` entries, whichever is reached first.
 *
 * Why security state is apart: throttle counters (`throttle:`, `throttle-user:`) and the replay markers of TOTP
 * codes (`totp-used:`, `totp-last:`), DPoP proofs and client assertions must never be forgotten under pressure, or locked usernames
 * unlock and a used one-time code, proof or assertion is accepted a second time. They live in
 * {@link SecurityState}s: no eviction, and when an area is full the write fails, so the request fails closed.
 *
 * Why one security area per prefix: a full area refuses writes, so a shared one would let whoever can write one kind
 * of security state block every other kind. The DPoP proof markers of a public client are written for callers
 * who need nothing but its client_id; sharing a budget with the throttle counters and TOTP markers, they once
 * turned a flood of self-made proofs into a 500 for every sign-in. Each prefix gets `securityMaxBytes` of its own.
 * For the same reason the counters of typed usernames, which anyone can create by typing names, are `throttle-user:`,
 * apart from the address, second-factor, device-code and registration counters of `throttle:`.
 *
 * Why the session index is security state: `user-sessions:` is how ending a user's sessions finds the grants issued
 * through them and the apps to send logout tokens. In the LRU, other users' sign-ins evicted it, and a logout then
 * ended none of the user's grants and told no app. It is written only by sign-ins and code exchanges of real users,
 * one record per user, so its area has a budget of its own, `sessionIndexMaxBytes`, sized for users rather than
 * markers.
 */
import { LRUCache } from 'lru-cache';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { entryBytes } from './memory-size.js';
import { SecurityState, securityAreaOf } from './security-state.js';
import { MemoryJobQueues } from './memory-queue.js';
import type { ClaimedJob, QueuedJob, Store, SwapEntry } from './store.js';

/** Default byte budget of each ordinary key prefix (interactions, sessions, codes, …). */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Default byte budget of each security-state prefix (throttle counters, each kind of replay marker, …). */
export const DEFAULT_SECURITY_MAX_BYTES = 32 * 1024 * 1024;
/** The key prefix of the users' session indexes (src/sessions/session-index.ts), whose budget is `sessionIndexMaxBytes`. */
const SESSION_INDEX_PREFIX = 'user-sessions';
/** The key prefix of typed usernames' throttle counters (`USERNAME_PREFIX` of src/authorize/state/throttle.ts). */
const USERNAME_THROTTLE_PREFIX = 'throttle-user';
/** The key prefix of public clients' push counters (src/par/push-throttle.ts). */
const PUSH_THROTTLE_PREFIX = 'throttle-par';
/** The key prefix of public clients' device authorization counters (src/device/authorization-throttle.ts). */
const DEVICE_THROTTLE_PREFIX = 'throttle-device';
/** The key prefix of the counters of interactions started per address (src/authorize/state/interaction-bound.ts). */
const INTERACTION_THROTTLE_PREFIX = 'throttle-interaction';
/** The key prefix of the counters of successful registrations per address (src/registration/registration-bound.ts). */
const REGISTERED_THROTTLE_PREFIX = 'throttle-registered';
/**
 * Default byte budget of the session index (`user-sessions:`): a user with one session and one grant is charged about
 * 560 bytes, each further session with a grant about 275 (measured on the records the service writes), so 128 MiB
 * keeps about 240 000 such users, or 100 000 with three sessions and grants each. A full budget fails sign-ins
 * closed (500) rather than forget a user's sessions.
 */
export const DEFAULT_SESSION_INDEX_MAX_BYTES = 128 * 1024 * 1024;
/**
 * Key prefixes kept as security state by default: throttle counters (typed usernames' apart), the TOTP replay
 * markers (`totp-used:` used steps, `totp-last:` newest accepted step), the DPoP and client-assertion `jti` markers
 * — evicting a marker would let a used code, proof or assertion in again — the users' session indexes (`user-sessions:`), without
 * which ending a session would leave its grants alive and tell no app, and the revocations of delegated tokens
 * (`revoked-jti:`), evicted, a token its holder revoked would pass again. (A revoked grant is deleted, and the other
 * revoked access tokens are listed in their grant: those need no marker.)
 */
export const DEFAULT_SECURITY_PREFIXES: readonly string[] = Object.freeze([
  'throttle',
  // Typed usernames' counters (src/authorize/state/throttle.ts), which anyone can create: an area of their own.
  USERNAME_THROTTLE_PREFIX,
  // Public clients' pushes per address (src/par/push-throttle.ts), which anyone can create: an area of their own.
  PUSH_THROTTLE_PREFIX,
  // Public clients' device authorizations per address (src/device/authorization-throttle.ts), likewise.
  DEVICE_THROTTLE_PREFIX,
  // Sign-ins started per address (src/authorize/state/interaction-bound.ts): every unauthenticated /authorize, likewise.
  INTERACTION_THROTTLE_PREFIX,
  // Successful dynamic registrations per address (src/registration/registration-bound.ts): an area of their own, so
  // that holders of an initial access token registering from many addresses can never fill the login throttle's.
  REGISTERED_THROTTLE_PREFIX,
  'totp-used',
  'totp-last',
  'dpop-jti',
  'dpop-push-jti',
  'assertion-jti',
  // A trusted issuer's JWT spent once (RFC 7523 §3 item 7): src/trusted-issuers/brand-jwt.ts.
  'brand-jti',
  // Which sessions and grants a user has: what logout and endUserSessions end (src/sessions/session-index.ts).
  SESSION_INDEX_PREFIX,
  // A delegated token its actor revoked (RFC 7009, RFC 8693): src/token/delegated-revocations.ts.
  'revoked-jti',
  // The witness that the replay markers above were not lost (src/stores/replay-epoch.ts).
  'replay-epoch',
  // A non-rotating grant's refresh within the code's retry grace: evicted, a code replay would only be refused, not
  // revoke the grant (src/token/refreshed-mark.ts, RFC 6749 §4.1.2).
  'grant-refreshed',
]);

/**
 * Options of {@link MemoryStore}. The bounds keep memory finite under a flood of authorization requests
 * (RFC 6819 §4.4.1.1 / RFC 9700 §4: resource exhaustion is part of the threat model).
 *
 * @example
 * new MemoryStore({ max: 50_000, maxBytes: 16 * 1024 * 1024 });
 */
export interface MemoryStoreOptions {
  /** Most entries kept per key prefix (`session:`, `interaction:`, …); the least recently used go first. Default 100 000. */
  max?: number;
  /** Most bytes kept per ordinary key prefix, as `entryBytes` charges them; the least recently used go first, and a write of one entry larger is refused. Default 64 MiB. */
  maxBytes?: number;
  /**
   * Byte budget of each security-state prefix, which is never evicted: a write that does not fit its prefix's budget
   * fails, and no other prefix is touched. Default 32 MiB. The session index (`user-sessions:`) has its own,
   * `sessionIndexMaxBytes`; delegated tokens' revocations (`revoked-jti:`) have one such budget per account.
   */
  securityMaxBytes?: number;
  /**
   * Byte budget of the users' session indexes (`user-sessions:`), security state too: a sign-in whose index does not
   * fit fails (500) rather than evict another user's. About 560 bytes per user with one session and one grant.
   * Default 128 MiB (`DEFAULT_SESSION_INDEX_MAX_BYTES`).
   */
  sessionIndexMaxBytes?: number;
  /**
   * Key prefixes (without the colon) kept as security state. Default `DEFAULT_SECURITY_PREFIXES` (every security-state
   * prefix the service writes). A list naming `throttle` keeps `throttle-user`, `throttle-par`, `throttle-device`,
   * `throttle-interaction` and `throttle-registered` too: the usernames' counters were `throttle:user:` before they
   * got an area of their own, and a list written before any of them must not leave them evictable.
   */
  securityPrefixes?: readonly string[];
}

// A misspelled budget (`securityMaxByte`) would leave the default in place; `satisfies` keeps the list complete.
const MEMORY_STORE_OPTION_KEYS = {
  max: true,
  maxBytes: true,
  securityMaxBytes: true,
  sessionIndexMaxBytes: true,
  securityPrefixes: true,
} satisfies KeysOf<MemoryStoreOptions>;

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`MemoryStore: ${name} must be a positive integer`);
  return value;
}

/**
 * A single-process {@link Store}. `take` is atomic because Node runs it without yielding between read and delete,
 * which keeps authorization codes single-use (RFC 6749 §4.1.2) and refresh tokens rotating (RFC 9700 §4.14.2).
 * Use `RedisStore` (`sentinel-idp/redis`) when several instances serve one issuer.
 *
 * @example
 * const sentinel = createSentinel({ issuer, apps, store: new MemoryStore({ max: 50_000 }) });
 */
export class MemoryStore implements Store {
  readonly #max: number;
  readonly #maxBytes: number;
  readonly #securityPrefixes: ReadonlySet<string>;
  readonly #securityMaxBytes: number;
  readonly #sessionIndexMaxBytes: number;
  /** One non-evicting area per security prefix, made on first use. */
  readonly #security = new Map<string, SecurityState>();
  readonly #caches = new Map<string, LRUCache<string, string>>();
  /** Back-channel logout deliveries waiting (never evicted: a queue that is full refuses, see memory-queue.ts). */
  readonly #jobs = new MemoryJobQueues();

  constructor(options: MemoryStoreOptions = {}) {
    assertKnownKeys(options, MEMORY_STORE_OPTION_KEYS, 'MemoryStore');
    this.#max = positiveInteger('max', options.max ?? 100_000);
    this.#maxBytes = positiveInteger('maxBytes', options.maxBytes ?? DEFAULT_MAX_BYTES);
    this.#securityMaxBytes = positiveInteger('securityMaxBytes', options.securityMaxBytes ?? DEFAULT_SECURITY_MAX_BYTES);
    this.#sessionIndexMaxBytes = positiveInteger('sessionIndexMaxBytes', options.sessionIndexMaxBytes ?? DEFAULT_SESSION_INDEX_MAX_BYTES);
    const prefixes = options.securityPrefixes ?? DEFAULT_SECURITY_PREFIXES;
    if (!Array.isArray(prefixes) || prefixes.some((prefix) => typeof prefix !== 'string')) {
      throw new TypeError('MemoryStore: securityPrefixes must be an array of strings');
    }
    const kept = new Set<string>(prefixes);
    if (kept.has('throttle')) {
      kept.add(USERNAME_THROTTLE_PREFIX);
      kept.add(PUSH_THROTTLE_PREFIX);
      kept.add(DEVICE_THROTTLE_PREFIX);
      kept.add(INTERACTION_THROTTLE_PREFIX);
      kept.add(REGISTERED_THROTTLE_PREFIX);
    }
    this.#securityPrefixes = kept;
  }

  #prefix(key: string): string {
    const colon = key.indexOf(':');
    return colon === -1 ? '' : key.slice(0, colon);
  }

  /** The prefix's security area for security keys, else the prefix's evicting cache. */
  #area(key: string): SecurityState | LRUCache<string, string> {
    const prefix = this.#prefix(key);
    if (this.#securityPrefixes.has(prefix)) {
      const name = securityAreaOf(key, prefix);
      let area = this.#security.get(name);
      if (area === undefined) {
        area =
          prefix === SESSION_INDEX_PREFIX
            ? new SecurityState(this.#sessionIndexMaxBytes, prefix, 'sessionIndexMaxBytes')
            : new SecurityState(this.#securityMaxBytes, prefix, 'securityMaxBytes', name);
        this.#security.set(name, area);
      }
      return area;
    }
    let cache = this.#caches.get(prefix);
    if (cache === undefined) {
      cache = new LRUCache<string, string>({
        max: this.#max,
        maxSize: this.#maxBytes,
        sizeCalculation: (value, entryKey) => entryBytes(entryKey, value),
        ttlAutopurge: false,
        // A clock read per TTL check (tens of ns) instead of lru-cache's default: a clock cached for 1 ms behind a
        // new timer each millisecond, one timer per request at the rates a node serves (bench/RESULTS.md).
        ttlResolution: 0,
      });
      this.#caches.set(prefix, cache);
    }
    return cache;
  }

  async get(key: string): Promise<string | null> {
    return this.#area(key).get(key) ?? null;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const ttl = finiteTtl(ttlMs);
    const area = this.#area(key);
    if (area instanceof SecurityState) area.set(key, value, ttl);
    else area.set(key, value, { ttl, size: this.#fitting(key, value) });
  }

  /**
   * The entry's size, handed to lru-cache so it is not computed twice; an error for one over the prefix's `maxBytes`:
   * lru-cache drops it silently with the key's previous value (a swap answered `true` having written nothing).
   */
  #fitting(key: string, value: string): number {
    const bytes = entryBytes(key, value);
    if (bytes <= this.#maxBytes) return bytes;
    throw new Error(`MemoryStore: a ${bytes}-byte entry of "${this.#prefix(key)}:" exceeds maxBytes (${this.#maxBytes})`);
  }

  async take(key: string): Promise<string | null> {
    const area = this.#area(key);
    const value = area.get(key);
    if (value === undefined) return null;
    area.delete(key);
    return value;
  }

  async delete(key: string): Promise<void> {
    this.#area(key).delete(key);
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const area = this.#area(key);
    const current = area.get(key);
    // Not a count (store corruption): an error, as Redis's INCR answers; counted on as NaN it would pass every limit.
    if (current !== undefined && !/^-?\d+$/.test(current)) throw notACounter('increment');
    // Checked on every call, as RedisStore does, not only on the one that starts the window.
    const windowMs = finiteTtl(ttlMs);
    const next = current === undefined ? 1 : Number(current) + 1;
    // Only the first increment starts the window; later ones keep it fixed.
    const ttl = current === undefined ? windowMs : undefined;
    if (area instanceof SecurityState) area.set(key, String(next), ttl);
    else area.set(key, String(next), ttl === undefined ? { noUpdateTTL: true } : { ttl });
    return next;
  }

  /**
   * Gives one slot of a counter back (never starting a counter, window unchanged) and deletes the counter it brings
   * to zero: the login throttle returns a successful attempt's slot. Optional for custom stores (see the README's
   * Store contract).
   *
   * Why a counter at zero is deleted: it holds no failures and no slot in flight, yet kept it would sit in the
   * never-evicted security area until its window ends. Each success from a new IPv6 /64 left one, so one valid
   * account used from many /64s filled `throttle:` and every sign-in was refused. Deleted, the next increment starts
   * a fresh window that ends later, which only throttles more strictly.
   *
   * @example
   * await store.decrement('throttle:ip:203.0.113.7');
   */
  async decrement(key: string): Promise<number> {
    const area = this.#area(key);
    const current = area.get(key);
    if (current === undefined) return 0;
    if (!/^-?\d+$/.test(current)) throw notACounter('decrement');
    const next = Number(current) - 1;
    if (next <= 0) {
      area.delete(key);
      return 0;
    }
    if (area instanceof SecurityState) area.set(key, String(next), undefined);
    else area.set(key, String(next), { noUpdateTTL: true });
    return next;
  }

  /**
   * Atomic multi-key compare-and-set (see {@link Store.swap}). Atomic because every check and write happens without
   * yielding to the event loop.
   *
   * @example
   * const applied = await store.swap([{ key: 'grant:{g1}', expect: null, value: '{}', ttlMs: 60_000 }]);
   */
  async swap(entries: readonly SwapEntry[]): Promise<boolean> {
    const securityWrites = new Map<SecurityState, { key: string; value: string }[]>();
    const sizes: number[] = [];
    for (const [index, entry] of entries.entries()) {
      if (entry.value !== null) ttlOf(entry);
      const area = this.#area(entry.key);
      if ((area.get(entry.key) ?? null) !== entry.expect) return false;
      if (!(area instanceof SecurityState) && entry.value !== null) sizes[index] = this.#fitting(entry.key, entry.value);
      if (area instanceof SecurityState && entry.value !== null) {
        securityWrites.set(area, [...(securityWrites.get(area) ?? []), { key: entry.key, value: entry.value }]);
      }
    }
    // A full security area throws on its write; check them all first so that a refused swap leaves nothing behind.
    for (const [area, writes] of securityWrites) area.assertRoom(writes);
    for (const [index, entry] of entries.entries()) {
      const area = this.#area(entry.key);
      if (entry.value === null) area.delete(entry.key);
      else if (area instanceof SecurityState) area.set(entry.key, entry.value, ttlOf(entry));
      else area.set(entry.key, entry.value, { ttl: ttlOf(entry), size: sizes[index] as number });
    }
    return true;
  }

  /**
   * Adds jobs to a queue in process (see {@link Store.enqueueJobs}): one instance only, and gone with the process.
   *
   * @example
   * await store.enqueueJobs('logout', [{ id: 'j1', payload: '{}', dueAt: Date.now() }]);
   */
  enqueueJobs(queue: string, jobs: readonly QueuedJob[]): Promise<void> {
    return this.#jobs.enqueueJobs(queue, jobs);
  }

  /**
   * Takes due jobs under a lease (see {@link Store.claimJobs}).
   *
   * @example
   * const jobs = await store.claimJobs('logout', Date.now(), 30_000, 16);
   */
  claimJobs(queue: string, now: number, leaseMs: number, max: number): Promise<ClaimedJob[]> {
    return this.#jobs.claimJobs(queue, now, leaseMs, max);
  }

  /**
   * Ends or reschedules a claimed job (see {@link Store.settleJob}).
   *
   * @example
   * await store.settleJob('logout', job.id, job.lease, null);
   */
  settleJob(queue: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean> {
    return this.#jobs.settleJob(queue, id, lease, next);
  }

  /** Number of live entries across all prefixes (for tests and benchmarks). */
  get size(): number {
    let total = 0;
    for (const area of this.#security.values()) total += area.size;
    for (const cache of this.#caches.values()) total += cache.size;
    return total;
  }

  /** Bytes charged across all prefixes, security state included (for tests and benchmarks). */
  get bytes(): number {
    let total = 0;
    for (const area of this.#security.values()) total += area.bytes;
    for (const cache of this.#caches.values()) total += cache.calculatedSize;
    return total;
  }
}

/** A swap entry's TTL as lru-cache wants it; checked before anything is written, so a bad entry changes nothing. */
function ttlOf(entry: SwapEntry): number {
  const ttlMs = entry.ttlMs;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs)) throw new TypeError('MemoryStore: swap needs a finite ttlMs');
  return Math.max(1, Math.ceil(ttlMs));
}

/**
 * A TTL as lru-cache wants it: fractions and values below 1 ms rounded up, as RedisStore does. Not a finite number
 * is refused, as RedisStore refuses it: lru-cache takes `NaN` or `Infinity` for "never expires", and in a security
 * area, which nothing evicts, a counter kept for good is a lockout without end.
 */
function finiteTtl(ttlMs: number): number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs)) throw new TypeError('MemoryStore: ttlMs must be a finite number');
  return Math.max(1, Math.ceil(ttlMs));
}

/**
 * The error of a counter call that found another value, without the key: it reaches `onError` and the host's logs,
 * and counter keys hold client addresses, user ids and digests of assertion ids (RedisStore drops a command's keys
 * from its errors for the same reason).
 */
function notACounter(operation: string): Error {
  return new Error(`MemoryStore: ${operation} found a value that is not a counter`);
}
