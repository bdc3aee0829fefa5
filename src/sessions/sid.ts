/**
 * The `sid` of a device session (OpenID Connect Front-/Back-Channel Logout) and the user part it shares with the key
 * of its user's session index (session-index.ts): made, parsed, and shortened for a record that already names the
 * account and user it derives from (a grant, src/token/grant-encoding.ts).
 */
import { digest } from '../lib/random-secrets.js';

/** `u` of a sid and of the index key: 132 bits of a digest of account and user. */
const USER_PART = /^[A-Za-z0-9_-]{22}$/;
/** The session part: the 22-character digest of this version's sessions, or the 43-character one of earlier ones. */
const DIGEST_PART = /^[A-Za-z0-9_-]{22}(?:[A-Za-z0-9_-]{21})?$/;

/**
 * User parts already worked out, by the text they digest. Every signed-in authorize request puts its session's sid
 * in the code it issues, and a SHA-256 digest costs more than the rest of that sid: a user's requests follow one
 * another, so the part is digested once, not on each. At most {@link USER_PARTS_KEPT} are kept; the map starts over
 * when full (a part then is digested again, never wrong).
 */
const userParts = new Map<string, string>();
const USER_PARTS_KEPT = 1024;

/**
 * The user part of a sid and of the index key.
 *
 * @example const key = `user-sessions:${userPart('123456', 'u-1')}`;
 */
export function userPart(accountId: string, userId: string): string {
  const input = `user-sessions\n${accountId}\n${userId}`;
  let part = userParts.get(input);
  if (part === undefined) {
    part = digest(input).slice(0, 22);
    if (userParts.size >= USER_PARTS_KEPT) userParts.clear();
    userParts.set(input, part);
  }
  return part;
}

/**
 * The `sid` of a device session (the same for every app signed in through it): the user part, a dot, and the digest
 * of the session id its record is keyed by (src/authorize/state/session.ts `sessionDigestOf`: 22 characters, or 43
 * for a session of an earlier version, whose sid apps already hold). From a sid the service finds both the user's
 * index and the session record, even after the record idled out while grants issued through it still live. The sid
 * reveals neither the session id (a one-way digest of it) nor anything an app does not already know.
 *
 * @example sessionSid('123456', 'u-1', sessionDigestOf(sessionId)) // 'Vd…22 chars….Qx…22 chars…'
 */
export function sessionSid(accountId: string, userId: string, sessionDigest: string): string {
  return `${userPart(accountId, userId)}.${sessionDigest}`;
}

/**
 * The parts of a sid; `null` for anything not shaped like one of ours (either length of the session part).
 *
 * @example const parts = parseSid(hint.sid); // { userPart, sessionDigest } or null
 */
export function parseSid(sid: string): { userPart: string; sessionDigest: string } | null {
  const dot = sid.indexOf('.');
  const user = sid.slice(0, dot);
  const session = sid.slice(dot + 1);
  return dot === -1 || !USER_PART.test(user) || !DIGEST_PART.test(session) ? null : { userPart: user, sessionDigest: session };
}

/**
 * What a record naming `accountId` and `userId` stores of a sid: its session part alone when its user part is that
 * user's (23 characters the record can derive again), else the sid whole.
 *
 * @example compactSid(grant.accountId, grant.userId, grant.sid) // 'Qx…22 chars…'
 */
export function compactSid(accountId: string, userId: string, sid: string): string {
  const parts = parseSid(sid);
  return parts !== null && parts.userPart === userPart(accountId, userId) ? parts.sessionDigest : sid;
}

/**
 * The sid a stored value of {@link compactSid} stands for: a whole sid (with its dot, as records of earlier versions
 * hold it) as it is, a session part completed with the user's part; `null` for anything else, which makes the
 * record unreadable (fail closed).
 *
 * @example const sid = expandSid(accountId, userId, stored);
 */
export function expandSid(accountId: string, userId: string, stored: string): string | null {
  if (stored.includes('.')) return stored;
  return DIGEST_PART.test(stored) ? sessionSid(accountId, userId, stored) : null;
}
