/**
 * The connection of `PostgresAppStore`: its options, and the pool it makes from a connection string. Only types
 * come from `pg` at load time; the driver is imported on first use, so the subpath loads where `pg` is not
 * installed.
 */
import type { Pool, PoolConfig } from 'pg';
import type { AppCacheOptions } from './lookup-cache.js';

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

/** The store's own pool for `{ connectionString }`, with its timeouts and size. */
export async function loadPool(options: PostgresAppStoreOptions): Promise<Pool> {
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
