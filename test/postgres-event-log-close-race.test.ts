/**
 * `PostgresEventLog.close()` called while a first call (here `migrate()`) is still making the log's own pool (the
 * driver loads asynchronously): before, the pool made afterwards was used and never ended, and its idle connection
 * kept the host's process alive. Now it is ended at once and the call fails, saying the log is closed.
 * And close() called again, or twice at once (a SIGTERM handler and a framework's shutdown hook), settles every call
 * when the pool has ended: before, the second call ended the pool again and rejected.
 * Against the real PostgreSQL, on a throwaway database whose connections are counted.
 */
import { describe, expect, it } from 'vitest';
import { PostgresEventLog } from '../src/postgres/index.js';
import { connectionsTo, sharedPostgres, useThrowawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('postgres-event-log-close-race');
const database = useThrowawayDatabase(available);

describe.skipIf(available.skip)('PostgresEventLog.close() while its pool is being made', () => {
  it('ends the pool made after close and fails the call', async () => {
    const log = new PostgresEventLog({ connectionString: database().url });
    const migrating = log.migrate().catch((error: unknown) => error);
    await log.close();
    const outcome = await migrating;
    // The leak itself: a connection of the log's pool still open after close() and the call.
    expect(await connectionsTo(database().url)).toBe(0);
    expect(String(outcome)).toMatch(/PostgresEventLog is closed/);
  });

  it('settles a second close(), and two at once, when the pool has ended', async () => {
    const log = new PostgresEventLog({ connectionString: database().url });
    await log.migrate();
    await log.close();
    await expect(log.close()).resolves.toBeUndefined();

    const other = new PostgresEventLog({ connectionString: database().url });
    await other.migrate();
    const both = await Promise.allSettled([other.close(), other.close()]);
    expect(both.map((each) => each.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(await connectionsTo(database().url)).toBe(0);
  });
});
