/**
 * PostgresAppStore against a real PostgreSQL (a throwaway database per run, dropped afterwards): the AppStore
 * contract, migrations, the change log, and the lookup cache with its cross-instance eviction.
 *
 * Unreachable PostgreSQL: the suite is skipped with a warning, unless SENTINEL_REQUIRE_POSTGRES=1 (CI), where it fails.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/apps/app.js';
import { generateClientSecret, hashClientSecret, verifyAppSecret } from '../src/apps/client-secrets.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { AppLookupCache } from '../src/postgres/lookup-cache.js';
import { MIGRATIONS, runMigrations } from '../src/postgres/migrations.js';
import { runAppStoreContract } from './helpers/app-store-contract.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('app-store-postgres');
let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;

beforeAll(async () => {
  requirePostgres(available);
  database = await throwawayDatabase();
  const store = new PostgresAppStore({ connectionString: database.url });
  await store.migrate();
  await store.close();
});

afterAll(async () => {
  await database?.drop();
});

function url(): string {
  if (database === undefined) throw new Error('no database');
  return database.url;
}

runAppStoreContract(
  'PostgresAppStore',
  async () => {
    const store = new PostgresAppStore({ connectionString: url() });
    return { store, cleanup: () => store.close() };
  },
  { skip: available.skip },
);

function app(accountId: string, overrides: Partial<App> = {}): App {
  return {
    accountId,
    clientId: randomUUID(),
    clientSecretHash: hashClientSecret(generateClientSecret()),
    redirectUris: ['https://app.example.com/cb'],
    grantTypes: ['authorization_code', 'client_credentials'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    ...overrides,
  };
}

/** Polls until `check` holds, for at most `ms`; returns whether it held. */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(25);
  }
  return check();
}

describe.skipIf(available.skip)('PostgresAppStore specifics', () => {
  it('keeps the key-based fields of a private_key_jwt / DPoP / PAR app through save and update', async () => {
    const store = new PostgresAppStore({ connectionString: url(), cache: false });
    try {
      const publicJwk = {
        kty: 'EC',
        crv: 'P-256',
        x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
        y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
      };
      const keyed = app('keyed-account', {
        clientSecretHash: undefined,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [publicJwk] },
        requireDPoP: true,
        requirePushedAuthorizationRequests: true,
      });
      await store.saveApp(keyed);
      const found = await store.findApp(keyed.accountId, keyed.clientId);
      expect(found).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicJwk] }, requireDPoP: true });
      expect(found?.requirePushedAuthorizationRequests).toBe(true);
      expect(found?.jwksUri).toBeUndefined();
      const { jwks: _jwks, ...withoutJwks } = keyed;
      expect(await store.updateApp({ ...withoutJwks, jwksUri: 'https://keyed.example.com/jwks.json', requireDPoP: false })).toBe(true);
      const updated = await store.findApp(keyed.accountId, keyed.clientId);
      expect(updated).toMatchObject({ jwksUri: 'https://keyed.example.com/jwks.json', requireDPoP: false });
      expect(updated?.jwks).toBeUndefined();
      // An app without them reads back without them (nothing added to existing apps).
      const plain = app('keyed-account');
      await store.saveApp(plain);
      const plainFound = await store.findApp(plain.accountId, plain.clientId);
      expect(plainFound).not.toHaveProperty('jwks');
      expect(plainFound).not.toHaveProperty('requireDPoP');
    } finally {
      await store.close();
    }
  });

  it('migrates once: concurrent and repeated runs apply nothing twice', async () => {
    const fresh = await throwawayDatabase();
    const stores = [0, 1, 2].map(() => new PostgresAppStore({ connectionString: fresh.url }));
    try {
      const runs = await Promise.all(stores.map((store) => store.migrate()));
      expect(runs.flat()).toEqual([1, 2, 3]);
      expect(await stores[0]?.migrate()).toEqual([]);
      const client = new pg.Client({ connectionString: fresh.url });
      await client.connect();
      const rows = await client.query('SELECT version FROM sentinel_migrations');
      await client.end();
      expect(rows.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }]);
    } finally {
      for (const store of stores) await store.close();
      await fresh.drop();
    }
  });

  it('upgrades a database at an older version, keeping its apps', async () => {
    const older = await throwawayDatabase();
    const pool = new pg.Pool({ connectionString: older.url });
    const store = new PostgresAppStore({ pool });
    try {
      expect(await runMigrations(pool, MIGRATIONS.slice(0, 1))).toEqual([1]);
      await pool.query(
        `INSERT INTO sentinel_apps (account_id, client_id, grant_types, token_endpoint_auth_method)
         VALUES ('old-account', 'old-client', '{client_credentials}', 'client_secret_basic')`,
      );
      expect(await store.migrate()).toEqual([2, 3]);
      expect(await store.findApp('old-account', 'old-client')).toMatchObject({ grantTypes: ['client_credentials'] });
    } finally {
      await store.close();
      await pool.end();
      await older.drop();
    }
  });

  it('disables an app (unknown to the service, still listed) and enables it again, seen by other instances', async () => {
    const store = new PostgresAppStore({ connectionString: url() });
    const other = new PostgresAppStore({ connectionString: url() });
    try {
      const secret = generateClientSecret();
      const saved = app(`disable-${randomUUID()}`, { clientSecretHash: hashClientSecret(secret) });
      await store.saveApp(saved);
      for (let i = 0; i < 5; i++) await other.findApp(saved.accountId, saved.clientId);
      expect(await store.disableApp(saved.accountId, saved.clientId, { actor: 'test' })).toBe(true);
      expect(await store.findApp(saved.accountId, saved.clientId)).toBeNull();
      expect(await eventually(async () => (await other.findApp(saved.accountId, saved.clientId)) === null, 2000)).toBe(true);
      // The account stays: a disabled app is still sent its logout tokens, checked against the account's JWKS.
      expect(await other.hasAccount(saved.accountId)).toBe(true);
      expect(await store.listApps(saved.accountId)).toEqual([expect.objectContaining({ clientId: saved.clientId, disabled: true })]);
      expect(await store.enableApp(saved.accountId, saved.clientId, { actor: 'test' })).toBe(true);
      expect(verifyAppSecret(secret, await other.findApp(saved.accountId, saved.clientId))).toBe(true);
      expect((await store.listChanges(saved.accountId, saved.clientId)).map((change) => change.action)).toEqual([
        'created',
        'disabled',
        'enabled',
      ]);
      expect(await store.disableApp(saved.accountId, randomUUID())).toBe(false);
    } finally {
      await store.close();
      await other.close();
    }
  });

  it('logs who changed what, never a secret, and the log refuses edits', async () => {
    const store = new PostgresAppStore({ connectionString: url() });
    try {
      const secret = generateClientSecret();
      const saved = app(`log-${randomUUID()}`, { clientSecretHash: hashClientSecret(secret) });
      await store.saveApp(saved, { actor: 'cli:alice' });
      await store.rotateClientSecret(saved.accountId, saved.clientId, hashClientSecret(generateClientSecret()), 60, { actor: 'api' });
      await store.deleteApp(saved.accountId, saved.clientId, { actor: 'cli:bob' });
      const changes = await store.listChanges(saved.accountId, saved.clientId);
      expect(changes.map((change) => [change.actor, change.action])).toEqual([
        ['cli:alice', 'created'],
        ['api', 'secret-rotated'],
        ['cli:bob', 'deleted'],
      ]);
      const text = JSON.stringify(changes);
      expect(text).not.toContain(secret);
      expect(text).not.toContain('sha256:');
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await expect(client.query("UPDATE sentinel_app_changes SET actor = 'mallory'")).rejects.toThrow(/append-only/);
        await expect(client.query('DELETE FROM sentinel_app_changes')).rejects.toThrow(/append-only/);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
    }
  });

  it('writes all or nothing: a save that fails halfway leaves no app behind', async () => {
    const store = new PostgresAppStore({ connectionString: url() });
    try {
      // PostgreSQL text cannot hold NUL: the redirect URI insert fails after the app row was written.
      const broken = app(`atomic-${randomUUID()}`, { redirectUris: ['https://app.example.com/\u0000'] });
      await expect(store.saveApp(broken)).rejects.toThrow();
      expect(await store.findApp(broken.accountId, broken.clientId)).toBeNull();
      expect(await store.hasAccount(broken.accountId)).toBe(false);
      expect(await store.listChanges(broken.accountId, broken.clientId)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('answers repeated lookups from its cache, without a database round trip', async () => {
    const pool = new pg.Pool({ connectionString: url() });
    let queries = 0;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      queries += 1;
      return query(...args);
    };
    const store = new PostgresAppStore({ pool });
    try {
      const saved = app(`cache-${randomUUID()}`);
      await store.saveApp(saved);
      // The first lookups start the change listener; once it is up, lookups are cached.
      expect(await eventually(async () => (await store.findApp(saved.accountId, saved.clientId)) !== null && queries > 0)).toBe(true);
      await eventually(async () => {
        const before = queries;
        await store.findApp(saved.accountId, saved.clientId);
        return queries === before;
      });
      const before = queries;
      for (let i = 0; i < 100; i++) expect(await store.findApp(saved.accountId, saved.clientId)).not.toBeNull();
      expect(queries).toBe(before);
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('two instances on one database: a rotation and a delete in one are seen by the other', async () => {
    const first = new PostgresAppStore({ connectionString: url() });
    const second = new PostgresAppStore({ connectionString: url() });
    try {
      const oldSecret = generateClientSecret();
      const saved = app(`shared-${randomUUID()}`, { clientSecretHash: hashClientSecret(oldSecret) });
      await first.saveApp(saved);
      // Warm the second instance's cache.
      await eventually(async () => {
        await second.findApp(saved.accountId, saved.clientId);
        return true;
      }, 200);
      for (let i = 0; i < 5; i++) await second.findApp(saved.accountId, saved.clientId);
      const newSecret = generateClientSecret();
      await first.rotateClientSecret(saved.accountId, saved.clientId, hashClientSecret(newSecret), 0);
      expect(await eventually(async () => verifyAppSecret(newSecret, await second.findApp(saved.accountId, saved.clientId)), 2000)).toBe(
        true,
      );
      expect(verifyAppSecret(oldSecret, await second.findApp(saved.accountId, saved.clientId))).toBe(false);
      await first.deleteApp(saved.accountId, saved.clientId);
      expect(await eventually(async () => (await second.findApp(saved.accountId, saved.clientId)) === null, 2000)).toBe(true);
      expect(await second.hasAccount(saved.accountId)).toBe(false);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('survives dropped connections (pg_terminate_backend) and never serves a change it may have missed', async () => {
    const store = new PostgresAppStore({ connectionString: url() });
    const other = new PostgresAppStore({ connectionString: url(), cache: false });
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    try {
      const oldSecret = generateClientSecret();
      const saved = app(`dropped-${randomUUID()}`, { clientSecretHash: hashClientSecret(oldSecret) });
      await store.saveApp(saved);
      // Warm the cache (the listener comes up in the background).
      for (let i = 0; i < 20; i++) {
        await store.findApp(saved.accountId, saved.clientId);
        await sleep(10);
      }
      const dropAll = () =>
        admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
      await dropAll();
      // While this store's listener is gone, a change made elsewhere must still be seen at once.
      const newSecret = generateClientSecret();
      expect(await other.rotateClientSecret(saved.accountId, saved.clientId, hashClientSecret(newSecret), 0)).not.toBeNull();
      expect(
        await eventually(async () => {
          try {
            return verifyAppSecret(newSecret, await store.findApp(saved.accountId, saved.clientId));
          } catch {
            return false; // a pooled connection that died with the others fails once
          }
        }),
      ).toBe(true);
      expect(verifyAppSecret(oldSecret, await store.findApp(saved.accountId, saved.clientId))).toBe(false);
      // And the listener comes back: a later delete elsewhere reaches this store's cache.
      await sleep(1500);
      for (let i = 0; i < 5; i++) await store.findApp(saved.accountId, saved.clientId);
      await other.deleteApp(saved.accountId, saved.clientId);
      expect(await eventually(async () => (await store.findApp(saved.accountId, saved.clientId)) === null, 2000)).toBe(true);
    } finally {
      await admin.end();
      await store.close();
      await other.close();
    }
  });

  it('does not cache what a lookup begun before the listener came up read', () => {
    const cache = new AppLookupCache();
    const read = app(`before-listen-${randomUUID()}`);
    const generation = cache.generation();
    cache.live = true;
    cache.putApp(read, generation);
    cache.putAccount(read.accountId, generation);
    cache.putIssuers(read.accountId, [], generation);
    expect(cache.getApp(read.accountId, read.clientId)).toBeUndefined();
    expect(cache.hasAccount(read.accountId)).toBe(false);
    expect(cache.getIssuers(read.accountId)).toBeUndefined();
    // Once up, a lookup begun after it is cached; telling it again that it is up forgets nothing.
    cache.putApp(read, cache.generation());
    cache.live = true;
    expect(cache.getApp(read.accountId, read.clientId)).toEqual(read);
  });

  it('a delete made elsewhere while a lookup was reading, and notified before LISTEN, is seen at once', async () => {
    const writer = new PostgresAppStore({ connectionString: url(), cache: false });
    const pool = new pg.Pool({ connectionString: url() });
    // Gates, not delays: the lookup reads the row, the app is deleted elsewhere (its NOTIFY goes to no one), then
    // the listener connects and LISTENs, and only then is the lookup's answer handled.
    let rowRead!: () => void;
    const read = new Promise<void>((resolve) => (rowRead = resolve));
    let appDeleted!: () => void;
    const deleted = new Promise<void>((resolve) => (appDeleted = resolve));
    let nowListening!: () => void;
    const listening = new Promise<void>((resolve) => (nowListening = resolve));
    // The listener's connection is made by the pool's Client class, outside the pool: its LISTEN waits for the delete.
    const poolWithClient = pool as unknown as { Client: new (config: unknown) => pg.Client };
    const RealClient = poolWithClient.Client;
    poolWithClient.Client = function GatedClient(config: unknown): pg.Client {
      const client = new RealClient(config);
      const clientQuery = client.query.bind(client) as (...queryArgs: unknown[]) => Promise<unknown>;
      (client as unknown as { query: (...queryArgs: unknown[]) => unknown }).query = async (...queryArgs: unknown[]) => {
        const listen = String(queryArgs[0]).startsWith('LISTEN');
        if (listen) await deleted;
        const result = await clientQuery(...queryArgs);
        if (listen) setImmediate(nowListening);
        return result;
      };
      return client;
    } as unknown as new (
      config: unknown,
    ) => pg.Client;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = async (...args: unknown[]) => {
      const result = await query(...args);
      rowRead();
      await listening;
      return result;
    };
    const store = new PostgresAppStore({ pool });
    try {
      const saved = app(`listen-race-${randomUUID()}`);
      await writer.saveApp(saved);
      const lookup = store.findApp(saved.accountId, saved.clientId);
      await read;
      expect(await writer.deleteApp(saved.accountId, saved.clientId)).toBe(true);
      appDeleted();
      expect((await lookup)?.clientId).toBe(saved.clientId); // read before the delete: right when it was read
      expect(await store.findApp(saved.accountId, saved.clientId)).toBeNull();
      expect(await store.hasAccount(saved.accountId)).toBe(false);
    } finally {
      await store.close();
      await writer.close();
      await pool.end();
    }
  });

  it('a host pool of one connection still answers lookups: LISTEN has a connection of its own', async () => {
    // No connectionTimeoutMillis (pg's default): a lookup waiting for a slot the listener held would wait forever.
    const applicationName = `one-slot-${randomUUID()}`;
    const pool = new pg.Pool({ connectionString: url(), max: 1, application_name: applicationName });
    const store = new PostgresAppStore({ pool });
    const writer = new PostgresAppStore({ connectionString: url(), cache: false });
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    // The listener's connection is made with the pool's options, so it carries the pool's application_name.
    const listening = async () =>
      (
        await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'",
          [applicationName],
        )
      ).rows[0]?.n;
    const lookup = (accountId: string, clientId: string) =>
      Promise.race([store.findApp(accountId, clientId), sleep(3000).then(() => 'no answer in 3 s' as const)]);
    try {
      const saved = app(`one-slot-${randomUUID()}`);
      await writer.saveApp(saved);
      for (let i = 0; i < 5; i++) expect(await lookup(saved.accountId, saved.clientId)).toMatchObject({ clientId: saved.clientId });
      expect(await eventually(async () => (await listening()) === 1)).toBe(true);
      expect(pool.totalCount).toBeLessThanOrEqual(1);
      // The listener works: a delete made elsewhere reaches this store's cache.
      for (let i = 0; i < 5; i++) await lookup(saved.accountId, saved.clientId);
      expect(await writer.deleteApp(saved.accountId, saved.clientId)).toBe(true);
      expect(await eventually(async () => (await lookup(saved.accountId, saved.clientId)) === null, 2000)).toBe(true);
      // close() ends the listener's connection, which the host's pool.end() would not.
      await store.close();
      expect(await eventually(async () => (await listening()) === 0, 2000)).toBe(true);
    } finally {
      await admin.end();
      await store.close();
      await writer.close();
      await pool.end();
    }
  });

  it('refuses to be built without a connection string or pool', () => {
    expect(() => new PostgresAppStore({} as never)).toThrow(TypeError);
    // The listener's connection is made from a pg Pool's options; an object without them could reach another database.
    const notAPgPool = { query: () => Promise.resolve({ rows: [] }), connect: () => Promise.reject(new Error('no')), on: () => {} };
    expect(() => new PostgresAppStore({ pool: notAPgPool as never })).toThrow(expect.objectContaining({ field: 'pool' }));
    expect(() => new PostgresAppStore({ pool: notAPgPool as never, cache: false })).not.toThrow();
    expect(() => new PostgresAppStore({ connectionString: url(), cache: { ttlSeconds: 61 } })).toThrow(RangeError);
  });
});
