/**
 * Re-sign-in carry-over: the same user signing in again in the same browser. The new device session does not leave
 * the earlier sign-in's apps behind (a new sign-in is not a logout, yet signing out of the browser later must end
 * them too), so its index entry carries the earlier entries: which ones it carries, which entries its bound ends
 * first, and whether a session carries another (RP-initiated logout with an ID token of the earlier sign-in).
 *
 * Apart from session-index.ts, which keeps the record, its `sid` and the grants attached to it, so that file stays one
 * concept and within the size limit. `indexSession` is here too: it is the one place where an entry is added and
 * carries others. This file reads and writes the record through session-index.ts, which imports nothing from here
 * (no import cycles, not even of types: biome's `noImportCycles`).
 *
 * Stored form of what an entry carries: index-encoding.ts.
 */
import type { IndexedSession } from './index-encoding.js';
import { commitIndexChange, readUserIndex, type SessionContext } from './session-index.js';

/**
 * `sessions` with the entry of `replaced` (the browser's session that a new sign-in of the same user replaces) and
 * the entries it carried made part of `entry`: named by it, so ending `entry` ends them (each with its own sid, the
 * one its apps hold), and listed as long as it (so an app whose tokens expired stays named by its marker). An
 * earlier entry that lists nothing yet is carried only until `codesUntil`: a code issued through it moments ago may
 * still be on its way to its app, and its exchange joins the grant to that entry (session-index.ts `attachGrant`,
 * which then lists it as long as its carrier); dropped at once, the exchange found no entry and refused the code as
 * if the session had been ended, which a new sign-in is not. Past that, the index drops it (nothing of it to end).
 */
function carryOver(
  sessions: IndexedSession[],
  entry: IndexedSession,
  replaced: string,
  codesUntil: number,
): { others: IndexedSession[]; entry: IndexedSession } {
  const previous = sessions.find((session) => session.sessionDigest === replaced);
  if (previous === undefined) return { others: sessions, entry };
  const earlier = new Set([replaced, ...(previous.carried ?? [])]);
  const now = Math.floor(Date.now() / 1000);
  const others: IndexedSession[] = [];
  const carried: string[] = [];
  for (const session of sessions) {
    if (!earlier.has(session.sessionDigest)) others.push(session);
    else if (session.grants.length > 0) {
      carried.push(session.sessionDigest);
      others.push({ ...session, sessionEnd: Math.max(session.sessionEnd, entry.sessionEnd), carried: undefined });
    } else if (Math.min(session.sessionEnd, codesUntil) > now) {
      carried.push(session.sessionDigest);
      others.push({ ...session, sessionEnd: Math.min(session.sessionEnd, codesUntil), carried: undefined });
    }
  }
  return { others, entry: carried.length === 0 ? entry : { ...entry, carried } };
}

/**
 * Whether the browser's session `sessionDigest` of a user carries the earlier session `earlier` (the same user signed
 * in again in that browser since, {@link indexSession}) and that session began at `earlier.authTime`. An ID token
 * issued through the earlier sign-in then names the browser's session: its apps hold that sid, and ending the
 * browser's session ends it.
 *
 * @example if (await carriesSession(context, accountId, userId, sessionDigestOf(sessionId), { sessionDigest, authTime })) endNow();
 */
export async function carriesSession(
  context: SessionContext,
  accountId: string,
  userId: string,
  sessionDigest: string,
  earlier: { sessionDigest: string; authTime: number },
): Promise<boolean> {
  const { sessions } = await readUserIndex(context, accountId, userId);
  const carrier = sessions.find((session) => session.sessionDigest === sessionDigest);
  if (carrier?.carried === undefined || !carrier.carried.includes(earlier.sessionDigest)) return false;
  return sessions.some((session) => session.sessionDigest === earlier.sessionDigest && session.authTime === earlier.authTime);
}

/**
 * The `excess` entries a new session's bound ends: first the oldest earlier sign-ins of its own browser that it
 * carries, then the oldest of the rest. A carried entry is a row of the one index record like any (the bound keeps
 * that record small, so it counts), but the sign-in that grew the record is the one that gives way: signing in again
 * and again in one browser never ends the user's sessions on other devices.
 */
function oldestBeyond(others: IndexedSession[], entry: IndexedSession, excess: number): IndexedSession[] {
  const own = new Set(entry.carried ?? []);
  const rank = (session: IndexedSession): number => (own.has(session.sessionDigest) ? 0 : 1);
  return [...others].sort((a, b) => rank(a) - rank(b) || a.authTime - b.authTime).slice(0, excess);
}

/**
 * Adds a new device session to its user's index (called as the session is created, before its cookie is sent), and
 * answers the digests of the user's oldest entries beyond `maxSessions` (the new one never among them; the earlier
 * sign-ins it carries first), which the caller ends: a user who signs in again and again, each time from a fresh browser, would otherwise grow one record
 * without bound, every write of it costlier, and on MemoryStore fill the index's never-evicted budget that every
 * other user's sign-in needs.
 *
 * `replaces`, the digest of the browser's session that this sign-in of the same user replaces, is carried over in the
 * same write: the new session names the earlier one (and whatever that carried), whose grants stay, so signing out of
 * the browser later ends them too. A new sign-in is not a logout, and neither does it leave the earlier sign-in's
 * apps behind when the user signs out. `codesFor` keeps an earlier entry that lists nothing yet for the codes still on
 * their way from it (carryOver).
 *
 * @example const beyond = await indexSession(context, { accountId, userId, sessionDigest: sessionDigestOf(sessionId), authTime, sessionEnd }, 64);
 */
export async function indexSession(
  context: SessionContext,
  input: {
    accountId: string;
    userId: string;
    sessionDigest: string;
    authTime: number;
    sessionEnd: number;
    replaces?: string | undefined;
    /** Seconds a code issued through the replaced session may still be exchanged (`codeTtl`, and a margin). */
    codesFor?: number | undefined;
  },
  maxSessions = Number.POSITIVE_INFINITY,
): Promise<string[]> {
  const fresh: IndexedSession = { sessionDigest: input.sessionDigest, authTime: input.authTime, sessionEnd: input.sessionEnd, grants: [] };
  const codesUntil = Math.floor(Date.now() / 1000) + (input.codesFor ?? 0);
  return commitIndexChange(context, input.accountId, input.userId, (sessions) => {
    const rest = sessions.filter((session) => session.sessionDigest !== input.sessionDigest);
    const { others, entry } =
      input.replaces === undefined ? { others: rest, entry: fresh } : carryOver(rest, fresh, input.replaces, codesUntil);
    const excess = others.length + 1 - maxSessions;
    const beyond = excess > 0 ? oldestBeyond(others, entry, excess) : [];
    return { sessions: [...others, entry], settle: () => beyond.map((session) => session.sessionDigest) };
  });
}
