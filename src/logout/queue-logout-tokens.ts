/**
 * The step of ending a session that queues its logout tokens: one job per app that got tokens through the session
 * and takes them (a `backchannelLogoutUri`). Nothing is signed or sent here; the delivery loop does that
 * (delivery-worker.ts), so the ending request never waits on an app.
 */
import { isClientIdMetadataURL } from '../apps/client-id-metadata.js';
import type { SessionContext } from '../sessions/session-index.js';
import { findLogoutApp } from './logout-app.js';
import type { LogoutJob } from './logout-queue.js';

/**
 * Queues a logout token for each app of `clientIds` that takes them (has a `backchannelLogoutUri`): called once the
 * session's grants are gone, before its record and its index entry go (src/sessions/end-sessions.ts).
 *
 * @example await queueLogoutTokens(context, { accountId, userId, sid, clientIds: ['client-a', 'client-b'] });
 */
export async function queueLogoutTokens(
  context: SessionContext,
  input: { accountId: string; userId: string; sid: string; clientIds: readonly string[] },
): Promise<void> {
  // A client ID metadata document cannot name a backchannelLogoutUri, so its client is never looked up: the lookup
  // would fetch a third party's URL, and a document gone or unreachable would stop the session from ending. With
  // documents off, an https id is a registry app like any other and is told. Without the service's config (the CLI,
  // which has no registry either) whether an https id names a document is not known here, so it is queued like every
  // app: the delivery loop, which runs in the service and knows, drops it there without a lookup when it names one.
  const documents = context.config?.clientIdMetadataDocuments.enabled === true;
  const clientIds = documents ? input.clientIds.filter((clientId) => !isClientIdMetadataURL(clientId)) : input.clientIds;
  if (clientIds.length === 0) return;
  const registry = context.apps;
  // A disabled app too (logout-app.ts): its own sessions with the user outlive its tokens.
  const apps =
    registry === undefined ? null : await Promise.all(clientIds.map((clientId) => findLogoutApp(registry, input.accountId, clientId)));
  const jobs: LogoutJob[] = [];
  for (const [at, clientId] of clientIds.entries()) {
    const app = apps?.[at];
    // Without a registry (the CLI) every app is queued; the delivery loop skips those without a URI.
    if (app !== undefined && (app === null || app.accountId !== input.accountId || app.backchannelLogoutUri === undefined)) continue;
    jobs.push({ accountId: input.accountId, clientId, userId: input.userId, sid: input.sid, attempts: 0 });
  }
  await context.logoutQueue.enqueue(context.store, jobs);
}
