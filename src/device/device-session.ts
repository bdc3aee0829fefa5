/**
 * A device-flow grant in its user's session index (src/sessions/session-index.ts). The device signed in through no
 * browser session of its own, so it gets an index entry of its own, named by its grant: the device is listed among
 * the user's sessions and its app among the connected apps, "sign out everywhere", "end this session" and
 * "disconnect this app" end its grant, its ID tokens carry the entry's `sid`, and ending it sends the app a logout
 * token. It does not join the session of the browser that approved it: signing out on the phone that approved a TV
 * does not disconnect the TV.
 *
 * The entry is written when the person approves, before the approval itself, and lists a stand-in for the grant the
 * device's poll will create: the approval is then where ending the user's sessions or disconnecting the app looks,
 * and either removes the entry (or the stand-in). The poll creates the grant, then puts it in place of the stand-in
 * only while the stand-in is still there, as a code's grant joins only a session still indexed; otherwise it revokes
 * the grant and answers `access_denied`. An ending that read the entry before the grant existed loses its
 * compare-and-set to the poll's write, plans again, and ends the grant it now lists, which it never saw before.
 */
import { parseSessionRecord, sessionKeyOfDigest } from '../authorize/state/session.js';
import type { SentinelContext } from '../http/context.js';
import { en } from '../i18n/en.js';
import { OAuthError } from '../errors.js';
import { digest } from '../lib/random-secrets.js';
import { catchRejection } from '../lib/thenable.js';
import { endIndexedSession } from '../sessions/end-sessions.js';
import { changeUserIndex, commitIndexChange, type IndexedSession, sessionSid } from '../sessions/session-index.js';
import { type GrantRecord, grantIndexUntil, revokeGrant } from '../token/grant-records.js';
import { type CommittedGrant, undoCommit } from '../token/undo-commit.js';
import type { DeviceRecord } from './device-records.js';

/** The entry's stand-in for a session digest: derived from the grant id, so a retried write names the same entry. */
function deviceSessionDigest(grantId: string): string {
  return digest(`device-grant\n${grantId}`);
}

/**
 * What the entry lists in place of the grant between approval and poll: shaped like a grant id, under a label of its
 * own so that no grant ever has it (ending it deletes a `grant:` key nobody wrote).
 */
function approvalStandIn(grantId: string): string {
  return digest(`device-approval\n${grantId}`).slice(0, 22);
}

/**
 * The `sid` of a device grant's own index entry, for its ID tokens and its logout token.
 *
 * @example const sid = deviceSid('123456', 'u-1', grantId);
 */
export function deviceSid(accountId: string, userId: string, grantId: string): string {
  return sessionSid(accountId, userId, deviceSessionDigest(grantId));
}

/** What an approval is indexed with. */
export interface DeviceApproval {
  grantId: string;
  userId: string;
  /** Seconds since the epoch when the approving user authenticated. */
  authTime: number;
  /** The device authorization being approved. */
  record: DeviceRecord;
  /** The digest of the browser session approving it: in use, so the last of the user's sessions the bound ends. */
  approvedFrom?: string | undefined;
}

/**
 * The check, run before each attempt to write an approval's entry, that the browser session approving it still
 * exists. The person's Allow read that session when it arrived; a logout of it, or "sign out everywhere", may have
 * landed since. An ending deletes the session's record before its own index write, so a record still there at this
 * read means the approval's write comes first (or the ending's write, landing in between, fails this one's
 * compare-and-set, and the next attempt reads the record again); a record gone means the approval comes after the
 * ending and is refused, as a code issued through an ended session gets no tokens.
 */
function approvingSessionStands(context: SentinelContext, approvedFrom: string | undefined): (() => Promise<void>) | undefined {
  if (approvedFrom === undefined) return undefined;
  return async () => {
    const session = parseSessionRecord(await context.store.get(sessionKeyOfDigest(approvedFrom)));
    if (session === null || session.expiresAt <= Date.now()) {
      throw new OAuthError('invalid_request', en.deviceConfirmExpired);
    }
  };
}

/**
 * Lists an approval in its user's index, before it is written: an entry whose session has already ended (there is no
 * session record), listing the device's app with a stand-in for its grant until the device record is kept (no poll
 * gets tokens after that). An entry the device already has (another approval of the same user) is left as it is.
 * The device counts as a session towards `session.maxSessionsPerUser`, as a browser's sign-in does: the user's oldest
 * sessions beyond it end as a logout ends them, or approving devices from one signed-in browser, which asks for no
 * password, would grow the user's one index record without bound (every write of it costlier, and on MemoryStore
 * the never-evicted budget every other user's sign-in needs). A failure rejects, and the approval is then not
 * written (a 500, fail closed).
 *
 * Returns the digests of the sessions beyond the bound, for {@link endSessionsBeyondBound} once the approval stood:
 * an approval that did not apply (another decision came first) or was vetoed ends nobody's session.
 *
 * @example const beyond = await indexDeviceApproval(context, { grantId, userId, authTime, record });
 */
export async function indexDeviceApproval(context: SentinelContext, approval: DeviceApproval): Promise<string[]> {
  const { grantId, userId, authTime, record } = approval;
  const sessionDigest = deviceSessionDigest(grantId);
  const entry: IndexedSession = {
    sessionDigest,
    authTime,
    sessionEnd: authTime,
    grants: [{ clientId: record.clientId, grantId: approvalStandIn(grantId), until: record.retainUntil }],
  };
  const maxSessions = context.config.session.maxSessionsPerUser;
  const approvingSession = approvingSessionStands(context, approval.approvedFrom);
  return commitIndexChange(context, record.accountId, userId, (sessions) => {
    if (sessions.some((session) => session.sessionDigest === sessionDigest)) return { sessions, settle: (): string[] => [] };
    // As indexSession's bound: the oldest by sign-in time, never the new entry, and the approving browser only when
    // nothing else is left (its devices share its sign-in time: a tie would sign it out in the middle of its use).
    const excess = sessions.length + 1 - maxSessions;
    const last = (session: IndexedSession): number => (session.sessionDigest === approval.approvedFrom ? 1 : 0);
    const byAge = [...sessions].sort((a, b) => last(a) - last(b) || a.authTime - b.authTime);
    const oldest = excess > 0 ? byAge.slice(0, excess) : [];
    return {
      sessions: [...sessions, entry],
      prepare: approvingSession,
      settle: () => oldest.map((session) => session.sessionDigest),
    };
  });
}

/**
 * Ends the sessions an approval that stood (and was announced) put beyond `session.maxSessionsPerUser`, as a logout
 * ends them. A store failing there is told to `onError` and fails nothing: the approval stood and was announced, so a
 * 500 would tell the person that a device now connected was not, and the next sign-in or approval of the user ends
 * what is still beyond the bound (it counts the index as it finds it).
 *
 * @example await endSessionsBeyondBound(context, approval, beyond);
 */
export async function endSessionsBeyondBound(context: SentinelContext, approval: DeviceApproval, beyond: readonly string[]): Promise<void> {
  const { accountId } = approval.record;
  try {
    for (const digest of beyond) {
      if ((await endIndexedSession(context, accountId, approval.userId, digest)) !== null) {
        // Ended already, so committed: a throwing onEvent must not fail the approval for an ending that happened.
        context.emit({ type: 'session.ended', accountId, userId: approval.userId, reason: 'sessions-limit' }, 'committed');
      }
    }
  } catch (error) {
    try {
      catchRejection(context.config.onError?.(error, { route: 'device-confirm', accountId }));
    } catch {
      // The host's reporter failed as well; the approval stood all the same.
    }
  }
}

/**
 * Takes back the entry of an approval that did not apply (the code expired, or another decision came first), unless
 * the decision that came first is an approval by the same user, which the entry now stands for. Only an entry that
 * still lists nothing but the stand-in goes: never one a grant joined.
 *
 * @example if (!outcome.applied) await withdrawDeviceApproval(context, approval, outcome.record);
 */
export async function withdrawDeviceApproval(
  context: SentinelContext,
  approval: DeviceApproval,
  decided: DeviceRecord | null,
): Promise<void> {
  const { grantId, userId, record } = approval;
  const approvedBySameUser = decided?.userId === userId && (decided.status === 'approved' || decided.status === 'issued');
  if (approvedBySameUser) return;
  const sessionDigest = deviceSessionDigest(grantId);
  const standIn = approvalStandIn(grantId);
  await changeUserIndex(context, record.accountId, userId, (sessions) => {
    const entry = sessions.find((session) => session.sessionDigest === sessionDigest);
    if (entry === undefined || entry.grants.some((grant) => grant.grantId !== standIn)) return null;
    return sessions.filter((session) => session !== entry);
  });
}

/**
 * Puts a device grant just created in place of its approval's stand-in. When the stand-in is gone (the user signed
 * out everywhere, ended the device's session or disconnected its app since approving) the grant is revoked and the
 * poll answers `access_denied`: its tokens were signed but are never sent. When the index cannot be written the
 * commit is taken back (token/undo-commit.ts): the grant goes and the device authorization is approved again, so the
 * poll fails with a 500 and the next one gets the tokens; no grant lives where ending the user's sessions would miss
 * it.
 *
 * @example await attachDeviceGrant(context, grant, { grantId, written, credential });
 */
export async function attachDeviceGrant(context: SentinelContext, grant: GrantRecord, committed: CommittedGrant): Promise<void> {
  const { grantId } = committed;
  const sessionDigest = deviceSessionDigest(grantId);
  const standIn = approvalStandIn(grantId);
  const indexed = { clientId: grant.clientId, grantId, until: grantIndexUntil(context, grant) };
  let attached: boolean;
  try {
    attached = await changeUserIndex(context, grant.accountId, grant.userId, (sessions) => {
      const at = sessions.findIndex((session) => session.sessionDigest === sessionDigest);
      const entry = sessions[at];
      // The grant itself stands in too: an earlier poll's write put it there, but its reply was lost and that commit
      // was taken back (the grant id is the approval's, the same at every poll). Seen as withdrawn, the approval was
      // lost to a store's lost reply, the next poll answering access_denied.
      if (entry === undefined || !entry.grants.some((listed) => listed.grantId === standIn || listed.grantId === grantId)) return null;
      const next = [...sessions];
      next[at] = { ...entry, grants: [indexed] };
      return next;
    });
  } catch (error) {
    return undoCommit(context, committed, error);
  }
  if (attached) return;
  await revokeGrant(context, grantId);
  throw new OAuthError('access_denied', 'the approval was withdrawn: the user signed out everywhere or disconnected the app');
}
