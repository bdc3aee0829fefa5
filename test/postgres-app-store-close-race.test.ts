/**
 * `PostgresAppStore.close()` called while the first lookup is still making the store's own pool (the driver loads
 * asynchronously): before, the pool made afterwards was adopted and used, never ended, and held its connection, so
 * the host's process did not exit. Now it is ended at once and the lookup fails, saying the store is closed.
 * Against the real PostgreSQL, on a throwaway database whose connections are counted.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAppStore } from '../src/postgres/index.js';
import { POSTGRES_URL, requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-app-store-close-race');
let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;

beforeAll(async () => {
  requirePostgres(available);
  database = await throwawayDatabase();
  const store = new PostgresAppStore({ connectionString: database.url });
  await store.migrate();
  await store.close();
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

describe.skipIf(available.skip)('PostgresAppStore.close() during the first lookup', () => {
  it.each([false, undefined] as const)('ends the pool made after close (cache %s) and fails the lookup', async (cache) => {
    const store = new PostgresAppStore({ connectionString: database?.url as string, ...(cache === false ? { cache } : {}) });
    const lookup = store.findApp('acct-1', 'client-1').catch((error: unknown) => error);
    await store.close();
    const outcome = await lookup;
    // The leak itself: a connection of the store's pool still open after close() and the lookup.
    expect(await connections()).toBe(0);
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome)).toMatch(/PostgresAppStore is closed/);
  });
});
