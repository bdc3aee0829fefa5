/**
 * Opening a device session: the record, then the user's index (so ending the session can always find it), then the
 * user's oldest sessions beyond `session.maxSessionsPerUser` ended as a logout ends them; the cookie only after all.
 * Apart from session.ts because ending sessions (sessions/end-sessions.ts) reads session records.
 */
import type { SentinelContext } from '../../http/context.js';
import type { AmrValue } from '../../assurance/levels.js';
import { endIndexedSession, withdrawUnsentSession } from '../../sessions/end-sessions.js';
import { indexSession } from '../../sessions/carry-over.js';
import {
  encodeSessionRecord,
  newSessionId,
  parseSessionRecord,
  type SessionRecord,
  sessionDigestOfKey,
  sessionKey,
  sessionKeyOfDigest,
} from './session.js';

/**
 * Creates a session with a fresh id (never reusing one the browser presented, so no session fixation) and
 * returns the id for the cookie.
 *
 * @example
 * const sessionId = await createSession(context, { accountId, userId, authTime, amr: ['pwd'] }); // the cookie's value
 */
export async function createSession(
  context: SentinelContext,
  input: {
    accountId: string;
    userId: string;
    authTime: number;
    amr?: AmrValue[] | undefined;
    /** The digest of the browser's session of the same user that this one replaces: carried over in the index. */
    replaces?: string | undefined;
  },
): Promise<string> {
  const { absoluteTtl, idleTtl } = context.config.session;
  const now = Date.now();
  const sessionId = newSessionId();
  const record: SessionRecord = {
    userId: input.userId,
    accountId: input.accountId,
    authTime: input.authTime,
    expiresAt: now + absoluteTtl * 1000,
  };
  if (input.amr !== undefined) record.amr = input.amr;
  const key = sessionKey(sessionId);
  // The record before the index entry, and the cookie only after both. An ending of the user's sessions that reads
  // the index before the entry is there leaves the session listed, for the next ending to find; one that reads it
  // after finds the record there to delete. Written the other way round, an ending between the two writes deleted
  // a record not yet written and dropped the entry, and the record written next made a session that signed the
  // browser in while no ending (endUserSessions, endSession, the account page) could see it.
  await context.store.set(key, encodeSessionRecord(record), idleTtl * 1000);
  try {
    const beyond = await indexSession(
      context,
      {
        accountId: input.accountId,
        userId: input.userId,
        sessionDigest: sessionDigestOfKey(key),
        authTime: input.authTime,
        sessionEnd: Math.ceil(record.expiresAt / 1000),
        replaces: input.replaces,
        // A code issued through the replaced session just before may be on its way to its app: its exchange still
        // joins that session (carried by this one). A minute more than the code's life covers the exchange itself.
        codesFor: context.config.codeTtl + 60,
      },
      context.config.session.maxSessionsPerUser,
    );
    // The user's oldest sessions beyond the bound end as a logout would end them: grants, logout tokens, record.
    // Ended already, so committed: a throwing onEvent must not fail the sign-in for an ending that happened.
    for (const sessionDigest of beyond) {
      if ((await endIndexedSession(context, input.accountId, input.userId, sessionDigest)) !== null) {
        const { accountId, userId } = input;
        context.emit({ type: 'session.ended', accountId, userId, reason: 'sessions-limit' }, 'committed');
      }
    }
  } catch (error) {
    // No cookie is sent for it: the record goes, and so does its index entry when it was written (an ending of the
    // sessions beyond the bound failed): left listed, it stood for a session no browser holds, counted against the
    // bound, and hid the browser's earlier session it carried, whose entry is put back if the write dropped it.
    await replacedEntry(context, input.replaces)
      .then((earlier) => withdrawUnsentSession(context, input.accountId, input.userId, sessionDigestOfKey(key), earlier))
      .catch(() => undefined);
    throw error;
  }
  return sessionId;
}

/** The index entry of the replaced session as {@link withdrawUnsentSession} puts it back, from its record if still there. */
async function replacedEntry(
  context: SentinelContext,
  replaces: string | undefined,
): Promise<{ sessionDigest: string; authTime: number; sessionEnd: number; grants: [] } | undefined> {
  if (replaces === undefined) return undefined;
  const previous = parseSessionRecord(await context.store.get(sessionKeyOfDigest(replaces)));
  if (previous === null) return undefined;
  return { sessionDigest: replaces, authTime: previous.authTime, sessionEnd: Math.ceil(previous.expiresAt / 1000), grants: [] };
}
