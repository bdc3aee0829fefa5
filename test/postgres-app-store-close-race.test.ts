/**
 * `PostgresAppStore.close()` called while the first lookup is still making the store's own pool (the driver loads
 * asynchronously): before, the pool made afterwards was adopted and used, never ended, and held its connection, so
 * the host's process did not exit. Now it is ended at once and the lookup fails, saying the store is closed.
 * And a second close() called while the first is still ending the pool resolves only when it has ended: before, it
 * returned at once, and a host that awaited it and then counted connections found them open.
 * Against the real PostgreSQL, on a throwaway database whose connections are counted.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PostgresAppStore } from '../src/postgres/index.js';
import { connectionsTo, sharedPostgres, useThrowawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-app-store-close-race');
const database = useThrowawayDatabase(available);

beforeAll(async () => {
  const store = new PostgresAppStore({ connectionString: database().url });
  await store.migrate();
  await store.close();
});

describe.skipIf(available.skip)('PostgresAppStore.close() during the first lookup', () => {
  it.each([false, undefined] as const)('ends the pool made after close (cache %s) and fails the lookup', async (cache) => {
    const store = new PostgresAppStore({ connectionString: database().url, ...(cache === false ? { cache } : {}) });
    const lookup = store.findApp('acct-1', 'client-1').catch((error: unknown) => error);
    await store.close();
    const outcome = await lookup;
    // The leak itself: a connection of the store's pool still open after close() and the lookup.
    expect(await connectionsTo(database().url)).toBe(0);
    expect(outcome).toBeInstanceOf(Error);
    expect(String(outcome)).toMatch(/PostgresAppStore is closed/);
  });

  it('resolves a concurrent second close() only when the pool has ended', async () => {
    const store = new PostgresAppStore({ connectionString: database().url });
    await store.findApp('acct-1', 'client-1');
    const first = store.close();
    await store.close();
    expect(await connectionsTo(database().url)).toBe(0);
    await first;
  });
});
