/**
 * The AppStore every lookup of the service goes through when client ID metadata documents are enabled: a `client_id`
 * that is an https URL is resolved from its document (`client-id-metadata.ts`), every other one is the host's
 * registry's. The authorization, PAR, token, device and guard paths all call `findApp`, so none of them needs to know
 * about documents.
 */
import type { App, AppStore } from './app.js';
import { type ClientIdMetadataResolver, isClientIdMetadataURL } from './client-id-metadata.js';

/**
 * `apps` with document URLs resolved by `resolver` (only in accounts `apps` knows); every other method of the
 * registry (the optional AppStore ones and any of its own, such as `findTrustedIssuers` or `close`) passes through
 * unchanged, bound to it.
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
  // Every method, not a list of names: a list dropped disableApp, enableApp and findTrustedIssuers once, which the
  // service and the console feature-test, so turning documents on silently took those features away.
  for (const [name, method] of methodsOf(apps)) {
    if (!(name in wrapped)) (wrapped as unknown as Record<PropertyKey, unknown>)[name] = method;
  }
  return wrapped;
}

/**
 * The function members of `target`, its own and its classes' (up to `Object.prototype`, without `constructor`), each
 * bound to `target`: a registry may be a class (PostgresAppStore) whose methods read its own fields.
 */
function methodsOf(target: object): Map<PropertyKey, unknown> {
  const methods = new Map<PropertyKey, unknown>();
  // A name is decided by the layer nearest `target` that has it, as a property read would (an override wins).
  const seen = new Set<PropertyKey>(['constructor']);
  for (let layer: object | null = target; layer !== null && layer !== Object.prototype; layer = Object.getPrototypeOf(layer)) {
    for (const name of Reflect.ownKeys(layer)) {
      if (seen.has(name)) continue;
      seen.add(name);
      // The descriptor, not `target[name]`: a getter is not called here (nor passed on).
      const value = Object.getOwnPropertyDescriptor(layer, name)?.value;
      if (typeof value === 'function') methods.set(name, value.bind(target));
    }
  }
  return methods;
}
