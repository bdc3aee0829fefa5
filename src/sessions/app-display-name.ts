/**
 * The name a user's lists of sessions and connected apps show an app by. Those lists name apps the user signed in
 * to, which may include agents named by a client ID metadata document: such an agent is shown by its URL (which
 * holds the host the user can check) without reading the document, so the lists never wait on, or fail with, a
 * third party's URL. With documents off, an https client id is an app of the host's registry like any other, and is
 * shown by its registered name.
 */
import type { AppStore } from '../apps/app.js';
import { namesMetadataDocument } from '../apps/client-id-metadata.js';
import type { ResolvedConfig } from '../config.js';

/** What naming an app needs of the service: its registry, and whether https client ids name documents. */
export interface AppNaming {
  apps: AppStore;
  config: Pick<ResolvedConfig, 'clientIdMetadataDocuments'>;
}

/**
 * The app's registered name in `accountId`, else its client id (an agent's document URL, an app gone since).
 *
 * @example const name = await appDisplayName(context, '123456', 'client-a'); // 'Client A'
 */
export async function appDisplayName(naming: AppNaming, accountId: string, clientId: string): Promise<string> {
  if (namesMetadataDocument(naming.config, clientId)) return clientId;
  const app = await naming.apps.findApp(accountId, clientId);
  return app !== null && app.accountId === accountId && app.name !== undefined && app.name !== '' ? app.name : clientId;
}
