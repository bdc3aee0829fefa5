/**
 * The embedded default store: bounded LRU caches from lru-cache, one per key prefix.
 *
 * Why one cache per prefix: a flood of abandoned authorize requests (each leaves an `interaction:` record) must
 * not evict the live device sessions or codes of real users. Each prefix gets its own bound, so the worst a flood
 * can do is evict other pending interactions.
 */
import { LRUCache } from 'lru-cache';
import type { Store, SwapEntry } from './store.js';

/**
 * Options of {@link MemoryStore}. The bound keeps memory finite under a flood of authorization requests
 * (RFC 6819 §4.4.1.1 / RFC 9700 §4: resource exhaustion is part of the threat model).
 *
 * @example
 * new MemoryStore({ max: 50_000 });
 */
export interface MemoryStoreOptions {
  /** Most entries kept per key prefix (`session:`, `interaction:`, …); the least recently used go first. Default 100 000. */
  max?: number;
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
  readonly #caches = new Map<string, LRUCache<string, string>>();

  constructor(options: MemoryStoreOptions = {}) {
    const max = options.max ?? 100_000;
    if (!Number.isInteger(max) || max < 1) throw new TypeError('MemoryStore: max must be a positive integer');
    this.#max = max;
  }

  #cache(key: string): LRUCache<string, string> {
    const colon = key.indexOf(':');
    const prefix = colon === -1 ? '' : key.slice(0, colon);
    let cache = this.#caches.get(prefix);
    if (cache === undefined) {
      cache = new LRUCache<string, string>({ max: this.#max, ttlAutopurge: false });
      this.#caches.set(prefix, cache);
    }
    return cache;
  }

  async get(key: string): Promise<string | null> {
    return this.#cache(key).get(key) ?? null;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#cache(key).set(key, value, { ttl: Math.max(1, Math.ceil(ttlMs)) });
  }

  async take(key: string): Promise<string | null> {
    const cache = this.#cache(key);
    const value = cache.get(key);
    if (value === undefined) return null;
    cache.delete(key);
    return value;
  }

  async delete(key: string): Promise<void> {
    this.#cache(key).delete(key);
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const cache = this.#cache(key);
    const current = cache.get(key);
    if (current === undefined) {
      cache.set(key, '1', { ttl: Math.max(1, Math.ceil(ttlMs)) });
      return 1;
    }
    const next = Number(current) + 1;
    cache.set(key, String(next), { noUpdateTTL: true });
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
    for (const entry of entries) {
      if (entry.value !== null) ttlOf(entry);
      if ((this.#cache(entry.key).get(entry.key) ?? null) !== entry.expect) return false;
    }
    for (const entry of entries) {
      if (entry.value === null) this.#cache(entry.key).delete(entry.key);
      else this.#cache(entry.key).set(entry.key, entry.value, { ttl: ttlOf(entry) });
    }
    return true;
  }

  /** Number of live entries across all prefixes (for tests and benchmarks). */
  get size(): number {
    let total = 0;
    for (const cache of this.#caches.values()) total += cache.size;
    return total;
  }
}

/** A swap entry's TTL as lru-cache wants it; checked before anything is written, so a bad entry changes nothing. */
function ttlOf(entry: SwapEntry): number {
  const ttlMs = entry.ttlMs;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs)) throw new TypeError('MemoryStore: swap needs a finite ttlMs');
  return Math.max(1, Math.ceil(ttlMs));
}
