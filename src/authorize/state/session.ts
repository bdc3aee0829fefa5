/**
 * Device sessions (platform-operations.md §4.2 rule 2: a user with a session is not asked again).
 *
 * The cookie holds only a random id (264 bits); the record lives in the Store under `session:{d}`, `d` a one-way
 * digest of the id ({@link sessionDigestOf}), so a leaked store does not hand out live sessions. A session belongs
 * to one account: a session in account A never signs the user into account B. It ends at the first of: its
 * absolute lifetime, `idleTtl` without use, logout.
 */
import type { SentinelContext } from '../../http/context.js';
import { digest, randomSecret, shortDigest } from '../../lib/random-secrets.js';
import { type AmrValue, readAmr } from '../../assurance/levels.js';

/** What a device session stands for. Persisted under `session:{sessionDigestOf(sessionId)}` (see {@link encodeSessionRecord}). */
export interface SessionRecord {
  userId: string;
  accountId: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** Milliseconds since the epoch when the session ends whatever its use (absolute timeout). */
  expiresAt: number;
  /**
   * How the user authenticated (RFC 8176 `amr`), from which the session's `acr` follows (`assurance/levels.ts`).
   * Absent in sessions of earlier versions: they meet no `acr` requirement, so a step-up signs in again.
   */
  amr?: AmrValue[] | undefined;
}

/** Random bytes of a session id: 44 base64url characters, one more than the ids of earlier versions. */
const SESSION_ID_BYTES = 33;
/** The length of the session ids of earlier versions (256 bits), whose records are keyed by the full digest. */
const EARLIER_SESSION_ID_LENGTH = 43;

/**
 * A new session id, for the cookie: 264 random bits, 44 characters.
 *
 * @example const sessionId = newSessionId(); // the cookie's value; the record goes under sessionKey(sessionId)
 */
export function newSessionId(): string {
  return randomSecret(SESSION_ID_BYTES);
}

/**
 * The digest of a session id as its record's key, the session index and its `sid` carry it: the 22-character
 * `shortDigest` (132 bits, one-way) for ids of this version; for a 43-character id of an earlier version, the full
 * 43-character digest its record was stored under, so the sessions open when the service is upgraded go on. The id's
 * length tells the two apart: no second read, and a cookie of neither length names no session either way.
 *
 * @example sessionKeyOfDigest(sessionDigestOf(sessionId)) === sessionKey(sessionId)
 */
export function sessionDigestOf(sessionId: string): string {
  return sessionId.length === EARLIER_SESSION_ID_LENGTH ? digest(sessionId) : shortDigest(sessionId);
}

/**
 * The store key of a session id. Built as one flat string: a concatenated key would stay a rope of two strings in
 * a MemoryStore for the session's whole life, a third more bytes per session for nothing.
 */
export function sessionKey(sessionId: string): string {
  return sessionKeyOfDigest(sessionDigestOf(sessionId));
}

/**
 * The store key of a session whose id's digest is known (the session index and a `sid` carry the digest, never the
 * id).
 *
 * @example sessionKeyOfDigest(sessionDigestOf(sessionId)) === sessionKey(sessionId)
 */
export function sessionKeyOfDigest(sessionDigest: string): string {
  // ASCII only (prefix and base64url), so the latin1 round trip is exact.
  return Buffer.from(`session:${sessionDigest}`, 'latin1').toString('latin1');
}

/**
 * The digest of a session id as its store key carries it (the `sid` is built from it).
 *
 * @example sessionDigestOfKey(session.key) === sessionDigestOf(sessionId)
 */
export function sessionDigestOfKey(key: string): string {
  return key.slice('session:'.length);
}

/**
 * The stored form of a session: a JSON array `[userId, accountId, authTime, expiresAt, amr]`, less than half the
 * length of the object with named fields. A device session is the record a store holds most of (one per browser
 * signed in), so its length is most of the store's memory. `amr` is last and left out when the session has none;
 * sessions of earlier versions are the four-element array.
 *
 * @example encodeSessionRecord({ userId: 'u-1', accountId: '123456', authTime: 1767225600, expiresAt: 1767254400000, amr: ['pwd'] })
 * // '["u-1","123456",1767225600,1767254400000,["pwd"]]'
 */
export function encodeSessionRecord(record: SessionRecord): string {
  const parts: unknown[] = [record.userId, record.accountId, record.authTime, record.expiresAt];
  if (record.amr !== undefined) parts.push(record.amr);
  return JSON.stringify(parts);
}

function fromParts(userId: unknown, accountId: unknown, authTime: unknown, expiresAt: unknown, amr: unknown): SessionRecord | null {
  if (typeof userId !== 'string' || typeof accountId !== 'string' || typeof authTime !== 'number' || typeof expiresAt !== 'number') {
    return null;
  }
  // An amr the service does not recognise is dropped, not trusted: the session then meets no acr requirement.
  const methods = readAmr(amr);
  return methods === undefined ? { userId, accountId, authTime, expiresAt } : { userId, accountId, authTime, expiresAt, amr: methods };
}

/**
 * Reads a stored session: the array form (with or without `amr`), or the named-field object of earlier versions.
 *
 * @example const record = parseSessionRecord(await context.store.get(sessionKey(sessionId)));
 */
export function parseSessionRecord(value: string | null): SessionRecord | null {
  if (value === null) return null;
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed)) {
      return parsed.length === 4 || parsed.length === 5 ? fromParts(parsed[0], parsed[1], parsed[2], parsed[3], parsed[4]) : null;
    }
    if (typeof parsed !== 'object' || parsed === null) return null;
    const record = parsed as Partial<Record<keyof SessionRecord, unknown>>;
    return fromParts(record.userId, record.accountId, record.authTime, record.expiresAt, record.amr);
  } catch {
    return null;
  }
}

/** A live session as read from the store, with the key that {@link touchSession} writes it back under. */
export interface LiveSession {
  key: string;
  record: SessionRecord;
  /** The stored value (compact form): extending the session writes it back unchanged, with a new idle timeout. */
  raw: string;
  /** The value exactly as read: the extension applies only while the store still holds it (see {@link touchSession}). */
  stored: string;
}

/**
 * The live session of `sessionId` in `accountId`, or `null`, without extending it: the authorization endpoint
 * extends it only once it has decided to use it, and then together with the code's write (one store round trip).
 *
 * @example
 * const session = await readSession(context, sessionId, accountId);
 */
export async function readSession(context: SentinelContext, sessionId: string, accountId: string): Promise<LiveSession | null> {
  const key = sessionKey(sessionId);
  const raw = await context.store.get(key);
  const record = parseSessionRecord(raw);
  if (raw === null || record === null || record.accountId !== accountId) return null;
  if (record.expiresAt <= Date.now()) {
    await context.store.delete(key);
    return null;
  }
  // A record of the earlier named-field form is rewritten in the compact one when the session is next extended.
  return { key, record, raw: raw.startsWith('[') ? raw : encodeSessionRecord(record), stored: raw };
}

/**
 * Extends a session's idle timeout after use, never beyond its absolute end, but only while the session is still
 * stored as it was read. A plain write-back would bring back a session that a logout (or a sign-in replacing it)
 * ended between the read and the write: whoever holds the id would keep a session the user ended. So the write is
 * a compare-and-set on the value read; concurrent extensions of one session all apply (the value is unchanged).
 *
 * @returns `false` when the session ended (or changed) since it was read: it was not brought back, and the caller
 * treats the request as one without a session.
 * @example
 * if (!(await touchSession(context, session))) session = null;
 */
export async function touchSession(context: SentinelContext, session: LiveSession): Promise<boolean> {
  // At least 1 ms: a session that ran out since it was read is still written with a TTL the store accepts, and
  // reading it again finds it past its absolute end.
  const ttlMs = () => Math.min(context.config.session.idleTtl * 1000, Math.max(1, session.record.expiresAt - Date.now()));
  if (await context.store.swap([{ key: session.key, expect: session.stored, value: session.raw, ttlMs: ttlMs() }])) return true;
  // The one benign change: a concurrent request rewrote an earlier named-field record in the compact form.
  const now = await context.store.get(session.key);
  if (now !== session.raw || session.stored === session.raw) return false;
  return context.store.swap([{ key: session.key, expect: now, value: session.raw, ttlMs: ttlMs() }]);
}

/**
 * The live session of `sessionId` in `accountId`, or `null`. Using a session extends its idle timeout, never
 * beyond its absolute end.
 *
 * @example
 * const session = sessionId === null ? null : await useSession(context, sessionId, accountId);
 */
export async function useSession(context: SentinelContext, sessionId: string, accountId: string): Promise<SessionRecord | null> {
  const session = await readSession(context, sessionId, accountId);
  if (session === null) return null;
  return (await touchSession(context, session)) ? session.record : null;
}

/**
 * Ends the session of `sessionId`, returning what it was (for the audit event) or `null` when there was none.
 *
 * @example
 * const ended = await endSession(context, sessionId);
 */
export async function endSession(context: SentinelContext, sessionId: string): Promise<SessionRecord | null> {
  return parseSessionRecord(await context.store.take(sessionKey(sessionId)));
}
