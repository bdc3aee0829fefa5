/**
 * `PostgresEventLog`: the service's audit events in an append-only PostgreSQL table. The host passes its `record`
 * as `onEvent` (with or without the operator console); the console's audit page reads it through `query`. A trigger
 * refuses every UPDATE, every TRUNCATE, and every DELETE of an event younger than the retention, so a row can leave
 * only through {@link PostgresEventLog.prune} once it is past the retention.
 */
import type { Pool } from 'pg';
import { type EventPage, type EventQuery, type EventSource, eventPageSize } from '../events/event-log.js';
import type { SentinelEvent } from '../events/sentinel-event.js';
import { lockForMigration } from './migration-lock.js';
import { loadPool } from './pool.js';
import { storableJson, storableText } from './storable-text.js';
import { inTransaction } from './transaction.js';
import { catchRejection } from '../lib/thenable.js';

/**
 * Options of {@link PostgresEventLog}: a connection string (the log makes and owns its pool) or a `pg` Pool of the
 * host's, and how long events are kept.
 *
 * @example
 * const options: PostgresEventLogOptions = { connectionString: process.env.DATABASE_URL!, retentionDays: 400 };
 */
export type PostgresEventLogOptions = ({ connectionString: string; pool?: undefined } | { pool: Pool; connectionString?: undefined }) & {
  /** Days an event is kept before `prune()` may delete it (and before the trigger lets it go). Default 365. */
  retentionDays?: number;
  /**
   * Told when a write fails (the events of that write are lost; the request that emitted them is not failed, as
   * `onEvent` cannot wait; an event PostgreSQL refuses a value of is told alone, with `lost` 1), and with `lost` 0 when an idle connection of the log's own pool dies (a database
   * restart: the pool opens another one). Default: `console.error` of the failure's message.
   */
  onError?: (error: unknown, lost: number) => void;
  /** Most events waiting to be written; beyond it the oldest waiting are dropped and reported. Default 10000. */
  maxPending?: number;
};

/** Rows per INSERT: a burst is written in a few statements rather than one per event. */
const BATCH = 500;

/**
 * A fixed key for `pg_advisory_xact_lock`, not the app store's: instances starting at once migrate the log one after
 * the other, without waiting on the registry's migrations.
 */
const MIGRATION_LOCK_KEY = 7_364_001_718;
/** The first instant a timestamptz holds (4714-11-24 BC); `Date` ends (at 8.64e15 ms) before timestamptz does. */
const EARLIEST_TIMESTAMPTZ = Date.UTC(-4713, 10, 24);
const LATEST_DATE = 8.64e15;
/** The largest `bigserial` id: a cursor above it was never handed out. */
const MAX_ID = 9_223_372_036_854_775_807n;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sentinel_events (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  account_id text NOT NULL,
  type text NOT NULL,
  client_id text,
  outcome text NOT NULL,
  event jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS sentinel_events_account_id ON sentinel_events (account_id, id DESC);
CREATE TABLE IF NOT EXISTS sentinel_event_retention (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  days integer NOT NULL CHECK (days >= 1)
);
CREATE OR REPLACE FUNCTION sentinel_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND OLD.at < now() - make_interval(days => (SELECT days FROM sentinel_event_retention)) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'sentinel_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE OR REPLACE FUNCTION sentinel_events_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sentinel_events is append-only: TRUNCATE refused' USING ERRCODE = 'insufficient_privilege';
END $$;
DROP TRIGGER IF EXISTS sentinel_events_append_only ON sentinel_events;
CREATE TRIGGER sentinel_events_append_only BEFORE UPDATE OR DELETE ON sentinel_events
  FOR EACH ROW EXECUTE FUNCTION sentinel_events_append_only();
DROP TRIGGER IF EXISTS sentinel_events_no_truncate ON sentinel_events;
CREATE TRIGGER sentinel_events_no_truncate BEFORE TRUNCATE ON sentinel_events
  FOR EACH STATEMENT EXECUTE FUNCTION sentinel_events_no_truncate();
`;

/**
 * Whether PostgreSQL refused a value of the statement: SQLSTATE class 22 (data exception: a date out of range, text
 * it cannot hold) or 23 (integrity constraint), which another row of the same batch need not share.
 */
function refusedValue(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

interface EventRow {
  id: string;
  event: SentinelEvent;
}

/**
 * The audit events in PostgreSQL, append-only. Writes are batched in the background: `record` never blocks nor
 * throws; `flush()` waits for what was recorded so far.
 *
 * @example
 * const events = new PostgresEventLog({ connectionString: process.env.DATABASE_URL!, retentionDays: 400 });
 * await events.migrate();
 * const sentinel = createSentinel({ ...options, onEvent: events.record });
 * app.use(toExpress(createConsole(sentinel, { authorize, events })));
 */
export class PostgresEventLog implements EventSource {
  readonly durable = true;
  readonly #options: PostgresEventLogOptions;
  readonly #retentionDays: number;
  readonly #maxPending: number;
  #closed = false;
  /** The first close()'s work, which every later call waits on. */
  #closing: Promise<void> | undefined;
  #pool: Pool | undefined;
  #poolLoading: Promise<Pool> | undefined;
  #pending: SentinelEvent[] = [];
  #writing: Promise<void> | undefined;

  constructor(options: PostgresEventLogOptions) {
    this.#options = options;
    this.#retentionDays = options.retentionDays ?? 365;
    if (!Number.isInteger(this.#retentionDays) || this.#retentionDays < 1 || this.#retentionDays > 36_500) {
      throw new RangeError('PostgresEventLog retentionDays must be a whole number of days from 1 to 36500');
    }
    this.#maxPending = options.maxPending ?? 10_000;
    this.#pool = options.pool;
  }

  /** The pool: the host's, or the log's own, made on first use. */
  #connection(): Promise<Pool> {
    if (this.#pool !== undefined) return Promise.resolve(this.#pool);
    if (this.#closed) return Promise.reject(new Error('PostgresEventLog is closed'));
    this.#poolLoading ??= loadPool({ connectionString: this.#options.connectionString ?? '' }).then(async (pool) => {
      // close() ran while the driver loaded: nobody would end this pool, and it would keep the host's process alive.
      if (this.#closed) {
        await pool.end().catch(() => {});
        throw new Error('PostgresEventLog is closed');
      }
      // An idle connection that dies (database restart, failover) emits 'error' on the pool; unheard, it would end
      // the host's process. A host's own pool is the host's to listen to.
      pool.on('error', (error) => this.#report(error, 0));
      this.#pool = pool;
      return pool;
    });
    return this.#poolLoading;
  }

  /**
   * Creates the table, its append-only triggers and the retention row (idempotent), and sets the retention to this
   * log's `retentionDays`. Safe from several instances at once.
   */
  async migrate(): Promise<void> {
    const pool = await this.#connection();
    // IF NOT EXISTS and OR REPLACE do not make concurrent DDL safe: two instances creating the table at once collide
    // on the catalog, and two replacing the triggers deadlock. One transaction under a lock runs them one by one.
    await inTransaction(pool, async (client) => {
      await lockForMigration(client, MIGRATION_LOCK_KEY);
      await client.query(SCHEMA);
      await client.query(
        'INSERT INTO sentinel_event_retention (singleton, days) VALUES (true, $1) ON CONFLICT (singleton) DO UPDATE SET days = EXCLUDED.days',
        [this.#retentionDays],
      );
    });
  }

  /** Queues one event for writing; the `onEvent` of the service (bound: pass `events.record` as is). */
  readonly record = (event: SentinelEvent): void => {
    this.#pending.push(event);
    if (this.#pending.length > this.#maxPending) {
      const dropped = this.#pending.length - this.#maxPending;
      this.#pending.splice(0, dropped);
      this.#report(new Error('PostgresEventLog: too many events waiting to be written'), dropped);
    }
    this.#writing ??= this.#drain();
  };

  /** Resolves once every event recorded so far is written (or reported lost). */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  async #drain(): Promise<void> {
    // Let the request that emitted the event finish first: writing is never on its path.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, BATCH);
        try {
          await this.#insert(batch);
        } catch (error) {
          await this.#insertEach(batch, error);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #insert(batch: readonly SentinelEvent[]): Promise<void> {
    const pool = await this.#connection();
    const values: unknown[] = [];
    const rows = batch.map((event, index) => {
      values.push(
        new Date(event.at),
        storableText(event.accountId),
        storableText(event.type),
        event.clientId === undefined ? null : storableText(event.clientId),
        storableText(event.outcome),
        storableJson(event),
      );
      const base = index * 6;
      return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}::jsonb)`;
    });
    await pool.query(`INSERT INTO sentinel_events (at, account_id, type, client_id, outcome, event) VALUES ${rows.join(', ')}`, values);
  }

  /**
   * A batch that PostgreSQL refused for one of its values, written again one event at a time: only the events it
   * cannot store are lost (each reported), not the up to 500 beside them. Any other failure (the database down) is
   * not retried 500 times over: it costs the batch, or the rest of it, reported at once.
   */
  async #insertEach(batch: readonly SentinelEvent[], batchError: unknown): Promise<void> {
    if (batch.length === 1 || !refusedValue(batchError)) {
      this.#report(batchError, batch.length);
      return;
    }
    for (const [index, event] of batch.entries()) {
      try {
        await this.#insert([event]);
      } catch (error) {
        if (!refusedValue(error)) {
          this.#report(error, batch.length - index);
          return;
        }
        this.#report(error, 1);
      }
    }
  }

  #report(error: unknown, lost: number): void {
    try {
      if (this.#options.onError !== undefined) catchRejection(this.#options.onError(error, lost));
      else {
        const cause = error instanceof Error ? error.message : 'failure';
        console.error(
          lost === 0
            ? `PostgresEventLog: a pooled connection failed: ${cause}`
            : `PostgresEventLog: ${lost} event(s) not written: ${cause}`,
        );
      }
    } catch {
      // A throwing onError must not become an unhandled rejection.
    }
  }

  /**
   * One page of an account's events, newest first (the console's audit page). A time bound beyond what a timestamptz
   * holds is no bound at one end and matches nothing at the other, and a cursor this log never handed out gives an
   * empty page: neither is sent to PostgreSQL, which would refuse it.
   *
   * @throws RangeError when `since` or `until` is NaN.
   */
  async query(query: EventQuery): Promise<EventPage> {
    const limit = eventPageSize(query.limit);
    const { since, until } = query;
    if (Number.isNaN(since) || Number.isNaN(until)) throw new RangeError('PostgresEventLog: since and until must be epoch ms');
    if ((since !== undefined && since > LATEST_DATE) || (until !== undefined && until <= EARLIEST_TIMESTAMPTZ)) return { events: [] };
    const conditions = ['account_id = $1'];
    const values: unknown[] = [query.accountId];
    const add = (sql: string, value: unknown): void => {
      values.push(value);
      conditions.push(`${sql} $${values.length}`);
    };
    if (query.type !== undefined) add('type =', query.type);
    if (query.clientId !== undefined) add('client_id =', query.clientId);
    if (since !== undefined && since > EARLIEST_TIMESTAMPTZ) add('at >=', new Date(since));
    if (until !== undefined && until <= LATEST_DATE) add('at <', new Date(until));
    if (query.cursor !== undefined) {
      if (!/^\d{1,19}$/.test(query.cursor) || BigInt(query.cursor) > MAX_ID) return { events: [] };
      add('id <', query.cursor);
    }
    values.push(limit + 1);
    const pool = await this.#connection();
    const result = await pool.query<EventRow>(
      `SELECT id, event FROM sentinel_events WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${values.length}`,
      values,
    );
    const rows = result.rows.slice(0, limit);
    const last = rows.at(-1);
    return { events: rows.map((row) => row.event), ...(result.rows.length > limit && last !== undefined ? { next: String(last.id) } : {}) };
  }

  /** Deletes the events past the retention; resolves to how many. Run it from a scheduled job. */
  async prune(): Promise<number> {
    const pool = await this.#connection();
    const result = await pool.query(
      'DELETE FROM sentinel_events WHERE at < now() - make_interval(days => (SELECT days FROM sentinel_event_retention))',
    );
    return result.rowCount ?? 0;
  }

  /**
   * Writes what is pending, then ends the log's own pool (a host's pool is left open). Every call answers with the
   * first one's promise: a host may close from two shutdown paths, and ending a pool twice rejects.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    await this.flush();
    // After the flush, whose writes may still need the pool: a pool made from now on is ended at once.
    this.#closed = true;
    if (this.#options.pool === undefined && this.#pool !== undefined) await this.#pool.end();
  }
}
