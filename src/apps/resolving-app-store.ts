/**
 * The AppStore every lookup of the service goes through when client ID metadata documents are enabled: a `client_id`
 * that is an https URL is resolved from its document (`client-id-metadata.ts`), every other one is the host's
 * registry's. The authorization, PAR, token, device and guard paths all call `findApp`, so none of them needs to know
 * about documents.
 */
import type { App, AppStore } from './app.js';
import { type ClientIdMetadataResolver, isClientIdMetadataURL } from './client-id-metadata.js';

/**
 * `apps` with document URLs resolved by `resolver` (only in accounts `apps` knows); the registry's own methods pass
 * through unchanged.
 * @example const apps = withClientIdMetadataDocuments(registry, new ClientIdMetadataResolver(config));
 */
export function withClientIdMetadataDocuments(apps: AppStore, resolver: ClientIdMetadataResolver): AppStore {
  const wrapped: AppStore = {
    findApp: async (accountId: string, clientId: string): Promise<App | null> => {
      if (!isClientIdMetadataURL(clientId)) return apps.findApp(accountId, clientId);
      if (!(await apps.hasAccount(accountId))) return null;
      return resolver.resolve(accountId, clientId);
    },
    hasAccount: (accountId) => apps.hasAccount(accountId),
  };
  // Bound, not copied: a registry may be a class (PostgresAppStore) whose methods read its own fields.
  for (const method of ['saveApp', 'listApps', 'updateApp', 'patchApp', 'deleteApp', 'rotateClientSecret'] as const) {
    const own = apps[method];
    if (typeof own === 'function') (wrapped as unknown as Record<string, unknown>)[method] = own.bind(apps);
  }
  return wrapped;
}
