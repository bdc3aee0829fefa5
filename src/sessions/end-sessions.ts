/**
 * Ending device sessions: the session record, every grant issued through the session, and (once those are gone) a
 * logout token for each app that got tokens through it and asked for one.
 *
 * The order is what keeps a failure safe. The grants go first, then the deliveries are queued, then the session
 * record goes, and only then does the session leave the index. A store failing part-way leaves the entry in the
 * index, and until the deliveries are queued the session record too, so nothing is forgotten: the next attempt (the
 * user's retry with the same cookie, `endUserSessions`) finds it and finishes, and no token of the session ever
 * outlives a "done". Behind a cookie, a note of whose session it is outlives its record until the index write
 * is done, so the retry of the same logout finds the index entry even then ({@link finishDeviceSessionEnding}).
 * Queuing is idempotent (one job per session and app), so a retry queues nothing twice, unless
 * the first delivery is already under way: the app may have signed in again through the session since it took that
 * token, so one more follows (logout-queue.ts). Every index change goes through the user's queue of index writes
 * (session-index.ts `commitIndexChange`): a grant attached in the same process just before is in the sessions the
 * ending plans against, and its grant is ended too; one attached by another instance makes the compare-and-set fail,
 * and the ending is planned again and ends that grant too.
 */
import { grantKey } from '../token/grant-records.js';
import { grantsOnly } from './app-marker.js';
import type { IndexedSession } from './index-encoding.js';
import { queueLogoutTokens } from '../logout/queue-logout-tokens.js';
import { parseSessionRecord, type SessionRecord, sessionDigestOfKey, sessionKey, sessionKeyOfDigest } from '../authorize/state/session.js';
import {
  type SessionContext,
  changeUserIndex,
  clientIdsOf,
  commitIndexChange,
  parseSid,
  readIndexOfSid,
  readUserIndex,
  sessionSid,
  userPart,
} from './session-index.js';

/** What ending one session did. */
export interface EndedSession {
  sid: string;
  authTime: number;
  /**
   * The apps that had tokens through the session and the earlier sessions of its browser it carried (each with a
   * back-channel logout URI gets a logout token).
   */
  clientIds: string[];
}

/**
 * Ends the session `sessionDigest` of a user: its grants, its logout tokens, its record, then its index entry; and so
 * the earlier sessions of its browser that it carries (the same user signed in again there), each app told the sid
 * of the session it got its tokens through.
 * Resolves `null` when the index has no such session (already ended, here or by another instance meanwhile, or
 * never indexed).
 *
 * @example const ended = await endIndexedSession(context, accountId, userId, sessionDigest);
 */
export async function endIndexedSession(
  context: SessionContext,
  accountId: string,
  userId: string,
  sessionDigest: string,
): Promise<EndedSession | null> {
  // Kept across the attempts of the ending's batch: what was deleted is not deleted again.
  const revoked = new Set<string>();
  const sid = sessionSid(accountId, userId, sessionDigest);
  return commitIndexChange(context, accountId, userId, (sessions) => {
    const session = sessions.find((entry) => entry.sessionDigest === sessionDigest);
    // Not indexed, or no longer: also when an earlier attempt saw it and lost its write to another instance ending
    // the same session. An entry leaves the index only once every grant it lists is gone, so nothing of the
    // session is left to end: already ended, not an error ("sign out everywhere" on two devices at once).
    if (session === undefined) return { sessions, settle: () => null };
    // The earlier sessions of the same browser and user that it replaced end with it (carry-over.ts `indexSession`).
    const carried = new Set(session.carried ?? []);
    const ending = sessions.filter((entry) => entry === session || carried.has(entry.sessionDigest));
    const prepare = async (): Promise<void> => {
      const fresh = ending.flatMap((entry) => grantsOnly(entry.grants)).filter((grant) => !revoked.has(grant.grantId));
      await Promise.all(fresh.map((grant) => context.store.delete(grantKey(grant.grantId))));
      for (const grant of fresh) revoked.add(grant.grantId);
      // After the grants (a failure here leaves no token of the session alive), before the record and the index entry
      // go (a failure here leaves both, so the user's retry with the same cookie finds the session and queues again;
      // the queue keeps one job per app, and one more after a delivery already under way). Each app is told the sid
      // of the session it got its tokens through: a carried session's own.
      for (const entry of ending) {
        const entrySid = sessionSid(accountId, userId, entry.sessionDigest);
        await queueLogoutTokens(context, { accountId, userId, sid: entrySid, clientIds: clientIdsOf(entry) });
      }
      await Promise.all(ending.map((entry) => context.store.delete(sessionKeyOfDigest(entry.sessionDigest))));
    };
    const rest = sessions.filter((entry) => !ending.includes(entry));
    const clientIds = [...new Set(ending.flatMap(clientIdsOf))];
    return { sessions: rest, prepare, settle: () => ({ sid, authTime: session.authTime, clientIds }) };
  });
}

/**
 * `sentinel.endSession({ accountId, sid })`: ends one device session wherever it is used. The `sid` of an earlier
 * sign-in that a later one in the same browser carries over (carry-over.ts) names that browser's session as a whole,
 * as it does at RP-initiated logout: the apps signed in before hold only that `sid`, and ending it alone would leave
 * the browser signed in with its later grants, which a later `endSession` by the earlier `sid` could then not find.
 *
 * @example const ended = await endSessionBySid(context, '123456', sid); // false: no such session
 */
export async function endSessionBySid(context: SessionContext, accountId: string, sid: string): Promise<EndedSession | null> {
  const parts = parseSid(sid);
  const index = parts === null ? null : await readIndexOfSid(context, accountId, sid);
  if (parts === null || index === null) return null;
  // The browser sessions carrying it first (each ends it with its own), then the session itself should none.
  const carriers = index.sessions.filter((session) => session.carried?.includes(parts.sessionDigest) === true);
  let ended: EndedSession | null = null;
  for (const sessionDigest of [...carriers.map((session) => session.sessionDigest), parts.sessionDigest]) {
    ended = (await endIndexedSession(context, accountId, index.userId, sessionDigest)) ?? ended;
  }
  // Ended already: committed, so a throwing onEvent does not turn the ending into a failure (here and below).
  if (ended !== null) context.emit({ type: 'session.ended', accountId, userId: index.userId, reason: 'ended' }, 'committed');
  return ended;
}

/**
 * `sentinel.endUserSessions({ accountId, userId })`: "sign out everywhere". Resolves to the number of sessions
 * ended, each browser once (as `listSessions` lists them).
 *
 * @example const count = await endAllUserSessions(context, '123456', 'u-1');
 */
export async function endAllUserSessions(context: SessionContext, accountId: string, userId: string): Promise<number> {
  const index = await readUserIndex(context, accountId, userId);
  // The earlier sign-ins a browser's session carries last: ending that session ends them, and the browser counts
  // once, as listSessions lists it. One still listed after its carrier ended (never, as endings go) ends on its own.
  const carried = new Set(index.sessions.flatMap((session) => session.carried ?? []));
  const inOrder = [
    ...index.sessions.filter((session) => !carried.has(session.sessionDigest)),
    ...index.sessions.filter((session) => carried.has(session.sessionDigest)),
  ];
  let count = 0;
  try {
    // One at a time: each ending rewrites the same index record, so in parallel they would only retry each other.
    for (const session of inOrder) {
      if ((await endIndexedSession(context, accountId, userId, session.sessionDigest)) !== null) count++;
    }
  } finally {
    // Also when a later ending fails (the store): those before it ended, and the audit log must say so.
    if (count > 0) context.emit({ type: 'session.ended', accountId, userId, reason: 'ended-everywhere' }, 'committed');
  }
  return count;
}

/**
 * Ends every grant of one user with one app ("disconnect this app"), in every session. The app gets one logout
 * token per session it loses (it no longer holds tokens through it); the sessions themselves stay, with their other
 * apps. Resolves to the number of grants ended.
 *
 * @example const revoked = await revokeUserAppGrants(context, '123456', 'u-1', 'client-a');
 */
export async function revokeUserAppGrants(context: SessionContext, accountId: string, userId: string, clientId: string): Promise<number> {
  // Kept across the attempts of the revocation's batch: what was deleted is counted, and not deleted again.
  const revoked = new Set<string>();
  return commitIndexChange(context, accountId, userId, (sessions) => {
    const affected = sessions.filter((session) => session.grants.some((grant) => grant.clientId === clientId));
    if (affected.length === 0) return { sessions, settle: () => revoked.size };
    const prepare = async (): Promise<void> => {
      // An app's marker in a session (its tokens there expired) has no grant to end, but the app still leaves it.
      const grants = affected.flatMap((session) => grantsOnly(session.grants).filter((grant) => grant.clientId === clientId));
      const fresh = grants.filter((grant) => !revoked.has(grant.grantId));
      await Promise.all(fresh.map((grant) => context.store.delete(grantKey(grant.grantId))));
      for (const grant of fresh) revoked.add(grant.grantId);
      // The app no longer holds tokens through these sessions: one logout token per session, as for an ended session.
      for (const session of affected) {
        const sid = sessionSid(accountId, userId, session.sessionDigest);
        await queueLogoutTokens(context, { accountId, userId, sid, clientIds: [clientId] });
      }
    };
    const rest = sessions.map((session) => ({ ...session, grants: session.grants.filter((grant) => grant.clientId !== clientId) }));
    const settle = (): number => {
      // Sessions naming the app by a marker alone had no grant of it to end: no event for them.
      if (revoked.size > 0) context.emit({ type: 'grants.revoked', accountId, clientId, userId, count: revoked.size }, 'committed');
      return revoked.size;
    };
    return { sessions: rest, prepare, settle };
  });
}

/**
 * RP-initiated logout whose `id_token_hint` names (by `sid`) a session whose record is gone (it idled out, or was
 * replaced by a new sign-in) while grants issued through it still live: ends those grants and tells the apps, as
 * ending the session in its browser would have. The hint must be the session's: its user's, with the session's
 * `auth_time`. A session whose record still lives is left alone: a hint alone never ends a session in use, which
 * the browser holding it ends at once, or after the user confirms.
 *
 * @example const ended = await endLapsedSession(context, accountId, { sub, sid, authTime });
 */
export async function endLapsedSession(
  context: SessionContext,
  accountId: string,
  hint: { sub: string; sid: string; authTime?: number | undefined },
): Promise<EndedSession | null> {
  const parts = parseSid(hint.sid);
  if (parts === null || parts.userPart !== userPart(accountId, hint.sub)) return null;
  if ((await context.store.get(sessionKeyOfDigest(parts.sessionDigest))) !== null) return null;
  const entry = (await readUserIndex(context, accountId, hint.sub)).sessions.find(
    (session) => session.sessionDigest === parts.sessionDigest,
  );
  if (entry === undefined || entry.authTime !== hint.authTime) return null;
  return endIndexedSession(context, accountId, hint.sub, parts.sessionDigest);
}

/**
 * The store key of the note that the ending of a device session has begun: `[accountId, userId]`, whose index lists
 * the session. The record goes before the index write (so nothing lives that the index does not list); when that
 * write fails, the note is how the retry of the same cookie finds the index entry to end.
 */
function endingKey(sessionDigest: string): string {
  return `session-ending:${sessionDigest}`;
}

/**
 * Ends the device session behind a cookie (logout and RP-initiated logout): what {@link endIndexedSession} does,
 * and the record itself even when the index does not know the session (stored before the index existed). Resolves
 * the session as it was, for the audit event, or `null` when there was none or a concurrent ending of the same cookie
 * ended it first. Until the ending is done a note says whose session it is, so a retry after a store failure
 * finishes it ({@link finishDeviceSessionEnding}).
 *
 * @example const ended = await endDeviceSession(context, sessionId);
 */
export async function endDeviceSession(context: SessionContext, sessionId: string): Promise<SessionRecord | null> {
  const key = sessionKey(sessionId);
  const record = parseSessionRecord(await context.store.get(key));
  if (record === null) return parseSessionRecord(await context.store.take(key));
  const sessionDigest = sessionDigestOfKey(key);
  const note = endingKey(sessionDigest);
  // Written before anything ends (a failure here ends nothing, and the retry finds the record), kept as long as the
  // cookie could have been used.
  await context.store.set(note, JSON.stringify([record.accountId, record.userId]), Math.max(1, record.expiresAt - Date.now()));
  const unlisted = await endIndexedSession(context, record.accountId, record.userId, sessionDigest);
  const taken = parseSessionRecord(await context.store.take(key));
  await context.store.delete(note);
  // Neither its index entry nor its record was left for this call: another ending of the same cookie (a sign-out
  // sent twice at once, a double click) got there first, and its `session.ended` is the one of this sign-out.
  return unlisted === null && taken === null ? null : (taken ?? record);
}

/**
 * Finishes the ending of the device session behind a cookie whose record is already gone: a logout that a store
 * failure cut short after the record went (answered 500) left the session in its user's index, where a code issued
 * just before could still attach to it. Ends that index entry (its grants, its deliveries, as
 * {@link endIndexedSession}) when the ending's note names a user of `accountId`. Resolves the user and whether an
 * entry was ended, or `null` when no ending of this session was under way.
 *
 * @example const finished = await finishDeviceSessionEnding(context, sessionId, accountId);
 */
export async function finishDeviceSessionEnding(
  context: SessionContext,
  sessionId: string,
  accountId: string,
): Promise<{ userId: string; ended: boolean } | null> {
  const sessionDigest = sessionDigestOfKey(sessionKey(sessionId));
  const note = endingKey(sessionDigest);
  const owner = parseEndingNote(await context.store.get(note));
  // Only a session of this account: logging out of account A leaves account B alone.
  if (owner === null || owner.accountId !== accountId) return null;
  const ended = await endIndexedSession(context, accountId, owner.userId, sessionDigest);
  await context.store.delete(note);
  return { userId: owner.userId, ended: ended !== null };
}

function parseEndingNote(raw: string | null): { accountId: string; userId: string } | null {
  if (raw === null) return null;
  try {
    const value: unknown = JSON.parse(raw);
    if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string') return null;
    return { accountId: value[0], userId: value[1] };
  } catch {
    return null;
  }
}

/**
 * A session replaced by another user's sign-in in the same browser: its record is gone, so its entry stays listed
 * only while grants issued through it live (a new sign-in is not a logout: the apps keep their tokens, and the new
 * user's logout does not end them). The same user's new sign-in carries the session over instead
 * (carry-over.ts `indexSession`). The earlier sign-ins it carries end with it: they are part of the browser's
 * session (carrying raised their ends to its own), and a console session that came from one of them would otherwise
 * stay open to the next person at that browser (src/console/session-origin.ts reads the entry's end).
 *
 * @example await retireIndexedSession(context, previous.accountId, previous.userId, sessionDigest);
 */
export async function retireIndexedSession(
  context: SessionContext,
  accountId: string,
  userId: string,
  sessionDigest: string,
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await changeUserIndex(context, accountId, userId, (sessions) => {
    const session = sessions.find((entry) => entry.sessionDigest === sessionDigest);
    if (session === undefined) return null;
    const retired = new Set([sessionDigest, ...(session.carried ?? [])]);
    return sessions.map((entry) => (retired.has(entry.sessionDigest) ? { ...entry, sessionEnd: Math.min(entry.sessionEnd, now) } : entry));
  });
}

/**
 * Takes back a session that was created and indexed but never handed to the browser (the end of its sign-in failed
 * before the cookie was sent: a code or event write, a vetoing `onEvent`): its record, then its index entry alone.
 * Not {@link endIndexedSession}, which would end the earlier sign-in of the browser the entry carries, still the
 * browser's live session; left listed, the entry stood for a session no browser holds and hid that one under it.
 * `earlier` is the entry of that earlier session, put back when the new one's write dropped it (an entry without
 * grants is not carried, carry-over.ts): a live session missing from the index is one no ending can find; it carries
 * again the sessions the new entry took over from it. An entry that lists grants meanwhile (none is issued before the
 * cookie) is left as it is.
 *
 * @example await withdrawUnsentSession(context, accountId, userId, sessionDigest, earlierEntry);
 */
export async function withdrawUnsentSession(
  context: SessionContext,
  accountId: string,
  userId: string,
  sessionDigest: string,
  earlier?: IndexedSession,
): Promise<void> {
  await context.store.delete(sessionKeyOfDigest(sessionDigest));
  await changeUserIndex(context, accountId, userId, (sessions) => {
    const entry = sessions.find((session) => session.sessionDigest === sessionDigest);
    if (entry === undefined || entry.grants.length > 0) return null;
    const rest = sessions.filter((session) => session !== entry);
    if (earlier === undefined) return rest;
    // The earlier session carries again what the new one took over from it (carry-over.ts `carryOver`'s inverse).
    const carried = (entry.carried ?? []).filter((digest) => digest !== earlier.sessionDigest);
    const own = rest.find((session) => session.sessionDigest === earlier.sessionDigest) ?? earlier;
    const restored = { ...own, carried: carried.length === 0 ? undefined : carried };
    return [...rest.filter((session) => session !== own), restored];
  });
}
