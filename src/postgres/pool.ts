/**
 * The connection of `PostgresAppStore`: its options, and the pool it makes from a connection string. Only types
 * come from `pg` at load time; the driver is imported on first use, so the subpath loads where `pg` is not
 * installed.
 */
import type { Client, Pool, PoolConfig } from 'pg';
import type { KeysOf } from '../lib/strict-options.js';
import type { AppCacheOptions } from './lookup-cache.js';

/**
 * Options of {@link PostgresAppStore}: a connection string (the store makes and owns its pool) or a `pg` Pool of
 * the host's (used as is; the store's LISTEN has a connection of its own, made with the pool's options, outside it).
 * The store keeps the client registrations of RFC 6749 §2 and RFC 7591 §2.
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
  /** With `connectionString`: most connections in the pool (the change listener's is one more, outside it). Default 10. */
  maxConnections?: number;
};

/** Every option of {@link PostgresAppStoreOptions}: the constructor refuses any other (a typo never goes unnoticed). */
export const POSTGRES_OPTION_KEYS = {
  connectionString: true,
  pool: true,
  cache: true,
  connectTimeoutMs: true,
  queryTimeoutMs: true,
  maxConnections: true,
} satisfies KeysOf<PostgresAppStoreOptions>;

/** The `pg` driver, imported on first use. */
async function loadDriver(): Promise<typeof import('pg')> {
  let driver: typeof import('pg');
  try {
    driver = await import('pg');
  } catch {
    throw new Error('PostgresAppStore with connectionString needs the "pg" package: npm install pg');
  }
  return driver.Pool === undefined ? (driver as unknown as { default: typeof import('pg') }).default : driver;
}

/** The store's own pool for `{ connectionString }`, with its timeouts and size. */
export async function loadPool(options: PostgresAppStoreOptions): Promise<Pool> {
  const driver = await loadDriver();
  const config: PoolConfig = {
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 10_000,
    // TCP keepalive probes after 10 s idle keep a NAT or load balancer from dropping a quiet connection, and end one
    // whose peer is gone; the change listener, made with these options, also has its heartbeat.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  return new driver.Pool(config);
}

/**
 * A new, unconnected client made as `pool` makes its connections (its Client class and its options: host,
 * credentials, TLS, timeouts) but not counted in it. The change listener holds its connection for as long as the
 * store runs; one taken from the pool would leave a pool of one with none for the lookups, which then waited
 * forever on a host's pool without `connectionTimeoutMillis`.
 *
 * @example const client = await outsideClient(pool); await client.connect(); await client.query('LISTEN …');
 */
export async function outsideClient(pool: Pool): Promise<Client> {
  // pg-pool's own `Client` (the driver's, or the host's `Client` option) and its options object itself, not a copy:
  // the pool keeps the password there as a non-enumerable property, which a spread would drop.
  const PoolClient = (pool as unknown as { Client?: new (config: PoolConfig) => Client }).Client;
  const ClientClass = typeof PoolClient === 'function' ? PoolClient : (await loadDriver()).Client;
  return new ClientClass(pool.options);
}
