/**
 * A partial update of an app ({@link AppStore.patchApp}): the fields a writer owns, applied to the app as the registry
 * holds it at write time. A read-modify-write of the whole app (`updateApp({ ...read, ...changes })`) writes back
 * every field it read, so a change another writer made in between (an operator removing a compromised key from
 * `jwks`) is silently undone; a patch leaves the fields it does not name as they are.
 */
import type { App, AppChange, AppPatch, AppStore } from './app.js';
import { assertAppFields } from './app-fields.js';
import { assertKnownKeys, type KeysOf } from '../lib/strict-options.js';

const PATCHABLE = {
  redirectUris: true,
  grantTypes: true,
  tokenEndpointAuthMethod: true,
  name: true,
  scope: true,
  idTokenSignedResponseAlg: true,
  postLogoutRedirectUris: true,
  backchannelLogoutUri: true,
  backchannelLogoutSessionRequired: true,
  defaultMaxAge: true,
  jwks: true,
  jwksUri: true,
  requireDPoP: true,
  requirePushedAuthorizationRequests: true,
  profile: true,
  resources: true,
} satisfies KeysOf<AppPatch>;

const REQUIRED = new Set(['redirectUris', 'grantTypes', 'tokenEndpointAuthMethod']);

/**
 * `current` with `patch` applied: a field the patch holds (own key) is set, and cleared when its value is
 * `undefined`; every other field, secrets included, stays that of `current`. A field a patch may not hold (an id, a
 * secret, a misspelling) is refused, never dropped. For {@link AppStore.patchApp} implementations.
 *
 * @example
 * const next = applyAppPatch(current, { postLogoutRedirectUris: ['https://app.example.com/bye'] });
 */
export function applyAppPatch(current: App, patch: AppPatch): App {
  assertKnownKeys(patch, PATCHABLE, 'patch');
  const next: Record<string, unknown> = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if (value !== undefined) next[name] = value;
    else if (REQUIRED.has(name)) throw new TypeError(`patch.${name} cannot be cleared`);
    else delete next[name];
  }
  const app = next as unknown as App;
  assertAppFields(app);
  return app;
}

/**
 * Applies `update` to the current app through the store's `patchApp`; a store without one (written before it
 * existed) gets a read of the app and an `updateApp` right after it, with no request body or other wait in between,
 * which narrows the window for a lost concurrent change but cannot close it. `null` when the app does not exist.
 *
 * @example
 * const written = await patchStoredApp(apps, accountId, clientId, () => ({ name: 'Renamed' }), { actor: 'registration' });
 */
export async function patchStoredApp(
  apps: AppStore,
  accountId: string,
  clientId: string,
  update: (current: App) => AppPatch,
  change: AppChange,
): Promise<App | null> {
  if (apps.patchApp !== undefined) return apps.patchApp(accountId, clientId, update, change);
  if (apps.updateApp === undefined) throw new TypeError('the app store has neither patchApp nor updateApp');
  const current = await apps.findApp(accountId, clientId);
  if (current === null) return null;
  const next = applyAppPatch(current, update(current));
  return (await apps.updateApp(next, change)) ? next : null;
}
