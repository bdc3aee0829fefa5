/**
 * The bounded, short-lived cache in front of the app table. Token requests look an app up on every call; without
 * the cache each would pay a database round trip.
 *
 * Freshness: every change to the registry sends a PostgreSQL NOTIFY that every instance LISTENs to, and evicts the
 * app at once. The cache is used only while that listening connection is up; while it is down (or before it is up)
 * every lookup goes to the database. A listening connection that dies silently is found by the listener's heartbeat
 * (`listener-heartbeat.ts`) within seconds; the TTL bounds staleness should a notification be lost any other way. A
 * generation counter stops a lookup that raced a notification, or the listener coming up, from caching what it read
 * before it.
 */
import { LRUCache } from 'lru-cache';
import type { App } from '../apps/app.js';
import type { TrustedIssuer } from '../trusted-issuers/trusted-issuer.js';

/**
 * Options of the lookup cache of {@link PostgresAppStore}: how many client registrations (RFC 7591 §2) it keeps
 * and for how long at most.
 *
 * @example
 * new PostgresAppStore({ connectionString, cache: { max: 5000, ttlSeconds: 15 } });
 */
export interface AppCacheOptions {
  /** Most apps kept; least recently used go first. Default 10 000. */
  max?: number;
  /** Longest an entry is used without a notification, in seconds; at most 60. Default 30. */
  ttlSeconds?: number;
}

type Entry = { app: App } | { account: true } | { issuers: readonly TrustedIssuer[] };

/** The cache itself; the store feeds it and tells it when the listener is up. */
export class AppLookupCache {
  readonly #entries: LRUCache<string, Entry>;
  #generation = 0;
  #live = false;

  constructor(options: AppCacheOptions = {}) {
    const ttlSeconds = options.ttlSeconds ?? 30;
    if (!(ttlSeconds > 0 && ttlSeconds <= 60)) throw new RangeError('cache.ttlSeconds must be in (0, 60]');
    this.#entries = new LRUCache<string, Entry>({ max: options.max ?? 10_000, ttl: ttlSeconds * 1000, ttlResolution: 0 });
  }

  /** Whether lookups may be answered from the cache (the change listener is connected). */
  get live(): boolean {
    return this.#live;
  }

  set live(value: boolean) {
    // Going down: whatever was cached may miss a notification. Coming up: a lookup begun before LISTEN may have read
    // a row whose change was notified before LISTEN; the new generation stops `put*` caching what it read.
    if (!value || !this.#live) this.clear();
    this.#live = value;
  }

  /** Call before reading the database; pass the result to `putApp` / `putAccount`. */
  generation(): number {
    return this.#generation;
  }

  getApp(accountId: string, clientId: string): App | undefined {
    if (!this.#live) return undefined;
    const entry = this.#entries.get(appKey(accountId, clientId));
    return entry !== undefined && 'app' in entry ? entry.app : undefined;
  }

  putApp(app: App, generation: number): void {
    if (this.#live && generation === this.#generation) this.#entries.set(appKey(app.accountId, app.clientId), { app });
  }

  hasAccount(accountId: string): boolean {
    return this.#live && this.#entries.has(accountKey(accountId));
  }

  putAccount(accountId: string, generation: number): void {
    if (this.#live && generation === this.#generation) this.#entries.set(accountKey(accountId), { account: true });
  }

  /** The account's trusted issuers as last read (an empty list too: most accounts have none). */
  getIssuers(accountId: string): readonly TrustedIssuer[] | undefined {
    if (!this.#live) return undefined;
    const entry = this.#entries.get(issuersKey(accountId));
    return entry !== undefined && 'issuers' in entry ? entry.issuers : undefined;
  }

  putIssuers(accountId: string, issuers: readonly TrustedIssuer[], generation: number): void {
    if (this.#live && generation === this.#generation) this.#entries.set(issuersKey(accountId), { issuers });
  }

  /** The account's trusted issuers changed (here or in another instance): forget them. */
  evictIssuers(accountId: string): void {
    this.#generation += 1;
    this.#entries.delete(issuersKey(accountId));
  }

  /** An app changed (here or in another instance): forget it and whether its account exists. */
  evict(accountId: string, clientId: string): void {
    this.#generation += 1;
    this.#entries.delete(appKey(accountId, clientId));
    this.#entries.delete(accountKey(accountId));
  }

  clear(): void {
    this.#generation += 1;
    this.#entries.clear();
  }
}

function appKey(accountId: string, clientId: string): string {
  return `app\u0000${accountId}\u0000${clientId}`;
}

function accountKey(accountId: string): string {
  return `account\u0000${accountId}`;
}

function issuersKey(accountId: string): string {
  return `issuers\u0000${accountId}`;
}
