/**
 * The name a user's lists of sessions and connected apps show an app by. Those lists name apps the user signed in
 * to, which may include agents named by a client ID metadata document: such an agent is shown by its URL (which
 * holds the host the user can check) without reading the document, so the lists never wait on, or fail with, a
 * third party's URL.
 */
import type { AppStore } from '../apps/app.js';
import { isClientIdMetadataURL } from '../apps/client-id-metadata.js';

/**
 * The app's registered name in `accountId`, else its client id (an agent's document URL, an app gone since).
 *
 * @example const name = await appDisplayName(context.apps, '123456', 'client-a'); // 'Client A'
 */
export async function appDisplayName(apps: AppStore, accountId: string, clientId: string): Promise<string> {
  if (isClientIdMetadataURL(clientId)) return clientId;
  const app = await apps.findApp(accountId, clientId);
  return app !== null && app.accountId === accountId && app.name !== undefined && app.name !== '' ? app.name : clientId;
}
