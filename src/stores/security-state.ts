/**
 * The part of MemoryStore that must never forget: throttle counters and replay markers. If these sat in an LRU
 * with everything else, pressure would evict them: a locked username would unlock after enough failures elsewhere,
 * and a used one-time code or DPoP proof would pass again after enough other markers. So they live in a cache
 * that has a byte budget but no eviction: only their own TTL removes them. When the budget is full the write is
 * refused with an error, which fails the request closed (`500 server_error`, reported to `onError`) instead of
 * silently dropping security state.
 */
import { entryBytes } from './memory-size.js';

/**
 * Thrown when security state cannot be kept because its byte budget is full of live entries: a revocation that
 * must hold (RFC 7009 §2.2) or a brute-force counter (RFC 6749 §10.10) is refused rather than another one forgotten.
 *
 * @example
 * try { await store.increment('throttle:ip:203.0.113.7', 60_000); } catch (error) { if (error instanceof SecurityStateFullError) alert(); }
 */
export class SecurityStateFullError extends Error {
  /** The key prefix whose area is full (`throttle`, `dpop-jti`, …): each security prefix has a budget of its own. */
  readonly prefix: string;

  /**
   * `option`: the MemoryStore option that sets this prefix's budget, named in the message; `area`: the keys the full
   * area holds, when narrower than the prefix (one account's `revoked-jti:`*owner*).
   */
  constructor(budget: number, prefix = '', option = 'securityMaxBytes', area = prefix) {
    super(
      `MemoryStore: the ${budget}-byte budget of the security state "${area}:" is full of live entries; ` +
        `refusing the write rather than forgetting any (raise ${option} or use RedisStore)`,
    );
    this.name = 'SecurityStateFullError';
    this.prefix = prefix;
  }
}

/**
 * Security prefixes whose keys name their owner next (`revoked-jti:`*account digest*`:`*jti*): one area per owner,
 * each with the prefix's budget. Any account's bot can revoke as many of its delegated tokens as it exchanges, and
 * its key-bound client or trusted brand issuer send as many unique assertions (`assertion-jti`, `brand-jti`) as its
 * throttles let through, and its API callers as many DPoP proofs as they make requests (`dpop-jti`, `dpop-push-jti`); with one area for the prefix, one account filling it (a bot in an exchange-and-revoke loop)
 * made every other account's revocations and assertions fail (500). A full area now refuses only its own account's.
 */
const OWNED_PREFIXES: ReadonlySet<string> = new Set(['revoked-jti', 'assertion-jti', 'brand-jti', 'dpop-jti', 'dpop-push-jti']);

/**
 * The name of the security area a key of the security prefix `prefix` is kept in: the prefix, or for an owned prefix
 * the prefix and the owner segment after it (`revoked-jti:`*owner*`:`*jti* → `revoked-jti:`*owner*). A key without an
 * owner segment (written by an earlier version) shares the prefix's own area.
 *
 * @example securityAreaOf('revoked-jti:Qm9i:0b3f', 'revoked-jti') // 'revoked-jti:Qm9i'
 */
export function securityAreaOf(key: string, prefix: string): string {
  if (!OWNED_PREFIXES.has(prefix)) return prefix;
  const end = key.indexOf(':', prefix.length + 1);
  return end === -1 ? prefix : key.slice(0, end);
}

/** One kept entry: its value, when it stops counting (a `performance.now()` reading) and the bytes it is charged. */
interface Kept {
  value: string;
  expiresAt: number;
  bytes: number;
}

/**
 * A TTL map with a byte budget that refuses new entries rather than evicting old ones.
 *
 * A plain Map, not an LRUCache: nothing here is ever evicted, so recency order, the cache's linked list and its
 * size and TTL arrays were bookkeeping for nothing, on the path of every replay marker and throttle count (a brand
 * JWT exchange or DPoP request writes one). Expired entries are dropped when read, and all at once when the budget
 * is reached. Time is `performance.now()`, the monotonic clock lru-cache reads too.
 *
 * @example
 * const state = new SecurityState(32 * 1024 * 1024, 'throttle');
 * state.set('throttle:ip:203.0.113.7', '1', 900_000);
 */
export class SecurityState {
  readonly #budget: number;
  readonly #prefix: string;
  /** The MemoryStore option behind the budget, for the error's message. */
  readonly #option: string;
  /** The keys this area holds ({@link securityAreaOf}), for the error's message. */
  readonly #area: string;
  readonly #entries = new Map<string, Kept>();
  /** Bytes charged to the entries held, live or expired and not yet dropped. */
  #bytes = 0;

  constructor(budget: number, prefix = '', option = 'securityMaxBytes', area = prefix) {
    this.#budget = budget;
    this.#prefix = prefix;
    this.#option = option;
    this.#area = area;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Bytes charged to live and not yet purged entries. */
  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): string | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt < performance.now()) {
      this.#drop(key, entry);
      return undefined;
    }
    return entry.value;
  }

  delete(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#drop(key, entry);
    return true;
  }

  /**
   * Stores `value`; `ttlMs` undefined keeps the entry's current expiry (a counter update inside its window). A
   * counter found expired gets a millisecond's life instead: given none, it would stay for good, here where
   * nothing is evicted (a lasting lockout).
   * @throws SecurityStateFullError when the entry does not fit even after expired entries are dropped.
   */
  set(key: string, value: string, ttlMs: number | undefined): void {
    const now = performance.now();
    const existing = this.#entries.get(key);
    const expiresAt =
      ttlMs !== undefined ? now + ttlMs : existing !== undefined && existing.expiresAt >= now ? existing.expiresAt : now + 1;
    const bytes = entryBytes(key, value);
    this.#reserve(key, bytes);
    const replaced = this.#entries.get(key);
    if (replaced === undefined) {
      this.#entries.set(key, { value, expiresAt, bytes });
    } else {
      this.#bytes -= replaced.bytes;
      replaced.value = value;
      replaced.expiresAt = expiresAt;
      replaced.bytes = bytes;
    }
    this.#bytes += bytes;
  }

  /**
   * Throws unless every one of `writes` fits together, so a multi-key swap that would overflow the area refuses
   * before it writes anything (a swap is all or nothing).
   * @throws SecurityStateFullError naming this area.
   */
  assertRoom(writes: readonly { key: string; value: string }[]): void {
    if (this.#fitsAll(writes)) return;
    this.#purgeStale();
    if (!this.#fitsAll(writes)) throw new SecurityStateFullError(this.#budget, this.#prefix, this.#option, this.#area);
  }

  #fitsAll(writes: readonly { key: string; value: string }[]): boolean {
    const latest = new Map(writes.map((write) => [write.key, write.value]));
    let size = this.#bytes;
    for (const [key, value] of latest) size += entryBytes(key, value) - (this.#entries.get(key)?.bytes ?? 0);
    return size <= this.#budget;
  }

  /** Makes room for an entry of `bytes` under `key` without dropping anything live, or throws. */
  #reserve(key: string, bytes: number): void {
    if (this.#fits(key, bytes)) return;
    this.#purgeStale();
    if (!this.#fits(key, bytes)) throw new SecurityStateFullError(this.#budget, this.#prefix, this.#option, this.#area);
  }

  /** Whether `bytes` under `key` stay within the budget (an entry it replaces gives its bytes back). */
  #fits(key: string, bytes: number): boolean {
    return this.#bytes - (this.#entries.get(key)?.bytes ?? 0) + bytes <= this.#budget;
  }

  #purgeStale(): void {
    const now = performance.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt < now) this.#drop(key, entry);
  }

  #drop(key: string, entry: Kept): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
