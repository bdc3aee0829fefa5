/**
 * The registry's append-only change log, and the NOTIFY every committed change sends so that every instance's
 * lookup cache forgets the changed app.
 */
import type { Pool, PoolClient } from 'pg';
import type { AppChange } from '../apps/app.js';

/** The NOTIFY channel of registry changes. */
export const CHANGE_CHANNEL = 'sentinel_app_changes';

/**
 * One entry of an app's change log: who changed what, and when (registration, RFC 7591 §3; update and deletion,
 * RFC 7592 §2; secret rotation). Holds no secret.
 *
 * @example
 * for (const change of await store.listChanges('123456', clientId)) console.log(change.at, change.actor, change.action);
 */
export interface AppChangeRecord {
  at: Date;
  accountId: string;
  clientId: string;
  actor: string;
  action: 'created' | 'replaced' | 'updated' | 'deleted' | 'secret-rotated' | 'disabled' | 'enabled';
  detail: Record<string, unknown>;
}

/** Appends one change in the writing transaction and queues its NOTIFY (sent when the transaction commits). */
export async function logChange(
  client: PoolClient,
  accountId: string,
  clientId: string,
  change: AppChange,
  action: AppChangeRecord['action'],
  detail: Record<string, unknown>,
): Promise<void> {
  await client.query('INSERT INTO sentinel_app_changes (account_id, client_id, actor, action, detail) VALUES ($1, $2, $3, $4, $5)', [
    accountId,
    clientId,
    change.actor,
    action,
    JSON.stringify(detail),
  ]);
  // Delivered on commit only, so no instance evicts for a change that rolled back.
  await client.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify({ a: accountId, c: clientId })]);
}

/** The change log of one app, oldest first (it survives the app's deletion). */
export async function listChanges(pool: Pool, accountId: string, clientId: string): Promise<AppChangeRecord[]> {
  const result = await pool.query<{ at: Date; actor: string; action: AppChangeRecord['action']; detail: Record<string, unknown> }>(
    'SELECT at, actor, action, detail FROM sentinel_app_changes WHERE account_id = $1 AND client_id = $2 ORDER BY id',
    [accountId, clientId],
  );
  return result.rows.map((row) => ({ ...row, accountId, clientId }));
}
