/**
 * The LISTEN side of the change log: one connection per store that hears every committed change and evicts the app
 * from this instance's lookup cache. The cache is trusted only while the listener runs (`cache.live`); a lost
 * connection turns it off until LISTEN runs again, so a missed notification can never leave a stale app cached.
 */
import type { Notification, Pool, PoolClient } from 'pg';
import { CHANGE_CHANNEL } from './change-log.js';
import type { AppLookupCache } from './lookup-cache.js';

/** How long a lost change listener waits before it tries again, in milliseconds. */
const LISTEN_RETRY_MS = 1000;

/** Keeps one LISTEN connection for a store's lookup cache. */
export class ChangeListener {
  readonly #getPool: () => Promise<Pool>;
  readonly #cache: AppLookupCache;
  #listener: PoolClient | undefined;
  #listening: Promise<void> | undefined;
  #nextListenAt = 0;
  #closed = false;

  constructor(getPool: () => Promise<Pool>, cache: AppLookupCache) {
    this.#getPool = getPool;
    this.#cache = cache;
  }

  /** Starts LISTEN in the background when it is not running; lookups use the cache only once it runs. */
  ensure(): void {
    if (this.#cache.live || this.#listening !== undefined || this.#closed || Date.now() < this.#nextListenAt) return;
    this.#listening = this.#listen().finally(() => {
      this.#listening = undefined;
    });
  }

  /** Stops listening for good; the cache is no longer trusted. */
  close(): void {
    this.#closed = true;
    this.#cache.live = false;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.release(true);
  }

  async #listen(): Promise<void> {
    const cache = this.#cache;
    let client: PoolClient | undefined;
    try {
      client = await (await this.#getPool()).connect();
      const connected = client;
      const lost = (): void => {
        if (this.#listener !== connected) return;
        this.#listener = undefined;
        cache.live = false;
        this.#nextListenAt = Date.now() + LISTEN_RETRY_MS;
        connected.release(true);
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (message: Notification) => this.#onNotification(message));
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      if (this.#closed) {
        client.release(true);
        return;
      }
      this.#listener = client;
      cache.live = true;
    } catch {
      client?.release(true);
      this.#nextListenAt = Date.now() + LISTEN_RETRY_MS;
    }
  }

  #onNotification(message: Notification): void {
    if (message.channel !== CHANGE_CHANNEL) return;
    try {
      const { a, c, i } = JSON.parse(message.payload ?? '') as { a: unknown; c: unknown; i: unknown };
      if (typeof a === 'string' && i === 1) {
        this.#cache.evictIssuers(a);
        return;
      }
      if (typeof a === 'string' && typeof c === 'string') {
        this.#cache.evict(a, c);
        return;
      }
    } catch {
      // fall through: an unreadable notification still means something changed
    }
    this.#cache.clear();
  }
}
