/**
 * `PostgresAppStore`: the application registry in PostgreSQL (`sentinel-idp/postgres`), on the `pg` driver.
 *
 * Only types come from `pg` at load time: with `{ pool }` the host's pool is used as is, and with
 * `{ connectionString }` the driver is loaded on first use, so the subpath loads even where `pg` is not installed.
 * Every write is one transaction that also appends to the change log and sends the NOTIFY that evicts the app from
 * every instance's lookup cache when it commits, so a failed write leaves nothing half-done.
 */
import type { Pool, PoolClient } from 'pg';
import { assertAppFields } from '../apps/app-fields.js';
import { ConfigurationError } from '../errors.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';
import type { App, AppChange, AppPatch, AppStore } from '../apps/app.js';
import { applyAppPatch } from '../apps/app-patch.js';
import { type AppRow, appRowValues, describe, SELECT_APPS, selectAppRow, storable, appFromRow } from './app-rows.js';
import { type AppChangeRecord, listChanges, logChange } from './change-log.js';
import { ChangeListener } from './change-listener.js';
import { type AppCacheOptions, AppLookupCache } from './lookup-cache.js';
import { runMigrations } from './migrations.js';
import { replaceSecret } from './secret-rows.js';
import type { TrustedIssuer } from '../trusted-issuers/trusted-issuer.js';
import {
  checkedTrustedIssuer,
  removeTrustedIssuer,
  selectTrustedIssuerChanges,
  selectTrustedIssuers,
  type TrustedIssuerChangeRecord,
  upsertTrustedIssuer,
} from './trusted-issuer-rows.js';
import { loadPool, outsideClient, POSTGRES_OPTION_KEYS, type PostgresAppStoreOptions } from './pool.js';
import { inTransaction } from './transaction.js';

/**
 * The {@link AppStore} on PostgreSQL: apps (the client registrations of RFC 6749 §2 and RFC 7591 §2), their
 * hashed secrets (several during a rotation, each with an expiry), redirect URIs and an append-only change log. Run `migrate()` once per deployment (or at every start:
 * it is idempotent and safe from several instances at once).
 *
 * @example
 * import { PostgresAppStore } from 'sentinel-idp/postgres';
 * const appStore = new PostgresAppStore({ connectionString: process.env.DATABASE_URL! });
 * await appStore.migrate();
 * const sentinel = createSentinel({ issuer, keys, users, appStore, registration: { initialAccessToken } });
 * // on shutdown: await appStore.close();
 */
export class PostgresAppStore implements AppStore {
  readonly #options: PostgresAppStoreOptions;
  readonly #ownsPool: boolean;
  #pool: Pool | undefined;
  #poolPromise: Promise<Pool> | undefined;
  readonly #cache: AppLookupCache | undefined;
  readonly #changes: ChangeListener | undefined;
  #closed = false;
  /** The first close()'s work, which every later call waits on. */
  #closing: Promise<void> | undefined;

  constructor(options: PostgresAppStoreOptions) {
    if (typeof options !== 'object' || options === null || (options.pool === undefined && typeof options.connectionString !== 'string')) {
      throw new TypeError('PostgresAppStore needs { connectionString } or { pool }');
    }
    assertKnownKeys(options, POSTGRES_OPTION_KEYS, 'PostgresAppStore');
    if (typeof options.cache === 'object')
      assertKnownKeys(options.cache, { max: true, ttlSeconds: true } satisfies KeysOf<AppCacheOptions>, 'PostgresAppStore.cache');
    if (
      options.cache !== false &&
      options.pool !== undefined &&
      (typeof options.pool.options !== 'object' || options.pool.options === null)
    ) {
      // Without the pool's options the listener's own connection could not be made to the same database.
      throw new ConfigurationError('pool', "must be a pg Pool (its options make the change listener's connection), or use cache: false");
    }
    this.#options = options;
    this.#ownsPool = options.pool === undefined;
    if (options.pool !== undefined) this.#adopt(options.pool);
    this.#cache = options.cache === false ? undefined : new AppLookupCache(options.cache);
    this.#changes =
      this.#cache === undefined ? undefined : new ChangeListener(async () => outsideClient(await this.#getPool()), this.#cache);
  }

  #adopt(pool: Pool): Pool {
    // An idle connection that dies (database restart) emits 'error' on the pool; unheard, it would crash the host.
    pool.on('error', () => {});
    this.#pool = pool;
    return pool;
  }

  async #getPool(): Promise<Pool> {
    if (this.#closed) throw new Error('PostgresAppStore is closed');
    if (this.#pool !== undefined) return this.#pool;
    this.#poolPromise ??= loadPool(this.#options).then(async (pool) => {
      // close() ran while the driver loaded: nobody would end this pool, and its connections would keep the host's
      // process alive. End it now, unused.
      if (this.#closed) {
        await pool.end().catch(() => {});
        throw new Error('PostgresAppStore is closed');
      }
      return this.#adopt(pool);
    });
    return this.#poolPromise;
  }

  /**
   * Creates or upgrades the schema; returns the migration versions it applied.
   * @example await new PostgresAppStore({ connectionString }).migrate(); // [1] the first time, [] after
   */
  async migrate(): Promise<number[]> {
    return runMigrations(await this.#getPool());
  }

  /**
   * Stops the change listener and, when the store made the pool, ends it (a pool still being made when close() runs
   * is ended as soon as it exists, and the lookups waiting on it fail). Every call answers with the first one's
   * promise, so a second caller resolves only when the connections are gone.
   * @example process.on('SIGTERM', () => appStore.close());
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= (async () => {
      await this.#changes?.close();
      if (this.#ownsPool && this.#pool !== undefined) await this.#pool.end();
    })();
    return this.#closing;
  }

  async findApp(accountId: string, clientId: string): Promise<App | null> {
    if (!storable(accountId, clientId)) return null;
    const cached = this.#cache?.getApp(accountId, clientId);
    if (cached !== undefined) return cached;
    this.#changes?.ensure();
    const generation = this.#cache?.generation() ?? 0;
    const row = await selectAppRow(await this.#getPool(), accountId, clientId, false);
    if (row === undefined) return null;
    const app = appFromRow(row);
    this.#cache?.putApp(app, generation);
    return app;
  }

  /** The app while it is disabled (see `AppStore.findDisabledApp`): read from its row, never cached. */
  async findDisabledApp(accountId: string, clientId: string): Promise<App | null> {
    if (!storable(accountId, clientId)) return null;
    const row = await selectAppRow(await this.#getPool(), accountId, clientId, true);
    return row === undefined ? null : appFromRow(row);
  }

  /**
   * Whether the account holds any app, a disabled one too (as `MemoryAppStore` answers): disabling is reversible, and
   * a disabled app is still sent logout tokens signed by the account's keys and checked at its `jwks_uri`, so the
   * account (its metadata, JWKS and key ring) lives until its last app is deleted.
   */
  async hasAccount(accountId: string): Promise<boolean> {
    if (!storable(accountId)) return false;
    if (this.#cache?.hasAccount(accountId) === true) return true;
    this.#changes?.ensure();
    const generation = this.#cache?.generation() ?? 0;
    const pool = await this.#getPool();
    const result = await pool.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM sentinel_apps WHERE account_id = $1) AS found', [
      accountId,
    ]);
    const found = result.rows[0]?.found === true;
    if (found) this.#cache?.putAccount(accountId, generation);
    return found;
  }

  async listApps(accountId: string): Promise<App[]> {
    if (!storable(accountId)) return [];
    const pool = await this.#getPool();
    const result = await pool.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 ORDER BY a.created_at, a.client_id`, [accountId]);
    return result.rows.map(appFromRow);
  }

  /**
   * The change log of one app, oldest first (it survives the app's deletion).
   * @example const history = await store.listChanges('123456', clientId);
   */
  async listChanges(accountId: string, clientId: string): Promise<AppChangeRecord[]> {
    return listChanges(await this.#getPool(), accountId, clientId);
  }

  async saveApp(app: App, change: AppChange = { actor: 'api' }): Promise<void> {
    // Only known fields have a column (or a place in `metadata`): anything else would be dropped on the way in.
    assertAppFields(app);
    await this.#write(app.accountId, app.clientId, async (client) => {
      const saved = await client.query<{ inserted: boolean }>(
        `INSERT INTO sentinel_apps AS a (account_id, client_id, name, scope, grant_types, token_endpoint_auth_method,
                                         registration_access_token_hash, created_at, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $8, COALESCE(to_timestamp($9::float8), now()), $7::jsonb)
         ON CONFLICT (account_id, client_id) DO UPDATE
           SET name = EXCLUDED.name, scope = EXCLUDED.scope, grant_types = EXCLUDED.grant_types,
               token_endpoint_auth_method = EXCLUDED.token_endpoint_auth_method,
               registration_access_token_hash = EXCLUDED.registration_access_token_hash, metadata = EXCLUDED.metadata,
               updated_at = now()
         RETURNING (xmax = 0) AS inserted`,
        [...appRowValues(app), app.registrationAccessTokenHash ?? null, app.createdAt ?? null],
      );
      await this.#replaceRedirectUris(client, app);
      await client.query('DELETE FROM sentinel_app_secrets WHERE account_id = $1 AND client_id = $2', [app.accountId, app.clientId]);
      const hashes = [
        ...(app.clientSecretHash === undefined ? [] : [app.clientSecretHash]),
        ...(app.retiringSecrets ?? []).map((s) => s.hash),
      ];
      const expiries = [...(app.clientSecretHash === undefined ? [] : [null]), ...(app.retiringSecrets ?? []).map((s) => s.expiresAt)];
      await client.query(
        `INSERT INTO sentinel_app_secrets (account_id, client_id, secret_hash, expires_at)
         SELECT $1, $2, s.hash, to_timestamp(s.expires_at) FROM unnest($3::text[], $4::float8[]) AS s(hash, expires_at)
         ON CONFLICT DO NOTHING`,
        [app.accountId, app.clientId, hashes, expiries],
      );
      const action = saved.rows[0]?.inserted === true ? 'created' : 'replaced';
      await logChange(client, app.accountId, app.clientId, change, action, describe(app));
    });
  }

  async updateApp(app: App, change: AppChange = { actor: 'api' }): Promise<boolean> {
    assertAppFields(app);
    if (!storable(app.accountId, app.clientId)) return false;
    return this.#write(app.accountId, app.clientId, (client) => this.#overwrite(client, app, change));
  }

  async patchApp(
    accountId: string,
    clientId: string,
    update: (current: App) => AppPatch,
    change: AppChange = { actor: 'api' },
  ): Promise<App | null> {
    if (!storable(accountId, clientId)) return null;
    return this.#write(accountId, clientId, async (client) => {
      // The row lock holds off every other write to the app until this transaction ends: the metadata written is the
      // locked row's with the patch applied, never a copy read before someone else's change.
      const locked = await client.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 AND a.client_id = $2 FOR UPDATE OF a`, [
        accountId,
        clientId,
      ]);
      const row = locked.rows[0];
      if (row === undefined) return null;
      const current = appFromRow(row);
      const next = applyAppPatch(current, update(current));
      await this.#overwrite(client, next, change);
      return Object.freeze(next);
    });
  }

  async deleteApp(accountId: string, clientId: string, change: AppChange = { actor: 'api' }): Promise<boolean> {
    if (!storable(accountId, clientId)) return false;
    return this.#write(accountId, clientId, async (client) => {
      const deleted = await client.query('DELETE FROM sentinel_apps WHERE account_id = $1 AND client_id = $2', [accountId, clientId]);
      if (deleted.rowCount === 0) return false;
      await logChange(client, accountId, clientId, change, 'deleted', {});
      return true;
    });
  }

  /**
   * Disables an app: it stays in the registry (listed, with its history) but the service no longer knows it, so its
   * client credentials, codes and refresh tokens stop working at once, as after a deletion. `false` when unknown.
   * @example await store.disableApp('123456', clientId, { actor: 'cli:alice' });
   */
  async disableApp(accountId: string, clientId: string, change: AppChange = { actor: 'api' }): Promise<boolean> {
    return this.#setDisabled(accountId, clientId, true, change);
  }

  /**
   * Enables a disabled app again, with the secrets it had. `false` when unknown.
   * @example await store.enableApp('123456', clientId, { actor: 'cli:alice' });
   */
  async enableApp(accountId: string, clientId: string, change: AppChange = { actor: 'api' }): Promise<boolean> {
    return this.#setDisabled(accountId, clientId, false, change);
  }

  async #setDisabled(accountId: string, clientId: string, disabled: boolean, change: AppChange): Promise<boolean> {
    if (!storable(accountId, clientId)) return false;
    return this.#write(accountId, clientId, async (client) => {
      const updated = await client.query(
        `UPDATE sentinel_apps SET disabled_at = CASE WHEN $3::boolean THEN COALESCE(disabled_at, now()) END, updated_at = now()
          WHERE account_id = $1 AND client_id = $2`,
        [accountId, clientId, disabled],
      );
      if (updated.rowCount === 0) return false;
      await logChange(client, accountId, clientId, change, disabled ? 'disabled' : 'enabled', {});
      return true;
    });
  }

  async rotateClientSecret(
    accountId: string,
    clientId: string,
    secretHash: string,
    overlapSeconds: number,
    change: AppChange = { actor: 'api' },
  ): Promise<App | null> {
    if (!storable(accountId, clientId)) return null;
    return this.#write(accountId, clientId, async (client) => {
      // The row lock serialises concurrent rotations of one app: each sees the other's result, none is lost.
      const locked = await client.query('SELECT 1 FROM sentinel_apps WHERE account_id = $1 AND client_id = $2 FOR UPDATE', [
        accountId,
        clientId,
      ]);
      if (locked.rowCount === 0) return null;
      await replaceSecret(client, accountId, clientId, secretHash, overlapSeconds);
      const key = [accountId, clientId];
      await client.query('UPDATE sentinel_apps SET updated_at = now() WHERE account_id = $1 AND client_id = $2', key);
      await logChange(client, accountId, clientId, change, 'secret-rotated', { overlapSeconds });
      const reloaded = await client.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 AND a.client_id = $2`, key);
      const row = reloaded.rows[0];
      return row === undefined ? null : appFromRow(row);
    });
  }

  /**
   * The brand issuers `accountId` trusts in the registry (the service asks on a brand JWT whose `iss` the
   * `trustedIssuers` option does not name). Cached like apps, and forgotten on every instance when they change.
   * @example const issuers = await store.findTrustedIssuers('123456');
   */
  async findTrustedIssuers(accountId: string): Promise<readonly TrustedIssuer[]> {
    if (!storable(accountId)) return [];
    const cached = this.#cache?.getIssuers(accountId);
    if (cached !== undefined) return cached;
    this.#changes?.ensure();
    const generation = this.#cache?.generation() ?? 0;
    const issuers = Object.freeze(await selectTrustedIssuers(await this.#getPool(), accountId));
    this.#cache?.putIssuers(accountId, issuers, generation);
    return issuers;
  }

  /**
   * Every trusted issuer of `accountId`, read fresh (the CLI's and an operator's view; no cache).
   * @example for (const entry of await store.listTrustedIssuers('123456')) console.log(entry.issuer);
   */
  async listTrustedIssuers(accountId: string): Promise<TrustedIssuer[]> {
    if (!storable(accountId)) return [];
    return selectTrustedIssuers(await this.#getPool(), accountId);
  }

  /**
   * Trusts a brand issuer for an account, or replaces the entry of the same `issuer`: checked as the
   * `trustedIssuers` option is, written with its change-log row, and forgotten by every instance's cache.
   * @throws ConfigurationError when the entry would not be a valid `trustedIssuers` entry (nothing written).
   * @example await store.saveTrustedIssuer({ accountId: '123456', issuer: 'https://id.brand.example', jwksUri: 'https://id.brand.example/jwks.json' }, { actor: 'cli:alice' });
   */
  async saveTrustedIssuer(entry: TrustedIssuer, change: AppChange = { actor: 'api' }): Promise<'added' | 'replaced'> {
    const checked = checkedTrustedIssuer(entry);
    return this.#writeIssuers(checked.accountId, (client) => upsertTrustedIssuer(client, checked, change));
  }

  /**
   * Stops trusting an issuer: its JWTs are refused from the next request on (every instance), unless the service's
   * `trustedIssuers` option names it too (that entry is read first, and this one never). `false` when unknown.
   * @example await store.deleteTrustedIssuer('123456', 'https://id.brand.example', { actor: 'cli:alice' });
   */
  async deleteTrustedIssuer(accountId: string, issuer: string, change: AppChange = { actor: 'api' }): Promise<boolean> {
    if (!storable(accountId)) return false;
    return this.#writeIssuers(accountId, (client) => removeTrustedIssuer(client, accountId, issuer, change));
  }

  /**
   * The change log of one trusted issuer of an account, oldest first (it survives the entry's removal).
   * @example const history = await store.listTrustedIssuerChanges('123456', 'https://id.brand.example');
   */
  async listTrustedIssuerChanges(accountId: string, issuer: string): Promise<TrustedIssuerChangeRecord[]> {
    return selectTrustedIssuerChanges(await this.#getPool(), accountId, issuer);
  }

  /**
   * Writes every field of `app` but its secrets and creation time over its row, and logs the change as `updated`.
   * `false` when the app has no row.
   */
  async #overwrite(client: PoolClient, app: App, change: AppChange): Promise<boolean> {
    const updated = await client.query(
      `UPDATE sentinel_apps SET name = $3, scope = $4, grant_types = $5, token_endpoint_auth_method = $6, metadata = $7::jsonb,
                                updated_at = now()
        WHERE account_id = $1 AND client_id = $2`,
      appRowValues(app),
    );
    if (updated.rowCount === 0) return false;
    await this.#replaceRedirectUris(client, app);
    await logChange(client, app.accountId, app.clientId, change, 'updated', describe(app));
    return true;
  }

  /** One transaction on an account's trusted issuers; this instance forgets them whatever the outcome. */
  async #writeIssuers<T>(accountId: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(await this.#getPool(), work, () => this.#cache?.evictIssuers(accountId));
  }

  async #replaceRedirectUris(client: PoolClient, app: App): Promise<void> {
    await client.query('DELETE FROM sentinel_app_redirect_uris WHERE account_id = $1 AND client_id = $2', [app.accountId, app.clientId]);
    await client.query(
      `INSERT INTO sentinel_app_redirect_uris (account_id, client_id, position, uri)
       SELECT $1, $2, u.position, u.uri FROM unnest($3::text[]) WITH ORDINALITY AS u(uri, position)`,
      [app.accountId, app.clientId, [...app.redirectUris]],
    );
  }

  /**
   * One transaction; this instance's cache forgets the app once it ends, committed or not (the NOTIFY tells the
   * others).
   */
  async #write<T>(accountId: string, clientId: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(await this.#getPool(), work, () => this.#cache?.evict(accountId, clientId));
  }
}
