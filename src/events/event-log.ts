/**
 * Where the console's audit page reads events from: an {@link EventSource} the host gives (the PostgreSQL event log
 * of `sentinel-idp/postgres`), or else {@link MemoryEventLog}, this instance's most recent events in a bounded ring
 * buffer.
 */
import type { SentinelEvent, SentinelEventType } from './sentinel-event.js';

/**
 * A filter over recorded events. `accountId` is always set: an operator reads only their own account's events.
 *
 * @example
 * const query: EventQuery = { accountId: '123456', type: 'console.changed', since: Date.now() - 86_400_000, limit: 50 };
 */
export interface EventQuery {
  accountId: string;
  type?: SentinelEventType | undefined;
  clientId?: string | undefined;
  /** Events at or after this instant (epoch milliseconds). */
  since?: number | undefined;
  /** Events before this instant (epoch milliseconds). */
  until?: number | undefined;
  /** The page size; sources cap it: a whole number, at most 200 (NaN gets 200, 2.5 gets 2). */
  limit: number;
  /** The cursor of the next page, as the previous page returned it. */
  cursor?: string | undefined;
}

/**
 * One page of events, newest first, and the cursor of the next (older) page when there is one.
 *
 * @example
 * const { events, next } = await source.query({ accountId, limit: 50 });
 */
export interface EventPage {
  events: SentinelEvent[];
  next?: string | undefined;
}

/**
 * What the audit page reads: any store of events that can answer an {@link EventQuery}.
 *
 * @example
 * const source: EventSource = { durable: true, query: (query) => myAuditTable.page(query) };
 */
export interface EventSource {
  /** Whether the events outlive this process (the page says when they are only this instance's recent ones). */
  readonly durable: boolean;
  /** One page of the events the query matches, newest first, and where the next page starts. */
  query(query: EventQuery): EventPage | Promise<EventPage>;
}

/** The largest page any source returns. */
export const MAX_EVENT_PAGE = 200;

/**
 * The number of events a page holds for a requested `limit`: a whole number from 1 to {@link MAX_EVENT_PAGE}. A
 * limit that is not a number gets the cap: compared as is, NaN or 2.5 never equals a count, and a page would run to
 * the end of the log.
 *
 * @example eventPageSize(50) // 50; eventPageSize(2.5) // 2; eventPageSize(Number.NaN) // 200; eventPageSize(1e9) // 200
 */
export function eventPageSize(limit: number): number {
  if (Number.isNaN(limit)) return MAX_EVENT_PAGE;
  return Math.min(Math.max(1, Math.floor(limit)), MAX_EVENT_PAGE);
}

/** Whether `event` passes the filter (the account, type, app and time). */
export function eventMatches(event: SentinelEvent, query: EventQuery): boolean {
  if (event.accountId !== query.accountId) return false;
  if (query.type !== undefined && event.type !== query.type) return false;
  if (query.clientId !== undefined && event.clientId !== query.clientId) return false;
  if (query.since !== undefined && event.at < query.since) return false;
  return query.until === undefined || event.at < query.until;
}

/**
 * This instance's most recent events, in memory: a ring buffer of `size` entries (default 1000), the oldest
 * overwritten first. What the audit page shows when the host has no durable event log.
 *
 * @example
 * const log = new MemoryEventLog(500);
 * createSentinel({ ...options, onEvent: (event) => log.record(event) });
 */
export class MemoryEventLog implements EventSource {
  readonly durable = false;
  readonly #size: number;
  readonly #entries: ({ seq: number; event: SentinelEvent } | undefined)[];
  #seq = 0;

  constructor(size = 1000) {
    if (!Number.isInteger(size) || size < 1 || size > 100_000) throw new RangeError('MemoryEventLog size must be 1 to 100000');
    this.#size = size;
    this.#entries = new Array(size);
  }

  /** Keeps one event (a copy), dropping the oldest when full. */
  record(event: SentinelEvent): void {
    this.#seq += 1;
    this.#entries[this.#seq % this.#size] = { seq: this.#seq, event: { ...event } };
  }

  /** One page of the events this instance recorded that the query matches, newest first. */
  query(query: EventQuery): EventPage {
    const limit = eventPageSize(query.limit);
    const before = query.cursor === undefined ? Number.POSITIVE_INFINITY : Number(query.cursor);
    const events: SentinelEvent[] = [];
    let last = 0;
    // Newest first: walk back from the latest sequence number over at most the buffer's size.
    for (let seq = Math.min(this.#seq, before - 1); seq > 0 && seq > this.#seq - this.#size; seq -= 1) {
      const entry = this.#entries[seq % this.#size];
      if (entry === undefined || entry.seq !== seq || !eventMatches(entry.event, query)) continue;
      if (events.length === limit) return { events, next: String(last) };
      events.push({ ...entry.event });
      last = seq;
    }
    return { events };
  }
}
