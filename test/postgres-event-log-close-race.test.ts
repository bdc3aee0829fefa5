/**
 * `PostgresEventLog.close()` called while a first call (here `migrate()`) is still making the log's own pool (the
 * driver loads asynchronously): before, the pool made afterwards was used and never ended, and its idle connection
 * kept the host's process alive. Now it is ended at once and the call fails, saying the log is closed.
 * Against the real PostgreSQL, on a throwaway database whose connections are counted.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEventLog } from '../src/postgres/index.js';
import { POSTGRES_URL, requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-event-log-close-race');
let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;

beforeAll(async () => {
  requirePostgres(available);
  database = await throwawayDatabase();
});

afterAll(async () => {
  await database?.drop();
});

/** Connections open to the throwaway database. */
async function connections(): Promise<number> {
  const name = new URL(database?.url as string).pathname.slice(1);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    return result.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

describe.skipIf(available.skip)('PostgresEventLog.close() while its pool is being made', () => {
  it('ends the pool made after close and fails the call', async () => {
    const log = new PostgresEventLog({ connectionString: database?.url as string });
    const migrating = log.migrate().catch((error: unknown) => error);
    await log.close();
    const outcome = await migrating;
    // The leak itself: a connection of the log's pool still open after close() and the call.
    expect(await connections()).toBe(0);
    expect(String(outcome)).toMatch(/PostgresEventLog is closed/);
  });
});
