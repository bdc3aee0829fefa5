/**
 * The secret rows of one app's rotation (`PostgresAppStore.rotateClientSecret`), inside its transaction and under
 * its row lock: the rules of `AppStore.rotateClientSecret`, and at most {@link MAX_RETIRING_SECRETS} retiring.
 */
import type { PoolClient } from 'pg';
import { MAX_RETIRING_SECRETS } from '../apps/client-secrets.js';

/**
 * Makes `secretHash` the app's current secret; the previous one retires for `overlapSeconds` (none with 0), and
 * the oldest retiring secrets beyond {@link MAX_RETIRING_SECRETS} are dropped.
 *
 * @example await replaceSecret(client, '123456', clientId, hashClientSecret(secret), 3600);
 */
export async function replaceSecret(
  client: PoolClient,
  accountId: string,
  clientId: string,
  secretHash: string,
  overlapSeconds: number,
): Promise<void> {
  const key = [accountId, clientId];
  await client.query('DELETE FROM sentinel_app_secrets WHERE account_id = $1 AND client_id = $2 AND expires_at <= now()', key);
  if (overlapSeconds > 0) {
    // The current secret (no expiry: LEAST skips NULL) retires at the end of the overlap, and so does any secret of
    // an earlier rotation whose longer overlap would outlive it: "the previous secret keeps working for N seconds".
    await client.query(
      `UPDATE sentinel_app_secrets SET expires_at = LEAST(expires_at, now() + make_interval(secs => $3))
          WHERE account_id = $1 AND client_id = $2`,
      [...key, overlapSeconds],
    );
  } else {
    // No overlap ends every earlier secret, also one still in an earlier rotation's overlap (the way out of a leak).
    await client.query('DELETE FROM sentinel_app_secrets WHERE account_id = $1 AND client_id = $2', key);
  }
  // clock_timestamp(), not now(): rotations serialised by the row lock get created_at in the order they ran, which
  // is the order the bound below drops retiring secrets in (the one made current longest ago first).
  await client.query(
    'INSERT INTO sentinel_app_secrets (account_id, client_id, secret_hash, created_at) VALUES ($1, $2, $3, clock_timestamp())',
    [...key, secretHash],
  );
  await client.query(
    `DELETE FROM sentinel_app_secrets s WHERE s.account_id = $1 AND s.client_id = $2 AND s.expires_at IS NOT NULL
         AND s.secret_hash NOT IN (SELECT k.secret_hash FROM sentinel_app_secrets k
                                    WHERE k.account_id = $1 AND k.client_id = $2 AND k.expires_at IS NOT NULL
                                    ORDER BY k.created_at DESC, k.expires_at DESC LIMIT $3)`,
    [...key, MAX_RETIRING_SECRETS],
  );
}
