/**
 * `sentinel-idp/postgres`: the application registry on PostgreSQL.
 * @packageDocumentation
 */
export { PostgresAppStore } from './app-store.js';
export type { AppChangeRecord, PostgresAppStoreOptions } from './app-store.js';
export type { AppCacheOptions } from './lookup-cache.js';
