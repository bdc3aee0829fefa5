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
import { listAppGrants, listUserSessions } from '../sessions/session-views.js';
import { readGrant } from '../token/grant-records.js';
import type { ConnectedAppItem, SessionItem } from './account-html.js';
import type { AccountVisit } from './account-visit.js';
import { ACCOUNT_LIST_BOUND, type ListPage, listPage, pageSlice } from './account-paging.js';

/** Most grant records read per app for its scopes: one per sign-in, so a few show what it holds. */
const GRANTS_READ_PER_APP = 5;

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
 * One page of the apps holding live grants of the user: name, the scopes of their grants, and the first sign-in behind them.
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
  const userId = visit.session.userId;
  const nameOf = appNames(context, accountId);
  const [apps, index] = await Promise.all([listAppGrants(context, accountId, userId), readUserIndex(context, accountId, userId)]);
  const grantIds = new Map<string, string[]>();
  for (const session of index.sessions) {
    for (const grant of grantsOnly(session.grants)) grantIds.set(grant.clientId, [...(grantIds.get(grant.clientId) ?? []), grant.grantId]);
  }
  const at = listPage(requestedPage, apps.length);
  // Only the shown page's grants are read.
  const items = await Promise.all(
    pageSlice(apps.slice(0, ACCOUNT_LIST_BOUND), at).map(async (app) => {
      const records = await Promise.all(
        (grantIds.get(app.clientId) ?? []).slice(0, GRANTS_READ_PER_APP).map((id) => readGrant(context, id)),
      );
      const live = records.flatMap((stored) => (stored === null ? [] : [stored.grant]));
      const scopes = [...new Set(live.flatMap((grant) => (grant.scope ?? '').split(' ').filter((scope) => scope !== '')))];
      const since = live.length === 0 ? app.authTime : Math.min(...live.map((grant) => grant.authTime));
      return { clientId: app.clientId, name: await nameOf(app.clientId), scopes, since };
    }),
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
