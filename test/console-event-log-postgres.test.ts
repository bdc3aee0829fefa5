/**
 * The PostgreSQL event log: migrated by several instances at once; events written in batches through `onEvent`, read
 * back by account, type, app and time with a cursor; the table refuses UPDATE, TRUNCATE and the DELETE of an event
 * inside the retention; `prune()` removes only what is past it; a failed write, or a connection the database ended,
 * is reported, never thrown; the console's audit page reads it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import type { EventQuery } from '../src/events/event-log.js';
import type { SentinelEvent } from '../src/index.js';
import { PostgresEventLog } from '../src/postgres/index.js';
import { operatorCookie } from './helpers/console-session.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const postgres = await sharedPostgres('console-event-log-postgres');

function event(at: number, overrides: Partial<SentinelEvent> = {}): SentinelEvent {
  return { type: 'session.created', at, accountId: ACCOUNT, userId: 'u-1', outcome: 'success', ...overrides } as SentinelEvent;
}

describe.skipIf(postgres.skip)('PostgresEventLog', () => {
  let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;
  let log: PostgresEventLog;
  let client: pg.Client;

  beforeAll(async () => {
    requirePostgres(postgres);
    database = await throwawayDatabase();
    log = new PostgresEventLog({ connectionString: database.url, retentionDays: 30 });
    await log.migrate();
    await log.migrate();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await log?.close();
    await database?.drop();
  });

  it('writes recorded events and reads them back newest first, filtered and paged, one account only', async () => {
    const now = Date.now();
    for (let index = 0; index < 7; index += 1) log.record(event(now - 7000 + index * 1000, index % 2 === 0 ? { clientId: 'even' } : {}));
    log.record(event(now, { accountId: OTHER_ACCOUNT }));
    log.record(event(now, { type: 'console.changed', operator: 'u-op', action: 'app.disable', target: 'even', clientId: 'even' } as never));
    await log.flush();
    const first = await log.query({ accountId: ACCOUNT, limit: 3 });
    expect(first.events.map((seen) => seen.type)).toEqual(['console.changed', 'session.created', 'session.created']);
    expect(first.next).toBeDefined();
    const rest = await log.query({ accountId: ACCOUNT, limit: 50, cursor: first.next });
    expect(rest.events).toHaveLength(5);
    expect(rest.next).toBeUndefined();
    expect((await log.query({ accountId: ACCOUNT, limit: 50, clientId: 'even', type: 'session.created' })).events).toHaveLength(4);
    expect((await log.query({ accountId: ACCOUNT, limit: 50, since: now - 2500, until: now })).events).toHaveLength(2);
    expect((await log.query({ accountId: OTHER_ACCOUNT, limit: 50 })).events).toHaveLength(1);
    expect((await log.query({ accountId: ACCOUNT, limit: 50, cursor: "1'; DROP TABLE x" })).events).toEqual([]);
  });

  it('answers a bound or cursor PostgreSQL cannot hold without sending it: no bound, or an empty page', async () => {
    const all = (await log.query({ accountId: ACCOUNT, limit: 200 })).events.length;
    expect(all).toBeGreaterThan(0);
    const count = async (query: Partial<EventQuery>): Promise<number> =>
      (await log.query({ accountId: ACCOUNT, limit: 200, ...query })).events.length;
    // Above bigint: never handed out, like a cursor that is not a number.
    expect(await count({ cursor: '9999999999999999999' })).toBe(0);
    expect(await count({ cursor: '9223372036854775807' })).toBe(all);
    // Before timestamptz's first instant (4714 BC) and up to Date's own limits.
    const earliestDate = -8.64e15;
    expect(await count({ since: earliestDate })).toBe(all);
    expect(await count({ since: Date.UTC(-4713, 10, 24) - 1 })).toBe(all);
    expect(await count({ since: Number.NEGATIVE_INFINITY })).toBe(all);
    expect(await count({ until: earliestDate })).toBe(0);
    expect(await count({ until: Date.UTC(-9999, 0, 1) })).toBe(0);
    expect(await count({ until: 8.64e15 })).toBe(all);
    expect(await count({ until: 1e16 })).toBe(all);
    expect(await count({ since: 1e16 })).toBe(0);
    await expect(log.query({ accountId: ACCOUNT, limit: 50, since: Number.NaN })).rejects.toThrow(RangeError);
  });

  it('caps a page at 200 events, a whole number of them, whatever the limit', async () => {
    const now = Date.now();
    // An account of its own: the other tests count this account's events.
    const accountId = 'paged-account';
    for (let index = 0; index < 250; index += 1) log.record(event(now - index, { accountId }));
    await log.flush();
    for (const [limit, size] of [
      [Number.NaN, 200],
      [Number.POSITIVE_INFINITY, 200],
      [2.5, 2],
    ]) {
      const page = await log.query({ accountId, limit: limit as number });
      expect(page.events, `limit ${limit}`).toHaveLength(size as number);
      expect(page.next, `limit ${limit}`).toBeDefined();
    }
  });

  it('refuses dates outside the years 1 to 9999 on the audit page (400), and a cursor past bigint is an empty page', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ onError: (error) => errors.push(error) });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'viewer', events: log });
    const id = (await operatorCookie(sentinel, ACCOUNT, 'u-op', 600)).slice('sentinel_console='.length);
    const audit = (query: Record<string, string>) =>
      operatorConsole.handle({
        method: 'GET',
        path: `/console/${ACCOUNT}/audit`,
        query: new URLSearchParams(query),
        headers: { cookie: `sentinel_console=${id}` },
      });
    const outOfRange: Record<string, string>[] = [
      { from: '-271821-04-20T00:00' },
      { from: '-010000-01-01T00:00' },
      { to: '+275760-09-13T00:00' },
      { to: '0000-12-31T23:59' },
    ];
    for (const query of outOfRange) {
      const page = await audit(query);
      expect(page?.status, JSON.stringify(query)).toBe(400);
      expect(page?.body).toContain('is not between the years 1 and 9999');
    }
    const beyond = await audit({ cursor: '9999999999999999999' });
    expect(beyond?.status).toBe(200);
    expect(beyond?.body).toContain('No event matches.');
    const widest = await audit({ from: '0001-01-01T00:00', to: '9999-12-31T23:59' });
    expect(widest?.status).toBe(200);
    expect(widest?.body).not.toContain('No event matches.');
    expect(errors).toEqual([]);
  });

  it('refuses UPDATE, TRUNCATE and the DELETE of an event inside the retention', async () => {
    await expect(client.query("UPDATE sentinel_events SET type = 'forged'")).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(client.query('DELETE FROM sentinel_events')).rejects.toThrow(/append-only: DELETE refused/);
    await expect(client.query('TRUNCATE sentinel_events')).rejects.toThrow(/append-only: TRUNCATE refused/);
    const { rows } = await client.query<{ count: string }>("SELECT count(*) FROM sentinel_events WHERE type = 'forged'");
    expect(rows[0]?.count).toBe('0');
  });

  it('prunes only the events past the retention', async () => {
    const old = Date.now() - 31 * 86_400_000;
    log.record(event(old, { userId: 'u-old' } as never));
    await log.flush();
    const before = (await log.query({ accountId: ACCOUNT, limit: 200 })).events.length;
    expect(await log.prune()).toBe(1);
    const after = (await log.query({ accountId: ACCOUNT, limit: 200 })).events;
    expect(after).toHaveLength(before - 1);
    expect(after.some((seen) => seen.at === old)).toBe(false);
  });

  it('reports a failed write with the number lost, and never throws from record', async () => {
    const failures: number[] = [];
    const broken = new PostgresEventLog({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      onError: (_error, lost) => failures.push(lost),
    });
    expect(() => broken.record(event(Date.now()))).not.toThrow();
    await broken.flush();
    expect(failures).toEqual([1]);
    await broken.close();
  });

  it('stores an event whose text jsonb would refuse (a lone surrogate), with the rest of its batch', async () => {
    const reported: number[] = [];
    const odd = new PostgresEventLog({ connectionString: database?.url ?? '', onError: (_error, lost) => reported.push(lost) });
    try {
      const account = 'acct-lone-surrogate';
      for (let index = 0; index < 99; index += 1) odd.record(event(Date.now(), { accountId: account }));
      odd.record(event(Date.now(), { accountId: account, clientId: 'x\udc00y', userId: 'u-\ud800', 'k\udfff': 'v' } as never));
      await odd.flush();
      expect(reported).toEqual([]);
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM sentinel_events WHERE account_id = $1', [account]);
      expect(rows[0]?.n).toBe(100);
      const [stored] = (await odd.query({ accountId: account, limit: 50, clientId: 'x\ufffdy' })).events;
      expect(stored).toMatchObject({ clientId: 'x\ufffdy', userId: 'u-\ufffd', 'k\ufffd': 'v' });
    } finally {
      await odd.close();
    }
  });

  it('loses only the event PostgreSQL refuses a value of, not the rest of its batch, and reports it alone', async () => {
    const reported: { error: unknown; lost: number }[] = [];
    const refusing = new PostgresEventLog({
      connectionString: database?.url ?? '',
      onError: (error, lost) => reported.push({ error, lost }),
    });
    try {
      const account = 'acct-one-refused';
      for (let index = 0; index < 60; index += 1) refusing.record(event(Date.now(), { accountId: account }));
      // 5000 BC: before the first instant a timestamptz holds (SQLSTATE 22008).
      refusing.record(event(Date.UTC(-5000, 0, 1), { accountId: account }));
      for (let index = 0; index < 39; index += 1) refusing.record(event(Date.now(), { accountId: account }));
      await refusing.flush();
      expect(reported).toEqual([{ error: expect.objectContaining({ code: expect.stringMatching(/^22/) }), lost: 1 }]);
      const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM sentinel_events WHERE account_id = $1', [account]);
      expect(rows[0]?.n).toBe(99);
    } finally {
      await refusing.close();
    }
  });

  it('survives the database ending its idle connections (a restart), reports it, and writes again', async () => {
    const reported: { error: unknown; lost: number }[] = [];
    const name = 'sentinel-event-log-restart';
    const restarted = new PostgresEventLog({
      connectionString: `${database?.url}?application_name=${name}`,
      onError: (error, lost) => reported.push({ error, lost }),
    });
    try {
      restarted.record(event(Date.now(), { userId: 'u-before-restart' } as never));
      await restarted.flush();
      const ended = await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      expect(ended.rowCount).toBeGreaterThan(0);
      // Unheard, the pool's 'error' is thrown from the socket's handler: the process (here, the test run) fails.
      for (let waited = 0; reported.length === 0 && waited < 5000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(reported).toEqual([{ error: expect.objectContaining({ code: '57P01' }), lost: 0 }]);
      restarted.record(event(Date.now(), { userId: 'u-after-restart' } as never));
      await restarted.flush();
      expect(reported).toHaveLength(1);
      const { rows } = await client.query<{ count: string }>(
        "SELECT count(*) FROM sentinel_events WHERE event->>'userId' = 'u-after-restart'",
      );
      expect(rows[0]?.count).toBe('1');
    } finally {
      await restarted.close();
    }
  });

  it('migrates from several instances at once, on a fresh database and on an existing schema', async () => {
    const fresh = await throwawayDatabase();
    try {
      // Without a lock: "duplicate key … pg_type_typname_nsp_index" on a fresh database, "deadlock detected" after.
      const failures: string[] = [];
      for (const schema of ['fresh', 'existing', 'existing']) {
        const logs = Array.from(
          { length: 6 },
          (_, index) => new PostgresEventLog({ connectionString: fresh.url, retentionDays: 30 + index }),
        );
        const results = await Promise.allSettled(logs.map((each) => each.migrate()));
        await Promise.all(logs.map((each) => each.close()));
        for (const result of results) if (result.status === 'rejected') failures.push(`${schema}: ${String(result.reason)}`);
      }
      expect(failures).toEqual([]);
      const admin = new pg.Client({ connectionString: fresh.url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ days: number }>('SELECT days FROM sentinel_event_retention');
        expect(rows).toHaveLength(1);
        await expect(admin.query('TRUNCATE sentinel_events')).rejects.toThrow(/append-only: TRUNCATE refused/);
      } finally {
        await admin.end();
      }
    } finally {
      await fresh.drop();
    }
  });

  it("is the service's onEvent and the console's audit page", async () => {
    const sentinel = makeSentinel({ onEvent: log.record });
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin', events: log });
    const id = (await operatorCookie(sentinel, ACCOUNT, 'u-op', 600)).slice('sentinel_console='.length);
    const cookie = `sentinel_console=${id}`;
    const refused = await operatorConsole.handle({
      method: 'POST',
      path: `/console/${ACCOUNT}/apps/x/delete`,
      query: new URLSearchParams(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=forged',
    });
    expect(refused?.status).toBe(403);
    await log.flush();
    const page = await operatorConsole.handle({
      method: 'GET',
      path: `/console/${ACCOUNT}/audit`,
      query: new URLSearchParams({ type: 'console.denied' }),
      headers: { cookie },
    });
    expect(page?.body).toContain('Events from the durable event log.');
    expect(page?.body).toContain('reason=csrf');
  });
});
