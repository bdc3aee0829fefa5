/**
 * `migrate()` of the app store and of the event log, from two instances at once, on databases whose
 * `default_transaction_isolation` is each of PostgreSQL's levels: the instance that waited on the lock must see what
 * the other committed, not re-run the same steps ("relation already exists").
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEventLog } from '../src/postgres/event-log.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { POSTGRES_URL, requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-migrate-isolation');
const LEVELS = ['read committed', 'repeatable read', 'serializable'] as const;
const databases: Awaited<ReturnType<typeof throwawayDatabase>>[] = [];

beforeAll(() => requirePostgres(available));

afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

/** A fresh database whose new connections start their transactions at `level`. */
async function databaseAt(level: string): Promise<string> {
  const database = await throwawayDatabase();
  databases.push(database);
  const name = new URL(database.url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${name} SET default_transaction_isolation = '${level}'`);
  } finally {
    await admin.end();
  }
  return database.url;
}

function outcomes(results: PromiseSettledResult<unknown>[]): string[] {
  return results.map((result) => (result.status === 'fulfilled' ? 'ok' : String(result.reason)));
}

describe.skipIf(available.skip)('migrate() from two instances at once', () => {
  for (const level of LEVELS) {
    it(`app store, default_transaction_isolation = ${level}`, async () => {
      const url = await databaseAt(level);
      const stores = [
        new PostgresAppStore({ connectionString: url, cache: false }),
        new PostgresAppStore({ connectionString: url, cache: false }),
      ];
      try {
        const results = await Promise.allSettled(stores.map((store) => store.migrate()));
        expect(outcomes(results)).toEqual(['ok', 'ok']);
        // Every migration ran exactly once, by one instance or the other.
        const ran = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
        expect(ran.sort()).toEqual([1, 2, 3]);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });

    it(`event log, default_transaction_isolation = ${level}`, async () => {
      const url = await databaseAt(level);
      const logs = [new PostgresEventLog({ connectionString: url }), new PostgresEventLog({ connectionString: url })];
      try {
        expect(outcomes(await Promise.allSettled(logs.map((log) => log.migrate())))).toEqual(['ok', 'ok']);
      } finally {
        await Promise.all(logs.map((log) => log.close()));
      }
    });
  }
});
