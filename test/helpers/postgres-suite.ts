/**
 * A describe block on a throwaway database of the shared PostgreSQL with a migrated {@link PostgresAppStore}: skipped
 * with the reason when PostgreSQL is absent (failing instead under SENTINEL_REQUIRE_POSTGRES=1), the store closed and
 * the database dropped afterwards, so suites that run the same checks on MemoryAppStore and PostgreSQL write only the
 * checks.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { PostgresAppStore } from '../../src/postgres/index.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './postgres.js';

/** The registry of one block: its store, and the database URL for writing rows the store would not write. */
export interface PostgresRegistry {
  store: PostgresAppStore;
  url: string;
}

/**
 * Declares `title` on a throwaway database. `body` runs inside the block: its own `beforeAll` hooks run after the
 * store is migrated, and `registry()` gives the store inside hooks and cases.
 *
 * @example await describeOnPostgres('my-suite', 'on PostgreSQL', (registry) => { it('…', async () => { await registry().store.listApps('1') }) });
 */
export async function describeOnPostgres(
  suite: string,
  title: string,
  body: (registry: () => PostgresRegistry) => void,
  storeOptions: { cache?: false } = {},
): Promise<void> {
  const postgres = await sharedPostgres(suite);
  describe.skipIf(postgres.skip)(title, () => {
    let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;
    let registry: PostgresRegistry | undefined;

    beforeAll(async () => {
      requirePostgres(postgres);
      database = await throwawayDatabase();
      const store = new PostgresAppStore({ connectionString: database.url, ...storeOptions });
      await store.migrate();
      registry = { store, url: database.url };
    });

    afterAll(async () => {
      await registry?.store.close();
      await database?.drop();
    });

    body(() => {
      if (registry === undefined) throw new Error('the PostgreSQL registry is made in beforeAll: use it inside a hook or case');
      return registry;
    });
  });
}
