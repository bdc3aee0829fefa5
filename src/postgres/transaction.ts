/**
 * One transaction on a connection of the pool: BEGIN, the work, COMMIT; on any failure ROLLBACK and the error
 * passed on. A connection whose transaction failed is released as broken (`release(true)`), so the pool never hands
 * out one left mid-transaction or with its query cut off. A connection cut while checked out is an error of the
 * transaction, never an uncaught 'error' event.
 */
import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in a transaction on one connection of `pool`. `settle`, when given, runs once the transaction has
 * ended either way, before the connection goes back: a COMMIT whose answer was lost may still have happened, so
 * what a cache must forget is forgotten whatever the outcome.
 *
 * @example
 * const ran = await inTransaction(pool, async (client) => (await client.query('SELECT 1')).rowCount);
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>, settle?: () => void): Promise<T> {
  const client = await pool.connect();
  // pg-pool listens for a connection's 'error' only while it is idle. Cut while checked out (a terminated backend, a
  // restart, a proxy dropping it), the client emits 'error' as well as failing the query in flight, and an 'error'
  // event nobody hears ends the host's process. The failed query already carries it here, to the caller.
  const ignore = (): void => {};
  client.on('error', ignore);
  let failed = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => {});
    throw withoutRowValues(error);
  } finally {
    settle?.();
    client.release(failed);
    // A broken connection is ended by the release and keeps its listener; a healthy one goes back to the pool without.
    if (!failed) client.removeListener('error', ignore);
  }
}

/** What a `pg` DatabaseError carries beside its message; `detail` and `where` may quote the row being written. */
interface DatabaseErrorFields {
  code?: unknown;
  table?: unknown;
  constraint?: unknown;
  detail?: unknown;
  where?: unknown;
  internalQuery?: unknown;
}

/**
 * The error of a failed write without the values of its row. PostgreSQL explains a violated constraint in `detail`
 * ("Failing row contains (…)", "Key (…)=(…) already exists"), which for these tables holds the digests of client
 * secrets and registration access tokens; `onError` and the host's logs get the message (which names the relation
 * and the constraint, not the values), the SQLSTATE, the table and the constraint, as RedisStore drops a command's
 * arguments. Any other error is passed on as it is.
 *
 * @example throw withoutRowValues(error);
 */
export function withoutRowValues(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const fields = error as Error & DatabaseErrorFields;
  if (fields.detail === undefined && fields.where === undefined && fields.internalQuery === undefined) return error;
  const kept = new Error(`PostgresAppStore: write failed (${typeof fields.code === 'string' ? `${fields.code} ` : ''}${error.message})`);
  for (const name of ['code', 'table', 'constraint'] as const) {
    if (typeof fields[name] === 'string') Object.assign(kept, { [name]: fields[name] });
  }
  return kept;
}
