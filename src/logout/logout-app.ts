/**
 * The app a logout token is for, as the registry has it: enabled, or disabled. A disabled app's tokens stop working
 * (`findApp` no longer returns it), but its own sessions with the user live on, and it may be enabled again with
 * them; Back-Channel Logout is how it learns that one of them must end. So it is still told, as long as the registry
 * can show it (`AppStore.findDisabledApp`). Nothing else of the service ever sees a disabled app through this.
 */
import type { App, AppStore } from '../apps/app.js';

/**
 * The app `clientId` of `accountId` to tell about a logout, disabled or not; `null` when the registry has none
 * (deleted, or disabled in a registry that cannot show disabled apps).
 *
 * @example const app = await findLogoutApp(context.apps, accountId, clientId);
 */
export async function findLogoutApp(apps: AppStore, accountId: string, clientId: string): Promise<App | null> {
  const app = await apps.findApp(accountId, clientId);
  if (app !== null || apps.findDisabledApp === undefined) return app;
  return apps.findDisabledApp(accountId, clientId);
}
