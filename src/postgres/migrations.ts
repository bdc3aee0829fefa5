/**
 * The schema of {@link PostgresAppStore}, as numbered migrations. `migrate()` applies the missing ones in order,
 * each in the same transaction as its bookkeeping row, under a transaction-scoped advisory lock: two instances
 * starting at once serialise on the lock, and the second finds nothing left to do (under READ COMMITTED whatever
 * the database's default isolation, so that it sees what the first committed).
 */
import type { Pool } from 'pg';
import { lockForMigration } from './migration-lock.js';
import { inTransaction } from './transaction.js';

/** One schema step; versions only ever grow, and a released step is never edited (add a new one instead). */
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/** A fixed key for `pg_advisory_xact_lock`: every instance of this package migrating any database takes the same one. */
const MIGRATION_LOCK_KEY = 7_364_001_717;

/**
 * Every migration, oldest first. Accounts have no table of their own: an account exists while it has at least one
 * app, so registering the first app creates it and deleting the last one removes it.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'apps, their secrets and redirect URIs, and the append-only change log',
    sql: `
CREATE TABLE sentinel_apps (
  account_id text NOT NULL,
  client_id text NOT NULL,
  name text,
  scope text,
  grant_types text[] NOT NULL,
  token_endpoint_auth_method text NOT NULL,
  registration_access_token_hash text,
  -- Client metadata added by later features (e.g. a JWK set) goes here until it earns a column.
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, client_id)
);
CREATE TABLE sentinel_app_secrets (
  account_id text NOT NULL,
  client_id text NOT NULL,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- NULL for the current secret; the time a retiring secret stops working otherwise.
  expires_at timestamptz,
  PRIMARY KEY (account_id, client_id, secret_hash),
  FOREIGN KEY (account_id, client_id) REFERENCES sentinel_apps (account_id, client_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX sentinel_app_secrets_one_current ON sentinel_app_secrets (account_id, client_id) WHERE expires_at IS NULL;
CREATE TABLE sentinel_app_redirect_uris (
  account_id text NOT NULL,
  client_id text NOT NULL,
  position integer NOT NULL,
  uri text NOT NULL,
  PRIMARY KEY (account_id, client_id, position),
  FOREIGN KEY (account_id, client_id) REFERENCES sentinel_apps (account_id, client_id) ON DELETE CASCADE
);
-- No foreign key: the history of an app outlives the app.
CREATE TABLE sentinel_app_changes (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  account_id text NOT NULL,
  client_id text NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX sentinel_app_changes_by_app ON sentinel_app_changes (account_id, client_id, id);
CREATE FUNCTION sentinel_app_changes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sentinel_app_changes is append-only';
END
$$;
CREATE TRIGGER sentinel_app_changes_append_only BEFORE UPDATE OR DELETE ON sentinel_app_changes
  FOR EACH ROW EXECUTE FUNCTION sentinel_app_changes_append_only();
`,
  },
  {
    version: 2,
    description: 'apps can be disabled (kept, but unknown to the service) and enabled again',
    sql: `
ALTER TABLE sentinel_apps ADD COLUMN disabled_at timestamptz;
`,
  },
  {
    version: 3,
    description: 'trusted brand issuers of each account (RFC 7523, RFC 8693) and their append-only change log',
    sql: `
CREATE TABLE sentinel_trusted_issuers (
  account_id text NOT NULL,
  issuer text NOT NULL,
  jwks_uri text,
  jwks jsonb,
  audience text,
  consumer_id_claim text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, issuer),
  -- Where the keys are: exactly one of a URL and an inline set, as the trustedIssuers option requires.
  CHECK ((jwks_uri IS NULL) <> (jwks IS NULL))
);
-- No foreign key: who trusted an issuer, and when it stopped, outlives the entry.
CREATE TABLE sentinel_trusted_issuer_changes (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  account_id text NOT NULL,
  issuer text NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX sentinel_trusted_issuer_changes_by_issuer ON sentinel_trusted_issuer_changes (account_id, issuer, id);
CREATE FUNCTION sentinel_trusted_issuer_changes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sentinel_trusted_issuer_changes is append-only';
END
$$;
CREATE TRIGGER sentinel_trusted_issuer_changes_append_only BEFORE UPDATE OR DELETE ON sentinel_trusted_issuer_changes
  FOR EACH ROW EXECUTE FUNCTION sentinel_trusted_issuer_changes_append_only();
`,
  },
];

/**
 * Brings the schema to the latest version; returns the versions it applied (empty when already current).
 * All-or-nothing: a failure rolls back the whole run.
 */
export async function runMigrations(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  return inTransaction(pool, async (client) => {
    await lockForMigration(client, MIGRATION_LOCK_KEY);
    await client.query(
      `CREATE TABLE IF NOT EXISTS sentinel_migrations (
         version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await client.query<{ version: number }>('SELECT version FROM sentinel_migrations');
    const applied = new Set(done.rows.map((row) => row.version));
    const ran: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO sentinel_migrations (version, description) VALUES ($1, $2)', [
        migration.version,
        migration.description,
      ]);
      ran.push(migration.version);
    }
    return ran;
  });
}
