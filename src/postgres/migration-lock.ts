/**
 * The lock that makes a schema change safe from several instances at once: a transaction-scoped advisory lock,
 * taken under READ COMMITTED whatever the database's `default_transaction_isolation` says.
 */
import type { PoolClient } from 'pg';

/**
 * Call first in the transaction. Under REPEATABLE READ or SERIALIZABLE the transaction's first statement fixes its
 * snapshot: were that the lock, an instance that waited on it would still see the schema as it was before the other
 * instance committed, run the same steps again and fail ("relation already exists"). `SET TRANSACTION` takes no
 * snapshot, and under READ COMMITTED each statement after the lock sees what the holder committed.
 *
 * @example await inTransaction(pool, async (client) => { await lockForMigration(client, KEY); … });
 */
export async function lockForMigration(client: PoolClient, key: number): Promise<void> {
  await client.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
  await client.query('SELECT pg_advisory_xact_lock($1)', [key]);
}
