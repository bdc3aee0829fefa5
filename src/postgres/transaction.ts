/**
 * One transaction on a connection of the pool: BEGIN, the work, COMMIT; on any failure ROLLBACK and the error
 * passed on. A connection whose transaction failed is released as broken (`release(true)`), so the pool never hands
 * out one left mid-transaction or with its query cut off.
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
  let failed = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    settle?.();
    client.release(failed);
  }
}
