/**
 * `sentinel-idp/postgres`: the application registry on PostgreSQL.
 * @packageDocumentation
 */
export { PostgresAppStore } from './app-store.js';
export type { AppChangeRecord } from './change-log.js';
export type { TrustedIssuerChangeRecord } from './trusted-issuer-rows.js';
export type { PostgresAppStoreOptions } from './pool.js';
export type { AppCacheOptions } from './lookup-cache.js';
// The audit events in an append-only table (the operator console's audit page reads it).
export { PostgresEventLog } from './event-log.js';
export type { PostgresEventLogOptions } from './event-log.js';
