/**
 * What a user's sessions page and connected-apps page show, read from the session index: the device sessions (with
 * the apps signed in through each) and the apps holding live grants (with the sessions they got them through).
 */
import { grantKey } from '../token/grant-records.js';
import { grantsOnly } from './app-marker.js';
import { clientIdsOf, type IndexedSession, readUserIndex, type SessionContext, sessionSid } from './session-index.js';

/**
 * One device session of a user (`sentinel.listSessions()`): listed while the session or any grant issued through it
 * may still live.
 *
 * @example
 * const [first]: SessionInfo[] = await sentinel.listSessions({ accountId: '123456', userId: 'u-1' });
 * await sentinel.endSession({ accountId: '123456', sid: first.sid });
 */
export interface SessionInfo {
  /** The `sid` of the session's ID tokens and logout tokens. */
  sid: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** The apps that received tokens through the session. */
  clientIds: string[];
}

/**
 * One app holding live grants of a user (`sentinel.listUserGrants()`), for a "connected apps" page.
 *
 * @example
 * for (const app of await sentinel.listUserGrants({ accountId, userId })) console.log(app.clientId, app.grants);
 */
export interface UserAppGrants {
  clientId: string;
  /** How many grants the app holds (one per completed sign-in whose tokens may still be used). */
  grants: number;
  /** The sessions the grants were issued through. */
  sids: string[];
  /** Seconds since the epoch of the newest authentication behind the grants. */
  authTime: number;
  /** Seconds since the epoch after which none of the grants' tokens can be used any more. */
  until: number;
}

/**
 * The device sessions of a user, oldest first.
 *
 * @example const sessions = await listUserSessions(context, '123456', 'u-1');
 */
export async function listUserSessions(context: SessionContext, accountId: string, userId: string): Promise<SessionInfo[]> {
  const index = await readUserIndex(context, accountId, userId);
  const carrier = carriers(index.sessions);
  // An earlier session of a browser whose user signed in again there is part of the browser's session (ending that
  // ends it): listed as it, naming its apps too.
  const shown = index.sessions.filter((session) => !carrier.has(session.sessionDigest));
  return shown.map((session) => {
    const carried = new Set(session.carried ?? []);
    const apps = index.sessions.filter((entry) => entry === session || carried.has(entry.sessionDigest)).flatMap(clientIdsOf);
    return { sid: sessionSid(accountId, userId, session.sessionDigest), authTime: session.authTime, clientIds: [...new Set(apps)] };
  });
}

/** For each carried session listed, the digest of the session that carries it (carry-over.ts `indexSession`). */
function carriers(sessions: IndexedSession[]): Map<string, string> {
  const listed = new Set(sessions.map((session) => session.sessionDigest));
  const carrier = new Map<string, string>();
  for (const session of sessions) {
    for (const digest of session.carried ?? []) if (listed.has(digest)) carrier.set(digest, session.sessionDigest);
  }
  return carrier;
}

/**
 * The apps holding live grants of a user, in the order they first got one.
 *
 * @example const apps = await listAppGrants(context, '123456', 'u-1');
 */
export async function listAppGrants(context: SessionContext, accountId: string, userId: string): Promise<UserAppGrants[]> {
  const index = await readUserIndex(context, accountId, userId);
  // The index remembers every grant issued through a session until its session or the grant could end; one revoked
  // since (an app's own /revoke, a replayed code) is gone from the store and no longer connects its app.
  const indexed = index.sessions.flatMap((session) => grantsOnly(session.grants));
  const present = await Promise.all(indexed.map((grant) => context.store.get(grantKey(grant.grantId))));
  const live = new Set(indexed.filter((_, at) => present[at] !== null).map((grant) => grant.grantId));
  const byClient = new Map<string, UserAppGrants>();
  const carrier = carriers(index.sessions);
  for (const session of index.sessions) {
    // The session as listSessions lists it: a carried one's grants show under the browser's session that carries it.
    const sid = sessionSid(accountId, userId, carrier.get(session.sessionDigest) ?? session.sessionDigest);
    for (const grant of session.grants) {
      if (!live.has(grant.grantId)) continue;
      let app = byClient.get(grant.clientId);
      if (app === undefined) {
        app = { clientId: grant.clientId, grants: 0, sids: [], authTime: session.authTime, until: grant.until };
        byClient.set(grant.clientId, app);
      }
      app.grants++;
      if (!app.sids.includes(sid)) app.sids.push(sid);
      app.authTime = Math.max(app.authTime, session.authTime);
      app.until = Math.max(app.until, grant.until);
    }
  }
  return [...byClient.values()];
}
