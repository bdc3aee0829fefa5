/**
 * Device sessions (platform-operations.md §4.2 rule 2: a user with a session is not asked again).
 *
 * The cookie holds only a 256-bit random id; the record lives in the Store under `session:{sha256(id)}`, so a
 * leaked store does not hand out live sessions. A session belongs to one account: a session in account A never
 * signs the user into account B. It ends at the first of: its absolute lifetime, `idleTtl` without use, logout.
 */
import type { SentinelContext } from '../../context.js';
import { digest, randomSecret } from '../../secrets.js';
import { parseStoredRecord } from '../../stored-record.js';

/** What a device session stands for. Persisted as JSON under `session:{sha256(sessionId)}`. */
export interface SessionRecord {
  userId: string;
  accountId: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** Milliseconds since the epoch when the session was created. */
  createdAt: number;
  /** Milliseconds since the epoch when the session ends whatever its use (absolute timeout). */
  expiresAt: number;
}

/** The store key of a session id. */
function sessionKey(sessionId: string): string {
  return `session:${digest(sessionId)}`;
}

function parseRecord(value: string | null): SessionRecord | null {
  return parseStoredRecord<SessionRecord>(
    value,
    (record) => typeof record.userId === 'string' && typeof record.accountId === 'string' && typeof record.expiresAt === 'number',
  );
}

/**
 * Creates a session with a fresh id (never reusing one the browser presented, so no session fixation) and
 * returns the id for the cookie.
 *
 * @example
 * const sessionId = await createSession(context, { accountId, userId, authTime });
 */
export async function createSession(
  context: SentinelContext,
  input: { accountId: string; userId: string; authTime: number },
): Promise<string> {
  const { absoluteTtl, idleTtl } = context.config.session;
  const now = Date.now();
  const sessionId = randomSecret();
  const record: SessionRecord = { ...input, createdAt: now, expiresAt: now + absoluteTtl * 1000 };
  await context.store.set(sessionKey(sessionId), JSON.stringify(record), idleTtl * 1000);
  return sessionId;
}

/**
 * The live session of `sessionId` in `accountId`, or `null`. Using a session extends its idle timeout, never
 * beyond its absolute end.
 *
 * @example
 * const session = sessionId === null ? null : await useSession(context, sessionId, accountId);
 */
export async function useSession(context: SentinelContext, sessionId: string, accountId: string): Promise<SessionRecord | null> {
  const key = sessionKey(sessionId);
  const record = parseRecord(await context.store.get(key));
  if (record === null || record.accountId !== accountId) return null;
  const remaining = record.expiresAt - Date.now();
  if (remaining <= 0) {
    await context.store.delete(key);
    return null;
  }
  await context.store.set(key, JSON.stringify(record), Math.min(context.config.session.idleTtl * 1000, remaining));
  return record;
}

/**
 * Ends the session of `sessionId`, returning what it was (for the audit event) or `null` when there was none.
 *
 * @example
 * const ended = await endSession(context, sessionId);
 */
export async function endSession(context: SentinelContext, sessionId: string): Promise<SessionRecord | null> {
  return parseRecord(await context.store.take(sessionKey(sessionId)));
}
