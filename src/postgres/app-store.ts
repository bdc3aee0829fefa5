/**
 * `PostgresAppStore`: the application registry in PostgreSQL (`sentinel-idp/postgres`), on the `pg` driver.
 *
 * Only types come from `pg` at load time: with `{ pool }` the host's pool is used as is, and with
 * `{ connectionString }` the driver is loaded on first use, so the subpath loads even where `pg` is not installed.
 * Every write is one transaction that also appends to the change log and sends the NOTIFY that evicts the app from
 * every instance's lookup cache when it commits, so a failed write leaves nothing half-done.
 */
import type { Notification, Pool, PoolClient, PoolConfig } from 'pg';
import type { App, AppChange, AppStore } from '../apps.js';
import { type AppRow, describe, keyedFieldsOf, SELECT_APPS, storable, toApp } from './app-rows.js';
import { AppLookupCache, type AppCacheOptions } from './lookup-cache.js';
import { runMigrations } from './migrations.js';

/** The NOTIFY channel of registry changes. */
const CHANNEL = 'sentinel_app_changes';
/** How long a lost change listener waits before it tries again, in milliseconds. */
const LISTEN_RETRY_MS = 1000;

/**
 * Options of {@link PostgresAppStore}: a connection string (the store makes and owns its pool) or a `pg` Pool of
 * the host's (the store borrows one connection of it for LISTEN for as long as it runs). The store keeps the client
 * registrations of RFC 6749 §2 and RFC 7591 §2.
 *
 * @example
 * const options: PostgresAppStoreOptions = { connectionString: process.env.DATABASE_URL!, cache: { ttlSeconds: 15 } };
 */
export type PostgresAppStoreOptions = ({ connectionString: string; pool?: undefined } | { pool: Pool; connectionString?: undefined }) & {
  /** The lookup cache; `false` sends every lookup to the database. */
  cache?: AppCacheOptions | false;
  /** With `connectionString`: longest wait for a connection and for a query, in milliseconds. Default 2000 / 5000. */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** With `connectionString`: most connections in the pool. Default 10. */
  maxConnections?: number;
};

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

async function loadPool(options: PostgresAppStoreOptions): Promise<Pool> {
  let driver: typeof import('pg');
  try {
    driver = await import('pg');
  } catch {
    throw new Error('PostgresAppStore with connectionString needs the "pg" package: npm install pg');
  }
  const PoolClass = driver.Pool ?? (driver as unknown as { default: typeof import('pg') }).default.Pool;
  const config: PoolConfig = {
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 10_000,
  };
  return new PoolClass(config);
}

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
  #listener: PoolClient | undefined;
  #listening: Promise<void> | undefined;
  #nextListenAt = 0;
  #closed = false;

  constructor(options: PostgresAppStoreOptions) {
    if (typeof options !== 'object' || options === null || (options.pool === undefined && typeof options.connectionString !== 'string')) {
      throw new TypeError('PostgresAppStore needs { connectionString } or { pool }');
    }
    this.#options = options;
    this.#ownsPool = options.pool === undefined;
    if (options.pool !== undefined) this.#adopt(options.pool);
    this.#cache = options.cache === false ? undefined : new AppLookupCache(options.cache);
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
    this.#poolPromise ??= loadPool(this.#options).then((pool) => this.#adopt(pool));
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
   * Stops the change listener and, when the store made the pool, ends it.
   * @example process.on('SIGTERM', () => appStore.close());
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#cache !== undefined) this.#cache.live = false;
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.release(true);
    if (this.#ownsPool && this.#pool !== undefined) await this.#pool.end();
  }

  /** Starts LISTEN in the background when it is not running; lookups use the cache only once it runs. */
  #ensureListener(): void {
    const cache = this.#cache;
    if (cache === undefined || cache.live || this.#listening !== undefined || this.#closed || Date.now() < this.#nextListenAt) return;
    this.#listening = this.#listen(cache).finally(() => {
      this.#listening = undefined;
    });
  }

  async #listen(cache: AppLookupCache): Promise<void> {
    let client: PoolClient | undefined;
    try {
      client = await (await this.#getPool()).connect();
      const connected = client;
      const lost = (): void => {
        if (this.#listener !== connected) return;
        this.#listener = undefined;
        cache.live = false;
        this.#nextListenAt = Date.now() + LISTEN_RETRY_MS;
        connected.release(true);
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (message: Notification) => this.#onNotification(message));
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.#closed) {
        client.release(true);
        return;
      }
      this.#listener = client;
      cache.live = true;
    } catch {
      client?.release(true);
      this.#nextListenAt = Date.now() + LISTEN_RETRY_MS;
    }
  }

  #onNotification(message: Notification): void {
    if (message.channel !== CHANNEL || this.#cache === undefined) return;
    try {
      const { a, c } = JSON.parse(message.payload ?? '') as { a: unknown; c: unknown };
      if (typeof a === 'string' && typeof c === 'string') {
        this.#cache.evict(a, c);
        return;
      }
    } catch {
      // fall through: an unreadable notification still means something changed
    }
    this.#cache.clear();
  }

  async findApp(accountId: string, clientId: string): Promise<App | null> {
    if (!storable(accountId, clientId)) return null;
    const cached = this.#cache?.getApp(accountId, clientId);
    if (cached !== undefined) return cached;
    this.#ensureListener();
    const generation = this.#cache?.generation() ?? 0;
    const pool = await this.#getPool();
    const result = await pool.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 AND a.client_id = $2 AND a.disabled_at IS NULL`, [
      accountId,
      clientId,
    ]);
    const row = result.rows[0];
    if (row === undefined) return null;
    const app = toApp(row);
    this.#cache?.putApp(app, generation);
    return app;
  }

  async hasAccount(accountId: string): Promise<boolean> {
    if (!storable(accountId)) return false;
    if (this.#cache?.hasAccount(accountId) === true) return true;
    this.#ensureListener();
    const generation = this.#cache?.generation() ?? 0;
    const pool = await this.#getPool();
    const result = await pool.query<{ found: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM sentinel_apps WHERE account_id = $1 AND disabled_at IS NULL) AS found',
      [accountId],
    );
    const found = result.rows[0]?.found === true;
    if (found) this.#cache?.putAccount(accountId, generation);
    return found;
  }

  async listApps(accountId: string): Promise<App[]> {
    if (!storable(accountId)) return [];
    const pool = await this.#getPool();
    const result = await pool.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 ORDER BY a.created_at, a.client_id`, [accountId]);
    return result.rows.map(toApp);
  }

  /**
   * The change log of one app, oldest first (it survives the app's deletion).
   * @example const history = await store.listChanges('123456', clientId);
   */
  async listChanges(accountId: string, clientId: string): Promise<AppChangeRecord[]> {
    const pool = await this.#getPool();
    const result = await pool.query<{ at: Date; actor: string; action: AppChangeRecord['action']; detail: Record<string, unknown> }>(
      'SELECT at, actor, action, detail FROM sentinel_app_changes WHERE account_id = $1 AND client_id = $2 ORDER BY id',
      [accountId, clientId],
    );
    return result.rows.map((row) => ({ ...row, accountId, clientId }));
  }

  async saveApp(app: App, change: AppChange = { actor: 'api' }): Promise<void> {
    await this.#write(app.accountId, app.clientId, async (client) => {
      const saved = await client.query<{ inserted: boolean }>(
        `INSERT INTO sentinel_apps AS a (account_id, client_id, name, scope, grant_types, token_endpoint_auth_method,
                                         registration_access_token_hash, created_at, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE(to_timestamp($8::float8), now()), $9::jsonb)
         ON CONFLICT (account_id, client_id) DO UPDATE
           SET name = EXCLUDED.name, scope = EXCLUDED.scope, grant_types = EXCLUDED.grant_types,
               token_endpoint_auth_method = EXCLUDED.token_endpoint_auth_method,
               registration_access_token_hash = EXCLUDED.registration_access_token_hash, metadata = EXCLUDED.metadata,
               updated_at = now()
         RETURNING (xmax = 0) AS inserted`,
        [
          app.accountId,
          app.clientId,
          app.name ?? null,
          app.scope ?? null,
          [...app.grantTypes],
          app.tokenEndpointAuthMethod,
          app.registrationAccessTokenHash ?? null,
          app.createdAt ?? null,
          JSON.stringify(keyedFieldsOf(app)),
        ],
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
      await this.#log(client, app.accountId, app.clientId, change, action, describe(app));
    });
  }

  async updateApp(app: App, change: AppChange = { actor: 'api' }): Promise<boolean> {
    if (!storable(app.accountId, app.clientId)) return false;
    return this.#write(app.accountId, app.clientId, async (client) => {
      const updated = await client.query(
        `UPDATE sentinel_apps SET name = $3, scope = $4, grant_types = $5, token_endpoint_auth_method = $6, metadata = $7::jsonb,
                                  updated_at = now()
          WHERE account_id = $1 AND client_id = $2`,
        [
          app.accountId,
          app.clientId,
          app.name ?? null,
          app.scope ?? null,
          [...app.grantTypes],
          app.tokenEndpointAuthMethod,
          JSON.stringify(keyedFieldsOf(app)),
        ],
      );
      if (updated.rowCount === 0) return false;
      await this.#replaceRedirectUris(client, app);
      await this.#log(client, app.accountId, app.clientId, change, 'updated', describe(app));
      return true;
    });
  }

  async deleteApp(accountId: string, clientId: string, change: AppChange = { actor: 'api' }): Promise<boolean> {
    if (!storable(accountId, clientId)) return false;
    return this.#write(accountId, clientId, async (client) => {
      const deleted = await client.query('DELETE FROM sentinel_apps WHERE account_id = $1 AND client_id = $2', [accountId, clientId]);
      if (deleted.rowCount === 0) return false;
      await this.#log(client, accountId, clientId, change, 'deleted', {});
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
      await this.#log(client, accountId, clientId, change, disabled ? 'disabled' : 'enabled', {});
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
      const key = [accountId, clientId];
      await client.query('DELETE FROM sentinel_app_secrets WHERE account_id = $1 AND client_id = $2 AND expires_at <= now()', key);
      if (overlapSeconds > 0) {
        await client.query(
          `UPDATE sentinel_app_secrets SET expires_at = now() + make_interval(secs => $3)
            WHERE account_id = $1 AND client_id = $2 AND expires_at IS NULL`,
          [...key, overlapSeconds],
        );
      } else {
        await client.query('DELETE FROM sentinel_app_secrets WHERE account_id = $1 AND client_id = $2 AND expires_at IS NULL', key);
      }
      await client.query('INSERT INTO sentinel_app_secrets (account_id, client_id, secret_hash) VALUES ($1, $2, $3)', [...key, secretHash]);
      await client.query('UPDATE sentinel_apps SET updated_at = now() WHERE account_id = $1 AND client_id = $2', key);
      await this.#log(client, accountId, clientId, change, 'secret-rotated', { overlapSeconds });
      const reloaded = await client.query<AppRow>(`${SELECT_APPS} WHERE a.account_id = $1 AND a.client_id = $2`, key);
      const row = reloaded.rows[0];
      return row === undefined ? null : toApp(row);
    });
  }

  async #replaceRedirectUris(client: PoolClient, app: App): Promise<void> {
    await client.query('DELETE FROM sentinel_app_redirect_uris WHERE account_id = $1 AND client_id = $2', [app.accountId, app.clientId]);
    await client.query(
      `INSERT INTO sentinel_app_redirect_uris (account_id, client_id, position, uri)
       SELECT $1, $2, u.position, u.uri FROM unnest($3::text[]) WITH ORDINALITY AS u(uri, position)`,
      [app.accountId, app.clientId, [...app.redirectUris]],
    );
  }

  async #log(
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
    await client.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ a: accountId, c: clientId })]);
  }

  /** One transaction; this instance's cache forgets the app once it commits (the NOTIFY tells the others). */
  async #write<T>(accountId: string, clientId: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await (await this.#getPool()).connect();
    let failed = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      this.#cache?.evict(accountId, clientId);
      return result;
    } catch (error) {
      failed = true;
      await client.query('ROLLBACK').catch(() => {});
      // A COMMIT whose answer was lost may still have happened: forget the app either way.
      this.#cache?.evict(accountId, clientId);
      throw error;
    } finally {
      client.release(failed);
    }
  }
}
