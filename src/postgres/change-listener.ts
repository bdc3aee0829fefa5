/**
 * The LISTEN side of the change log: one connection per store that hears every committed change and evicts the app
 * from this instance's lookup cache. The cache is trusted only while the listener runs (`cache.live`); a lost
 * connection turns it off until LISTEN runs again, so a missed notification can never leave a stale app cached.
 *
 * A connection that dies silently (a NAT or load balancer dropping it, no FIN nor RST) is found by a heartbeat
 * (`listener-heartbeat.ts`) within its interval and timeout, and counts as lost from then on.
 *
 * The connection is a client of its own, never one of the pool's: LISTEN keeps it for as long as the store runs, and
 * a pool slot held for that would leave a one-connection pool with nothing for the lookups.
 */
import type { Client, Notification } from 'pg';
import { CHANGE_CHANNEL } from './change-log.js';
import { startHeartbeat } from './listener-heartbeat.js';
import type { AppLookupCache } from './lookup-cache.js';

/** How long a lost change listener waits before it tries again, in milliseconds. */
const LISTEN_RETRY_MS = 1000;

/**
 * How long `close()` lets the listening connection end politely, in milliseconds, before it cuts the socket. A
 * connection still starting up against a server that accepted it but never answers (a proxy whose database is gone,
 * a host's pool without `connectionTimeoutMillis`) ends only when the peer closes, which may be never.
 */
export const CLOSE_GRACE_MS = 1000;

/** Keeps one LISTEN connection for a store's lookup cache. */
export class ChangeListener {
  readonly #newClient: () => Promise<Client>;
  readonly #cache: AppLookupCache;
  /** The connection connecting or listening, so that close() ends it either way. */
  #client: Client | undefined;
  /** Stops the heartbeat of the listening connection. */
  #stopHeartbeat: (() => void) | undefined;
  #listening: Promise<void> | undefined;
  #nextListenAt = 0;
  #closed = false;

  /** `newClient` makes a new, unconnected client each time LISTEN (re)starts. */
  constructor(newClient: () => Promise<Client>, cache: AppLookupCache) {
    this.#newClient = newClient;
    this.#cache = cache;
  }

  /** Starts LISTEN in the background when it is not running; lookups use the cache only once it runs. */
  ensure(): void {
    if (this.#cache.live || this.#listening !== undefined || this.#closed || Date.now() < this.#nextListenAt) return;
    this.#listening = this.#listen().finally(() => {
      this.#listening = undefined;
    });
  }

  /** Stops listening for good; the cache is no longer trusted. Resolves once the connection has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#cache.live = false;
    this.#stopHeartbeat?.();
    this.#stopHeartbeat = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await endWithin(client, CLOSE_GRACE_MS);
  }

  async #listen(): Promise<void> {
    const cache = this.#cache;
    let client: Client | undefined;
    try {
      client = await this.#newClient();
      const connected = client;
      const lost = (): void => {
        if (this.#client !== connected) return;
        this.#client = undefined;
        cache.live = false;
        this.#stopHeartbeat?.();
        this.#stopHeartbeat = undefined;
        this.#nextListenAt = Date.now() + LISTEN_RETRY_MS;
        // With the heartbeat's query unanswered, end() destroys the socket rather than wait on a dead peer.
        connected.end().catch(() => {});
      };
      // Heard before connecting: an 'error' event with no listener would end the host's process.
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (message: Notification) => this.#onNotification(message));
      if (this.#closed) throw new Error('closed');
      this.#client = client;
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      // Closed, or lost and replaced, while connecting: this connection is not the listener.
      if (this.#client !== client) throw new Error('no longer the listener');
      this.#stopHeartbeat = startHeartbeat(client, lost);
      cache.live = true;
    } catch {
      if (client !== undefined && this.#client === client) this.#client = undefined;
      await client?.end().catch(() => {});
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

/**
 * Ends `client`, cutting its socket when it has not ended within `graceMs`, and resolves once it has ended or been
 * cut: a shutdown must not wait on a peer that never answers.
 */
async function endWithin(client: Client, graceMs: number): Promise<void> {
  let ended = false;
  const ending = client.end().then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([ending, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  if (ended) return;
  // pg's own socket (a native client has none: it is then left to end when it can, unawaited).
  const stream = (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream;
  stream?.destroy?.();
}
