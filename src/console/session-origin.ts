/**
 * Where a console session came from: the device session the operator signed in through and the grant of the
 * console's own code exchange, as the service's session index lists them. The console session lives only while
 * they do, so what ends them for every other app ends the console too: signing out (the logout endpoint, the account
 * page's "Sign out"), ending the session or every session of the user (account page, `sentinel.endSession` /
 * `endUserSessions`, the console's own sessions page), and, while the account page lists the console among the
 * user's apps, disconnecting it there. One read of the user's index per console request.
 */
import type { SentinelContext } from '../http/context.js';
import { readUserIndex } from '../sessions/session-index.js';

/** What a console session records of its origin. */
export interface SessionOrigin {
  /** The digest of the device session's id (the second half of its `sid`). */
  sessionDigest: string;
  /** The grant of the console's code exchange. */
  grantId: string;
  /**
   * Seconds since the epoch until which the index lists the grant (about two access-token lifetimes: the grant has no
   * refresh token). After that its absence says nothing, and only the device session's entry is checked.
   */
  grantUntil: number;
}

/**
 * The origin of a grant the console has just been issued: the index entry that lists it. `null` when none does (the
 * session ended between the exchange and this read, or the grant was ended since): no console session then.
 *
 * @example const origin = await originOfGrant(context, accountId, userId, claims.gid);
 */
export async function originOfGrant(
  context: SentinelContext,
  accountId: string,
  userId: string,
  grantId: string,
): Promise<SessionOrigin | null> {
  const index = await readUserIndex(context, accountId, userId);
  for (const session of index.sessions) {
    const grant = session.grants.find((listed) => listed.grantId === grantId);
    if (grant !== undefined) return { sessionDigest: session.sessionDigest, grantId, grantUntil: grant.until };
  }
  return null;
}

/**
 * Whether the origin of a console session still stands: its device session is in the user's index and has not ended
 * (its absolute end, or another user's sign-in in its browser), and, while the
 * index would still list it, the console's grant is in that entry. A store that cannot be read, or an index that
 * does not parse, rejects: the caller fails the request closed (500), never treating the session as live.
 *
 * @example if (!(await originStands(context, stored))) await endOperatorSession(store, request);
 */
export async function originStands(
  context: SentinelContext,
  session: SessionOrigin & { accountId: string; userId: string },
): Promise<boolean> {
  const index = await readUserIndex(context, session.accountId, session.userId);
  const entry = index.sessions.find((listed) => listed.sessionDigest === session.sessionDigest);
  if (entry === undefined) return false;
  const now = Math.floor(Date.now() / 1000);
  // The entry outlives its session while grants issued through it live (an app's refresh token, the console's own
  // grant): past its absolute end, or retired by another user's sign-in in that browser (sessionEnd set to then), the
  // session is over, whatever the entry still lists. A same-user sign-in that carries it over extends its end.
  if (entry.sessionEnd <= now) return false;
  // The index drops a grant once its `until` has passed (session-index.ts `pruned`): only before then does a missing
  // grant mean it was ended (the app disconnected, or the session's per-app bound reached).
  if (now >= session.grantUntil) return true;
  return entry.grants.some((grant) => grant.grantId === session.grantId);
}
