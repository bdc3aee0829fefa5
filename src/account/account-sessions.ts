/**
 * The account page's sessions and connected apps, read from the session index (`src/sessions/`): the device
 * sessions of the signed-in user (with the apps signed in through each) and the apps holding live grants (with
 * their scopes and since when). Every action first checks that what the form names belongs to this user: a posted
 * `sid` or `client_id` of someone else changes nothing.
 */
import type { SentinelContext } from '../http/context.js';
import { sessionDigestOf } from '../authorize/state/session.js';
import { appDisplayName } from '../sessions/app-display-name.js';
import { endSessionBySid, revokeUserAppGrants } from '../sessions/end-sessions.js';
import { readUserIndex, sessionSid } from '../sessions/session-index.js';
import { grantsOnly } from '../sessions/app-marker.js';
import { listUserSessions } from '../sessions/session-views.js';
import { readGrant } from '../token/grant-records.js';
import type { ConnectedAppItem, SessionItem } from './account-html.js';
import type { AccountVisit } from './account-visit.js';
import { ACCOUNT_LIST_BOUND, type ListPage, listPage, pageSlice } from './account-paging.js';

/**
 * The `sid` of the session showing the page.
 *
 * @example
 * const current = currentSid(visit);
 */
export function currentSid(visit: AccountVisit): string {
  return sessionSid(visit.accountId, visit.session.userId, sessionDigestOf(visit.sessionId));
}

/** Display names of apps, looked up once per page. */
function appNames(context: SentinelContext, accountId: string): (clientId: string) => Promise<string> {
  const cache = new Map<string, Promise<string>>();
  return (clientId) => {
    let name = cache.get(clientId);
    if (name === undefined) {
      name = appDisplayName(context, accountId, clientId);
      cache.set(clientId, name);
    }
    return name;
  };
}

/**
 * One page of the user's device sessions, this one first, then newest first.
 *
 * @example
 * const { items, at } = await sessionItems(context, visit, request.query.get('sessions'));
 */
export async function sessionItems(
  context: SentinelContext,
  visit: AccountVisit,
  requestedPage: string | null = null,
): Promise<{ items: SessionItem[]; at: ListPage }> {
  const current = currentSid(visit);
  const nameOf = appNames(context, visit.accountId);
  const sessions = (await listUserSessions(context, visit.accountId, visit.session.userId))
    .sort((a, b) => Number(b.sid === current) - Number(a.sid === current) || b.authTime - a.authTime)
    .slice(0, ACCOUNT_LIST_BOUND);
  const at = listPage(requestedPage, sessions.length);
  const items = await Promise.all(
    pageSlice(sessions, at).map(async (session) => ({
      sid: session.sid,
      authTime: session.authTime,
      current: session.sid === current,
      apps: await Promise.all(session.clientIds.map(nameOf)),
    })),
  );
  return { items, at };
}

/**
 * One page of the apps holding live grants of the user, in the order they first got one: name, the scopes of all
 * their live grants, and the first sign-in behind them. Every grant the index lists is read once (what telling the
 * live ones from the ended ones costs anyway), so an app that signed in many times shows what any of its grants
 * holds: a wider scope asked for after a few narrow sign-ins (silent renewal) is not left off the page.
 *
 * @example
 * const { items, at } = await connectedApps(context, visit, request.query.get('apps'));
 */
export async function connectedApps(
  context: SentinelContext,
  visit: AccountVisit,
  requestedPage: string | null = null,
): Promise<{ items: ConnectedAppItem[]; at: ListPage }> {
  const { accountId } = visit;
  const nameOf = appNames(context, accountId);
  const index = await readUserIndex(context, accountId, visit.session.userId);
  const indexed = index.sessions.flatMap((session) => grantsOnly(session.grants));
  const records = await Promise.all(indexed.map((entry) => readGrant(context, entry.grantId)));
  const byClient = new Map<string, { scopes: Set<string>; since: number }>();
  indexed.forEach((entry, at) => {
    // Ended since it was indexed (revoked, expired, its app's own /revoke): it no longer connects its app.
    const grant = records[at]?.grant;
    if (grant === undefined) return;
    const app = byClient.get(entry.clientId) ?? { scopes: new Set<string>(), since: grant.authTime };
    for (const scope of (grant.scope ?? '').split(' ')) if (scope !== '') app.scopes.add(scope);
    app.since = Math.min(app.since, grant.authTime);
    byClient.set(entry.clientId, app);
  });
  const apps = [...byClient].slice(0, ACCOUNT_LIST_BOUND);
  const at = listPage(requestedPage, apps.length);
  const items = await Promise.all(
    pageSlice(apps, at).map(async ([clientId, app]) => ({
      clientId,
      name: await nameOf(clientId),
      scopes: [...app.scopes],
      since: app.since,
    })),
  );
  return { items, at };
}

/**
 * Ends one of the user's sessions (its grants with it). `false` when the sid is not one of this user's sessions.
 *
 * @example
 * if (!(await endOwnSession(context, visit, sid))) throw notYours();
 */
export async function endOwnSession(context: SentinelContext, visit: AccountVisit, sid: string | undefined): Promise<boolean> {
  if (sid === undefined) return false;
  const own = await listUserSessions(context, visit.accountId, visit.session.userId);
  if (!own.some((session) => session.sid === sid)) return false;
  return (await endSessionBySid(context, visit.accountId, sid)) !== null;
}

/**
 * Ends every session of the user but the one showing the page; resolves how many ended.
 *
 * @example
 * const ended = await endOtherSessions(context, visit);
 */
export async function endOtherSessions(context: SentinelContext, visit: AccountVisit): Promise<number> {
  const current = currentSid(visit);
  const others = (await listUserSessions(context, visit.accountId, visit.session.userId)).filter((session) => session.sid !== current);
  let ended = 0;
  for (const session of others) if ((await endSessionBySid(context, visit.accountId, session.sid)) !== null) ended++;
  return ended;
}

/**
 * Disconnects an app: every grant it holds of the user is revoked (its refresh tokens and access tokens stop).
 * `false` when the app holds none.
 *
 * @example
 * await disconnectApp(context, visit, single(form, 'client_id'));
 */
export async function disconnectApp(context: SentinelContext, visit: AccountVisit, clientId: string | undefined): Promise<boolean> {
  if (clientId === undefined || clientId === '') return false;
  return (await revokeUserAppGrants(context, visit.accountId, visit.session.userId, clientId)) > 0;
}
