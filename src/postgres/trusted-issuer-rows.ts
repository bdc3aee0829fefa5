/**
 * The trusted brand issuers of the PostgreSQL registry (`sentinel_trusted_issuers`, migration 3): how an entry is
 * checked before it is written, laid out in its row and read back, and its append-only change log. Every write
 * appends to the log and queues the NOTIFY that makes every instance forget the account's cached issuers.
 */
import type { Pool, PoolClient } from 'pg';
import type { AppChange } from '../apps/app.js';
import { ConfigurationError } from '../errors.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import { assertValidTrustedIssuer, type TrustedIssuer, trustedIssuerSchema } from '../trusted-issuers/trusted-issuer.js';
import { CHANGE_CHANNEL } from './change-log.js';

/**
 * One entry of a trusted issuer's change log: who added, replaced or removed it, and when. Holds the entry's
 * non-secret fields (an issuer's keys are public).
 *
 * @example
 * for (const change of await store.listTrustedIssuerChanges('123456', 'https://id.brand.example')) console.log(change.action);
 */
export interface TrustedIssuerChangeRecord {
  at: Date;
  accountId: string;
  issuer: string;
  actor: string;
  action: 'added' | 'replaced' | 'removed';
  detail: Record<string, unknown>;
}

interface TrustedIssuerRow {
  account_id: string;
  issuer: string;
  jwks_uri: string | null;
  jwks: { keys: Record<string, unknown>[] } | null;
  audience: string | null;
  consumer_id_claim: string | null;
}

const ENTRY_KEYS = {
  accountId: true,
  issuer: true,
  jwksUri: true,
  jwks: true,
  audience: true,
  consumerIdClaim: true,
} satisfies KeysOf<TrustedIssuer>;

const SELECT_ISSUERS = 'SELECT account_id, issuer, jwks_uri, jwks, audience, consumer_id_claim FROM sentinel_trusted_issuers';

/**
 * Checks an entry as the `trustedIssuers` option does (shape, exactly one of `jwks` / `jwksUri`, public keys), so the
 * registry never holds an issuer the option would refuse for itself. A plain http `jwksUri` is not refused here: the
 * registry cannot know whether the services reading it allow one (`clientJwks.allowPrivateAddresses`, development
 * only); the CLI refuses it, and a service that does not allow it refuses that issuer's JWTs (`invalid_grant`).
 * @throws ConfigurationError naming the wrong field.
 */
export function checkedTrustedIssuer(entry: TrustedIssuer): TrustedIssuer {
  assertKnownKeys(entry, ENTRY_KEYS, 'trustedIssuer');
  const parsed = trustedIssuerSchema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigurationError(['trustedIssuer', ...(issue?.path ?? []).map(String)].join('.'), issue?.message ?? 'is invalid');
  }
  const checked = parsed.data as TrustedIssuer;
  assertValidTrustedIssuer(checked, 'trustedIssuer');
  return checked;
}

function entryOf(row: TrustedIssuerRow): TrustedIssuer {
  return {
    accountId: row.account_id,
    issuer: row.issuer,
    ...(row.jwks_uri === null ? {} : { jwksUri: row.jwks_uri }),
    ...(row.jwks === null ? {} : { jwks: row.jwks }),
    ...(row.audience === null ? {} : { audience: row.audience }),
    ...(row.consumer_id_claim === null ? {} : { consumerIdClaim: row.consumer_id_claim }),
  };
}

/** What the change log keeps of an entry: where its keys are (the key ids of an inline set), never more. */
function describeIssuer(entry: TrustedIssuer): Record<string, unknown> {
  return {
    ...(entry.jwksUri === undefined ? {} : { jwksUri: entry.jwksUri }),
    ...(entry.jwks === undefined ? {} : { jwksKids: entry.jwks.keys.map((key) => (typeof key.kid === 'string' ? key.kid : null)) }),
    ...(entry.audience === undefined ? {} : { audience: entry.audience }),
    ...(entry.consumerIdClaim === undefined ? {} : { consumerIdClaim: entry.consumerIdClaim }),
  };
}

/** The issuers `accountId` trusts (or every account's when `accountId` is undefined), in a stable order. */
export async function selectTrustedIssuers(pool: Pool, accountId: string | undefined): Promise<TrustedIssuer[]> {
  const result =
    accountId === undefined
      ? await pool.query<TrustedIssuerRow>(`${SELECT_ISSUERS} ORDER BY account_id, issuer`)
      : await pool.query<TrustedIssuerRow>(`${SELECT_ISSUERS} WHERE account_id = $1 ORDER BY issuer`, [accountId]);
  return result.rows.map(entryOf);
}

async function logIssuerChange(
  client: PoolClient,
  accountId: string,
  issuer: string,
  change: AppChange,
  action: TrustedIssuerChangeRecord['action'],
  detail: Record<string, unknown>,
): Promise<void> {
  await client.query(
    'INSERT INTO sentinel_trusted_issuer_changes (account_id, issuer, actor, action, detail) VALUES ($1, $2, $3, $4, $5)',
    [accountId, issuer, change.actor, action, JSON.stringify(detail)],
  );
  // `i` tells the listeners that the account's issuers changed (no app did); delivered on commit only.
  await client.query('SELECT pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify({ a: accountId, i: 1 })]);
}

/** Adds or replaces one entry (already checked) in the writing transaction, with its change-log row. */
export async function upsertTrustedIssuer(client: PoolClient, entry: TrustedIssuer, change: AppChange): Promise<'added' | 'replaced'> {
  const saved = await client.query<{ inserted: boolean }>(
    `INSERT INTO sentinel_trusted_issuers AS t (account_id, issuer, jwks_uri, jwks, audience, consumer_id_claim)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6)
     ON CONFLICT (account_id, issuer) DO UPDATE
       SET jwks_uri = EXCLUDED.jwks_uri, jwks = EXCLUDED.jwks, audience = EXCLUDED.audience,
           consumer_id_claim = EXCLUDED.consumer_id_claim, updated_at = now()
     RETURNING (xmax = 0) AS inserted`,
    [
      entry.accountId,
      entry.issuer,
      entry.jwksUri ?? null,
      entry.jwks === undefined ? null : JSON.stringify(entry.jwks),
      entry.audience ?? null,
      entry.consumerIdClaim ?? null,
    ],
  );
  const action = saved.rows[0]?.inserted === true ? 'added' : 'replaced';
  await logIssuerChange(client, entry.accountId, entry.issuer, change, action, describeIssuer(entry));
  return action;
}

/** Removes one entry in the writing transaction; `false` (and no log row) when it was not there. */
export async function removeTrustedIssuer(client: PoolClient, accountId: string, issuer: string, change: AppChange): Promise<boolean> {
  const deleted = await client.query('DELETE FROM sentinel_trusted_issuers WHERE account_id = $1 AND issuer = $2', [accountId, issuer]);
  if (deleted.rowCount === 0) return false;
  await logIssuerChange(client, accountId, issuer, change, 'removed', {});
  return true;
}

/** The change log of one issuer of one account, oldest first (it survives the entry's removal). */
export async function selectTrustedIssuerChanges(pool: Pool, accountId: string, issuer: string): Promise<TrustedIssuerChangeRecord[]> {
  const result = await pool.query<{
    at: Date;
    actor: string;
    action: TrustedIssuerChangeRecord['action'];
    detail: Record<string, unknown>;
  }>('SELECT at, actor, action, detail FROM sentinel_trusted_issuer_changes WHERE account_id = $1 AND issuer = $2 ORDER BY id', [
    accountId,
    issuer,
  ]);
  return result.rows.map((row) => ({ ...row, accountId, issuer }));
}
