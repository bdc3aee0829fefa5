/**
 * `sentinel-idp/postgres`: the application registry on PostgreSQL.
 * @packageDocumentation
 */
export { PostgresAppStore } from './app-store.js';
export type { AppChangeRecord, PostgresAppStoreOptions } from './app-store.js';
export type { AppCacheOptions } from './lookup-cache.js';
export { MIGRATIONS } from './migrations.js';
export type { Migration } from './migrations.js';
