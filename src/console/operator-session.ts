/**
 * The console's own session: a random id in its own cookie (HttpOnly, SameSite=Lax, Secure unless the issuer is
 * http on loopback, scoped to the console's path), the record in the service's Store under the id's digest, so a
 * read of the store gives no usable cookie. The role is not kept: `authorize()` decides again on every request, so
 * an operator whose role is withdrawn loses the console at their next click. The record names where the session came
 * from (session-origin.ts), which every request checks: ending the device session or the console's grant ends it.
 * It ends, too, after `idleTtl` without a request ({@link useOperatorSession}), at `sessionTtl` whatever its use, and
 * at the next sign-in in its browser, which replaces it.
 */
import { serialize } from 'cookie';
import type { SentinelRequest } from '../http/messages.js';
import { readCookie } from '../http/cookies.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import type { Store } from '../stores/store.js';
import type { SessionOrigin } from './session-origin.js';

/** The cookie of the console session. */
export const CONSOLE_COOKIE = 'sentinel_console';
/** The cookie that binds a sign-in under way to the browser that started it (against login CSRF). */
export const SIGN_IN_COOKIE = 'sentinel_console_signin';

/** What the store keeps of a console session. */
export interface StoredOperatorSession extends SessionOrigin {
  accountId: string;
  userId: string;
  csrf: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** A signed-in operator, as pages see them: the stored session and the role `authorize()` gave this request. */
export interface OperatorSession extends StoredOperatorSession {
  role: 'admin' | 'viewer';
}

/** How long a console session lives, in seconds: at most `absolute` after its sign-in, and `idle` without a request. */
export interface OperatorSessionLifetime {
  absolute: number;
  idle: number;
}

/** Apart from the pending sign-ins anyone can start (`console-sign-in:`): MemoryStore evicts per prefix. */
const sessionKey = (id: string): string => `console-session:${digest(id)}`;

/** `Set-Cookie` for a console cookie (`maxAgeSeconds` 0 removes it). */
export function consoleCookie(name: string, value: string, path: string, secure: boolean, maxAgeSeconds: number): string {
  return serialize(name, value, {
    httpOnly: true,
    secure,
    sameSite: 'lax',
    path,
    maxAge: maxAgeSeconds,
    ...(maxAgeSeconds === 0 ? { expires: new Date(0) } : {}),
  });
}

/** Starts a session of `userId` in `accountId`, from `origin`; returns the cookie value (the only place the id exists in clear). */
export async function createOperatorSession(
  store: Store,
  operator: SessionOrigin & { accountId: string; userId: string },
  lifetime: OperatorSessionLifetime,
): Promise<string> {
  const id = randomSecret();
  const record: StoredOperatorSession = {
    accountId: operator.accountId,
    userId: operator.userId,
    csrf: randomSecret(),
    createdAt: Date.now(),
    sessionDigest: operator.sessionDigest,
    grantId: operator.grantId,
    grantUntil: operator.grantUntil,
  };
  await store.set(sessionKey(id), JSON.stringify(record), Math.min(lifetime.idle, lifetime.absolute) * 1000);
  return id;
}

/**
 * The session of the request's cookie, or `null` (none, expired, or a record that does not parse, such as one of an
 * earlier version that did not name its origin: its operator signs in again).
 */
export async function readOperatorSession(store: Store, request: SentinelRequest): Promise<StoredOperatorSession | null> {
  return (await readStored(store, request))?.record ?? null;
}

/**
 * The session of the request's cookie, its idle timeout started again by this request: `null` when there is none
 * (as {@link readOperatorSession}), when it was idle for `lifetime.idle` (its record has expired) or is past
 * `lifetime.absolute` since its sign-in. The extension is a compare-and-set on the value read, never a plain write:
 * a sign-out between the read and the write would otherwise be undone, and the cookie would work again. Concurrent
 * requests of one session all extend it (the value does not change). A failing store rejects: the request fails
 * closed.
 *
 * @example const stored = await useOperatorSession(store, request, { absolute: 28_800, idle: 1800 });
 */
export async function useOperatorSession(
  store: Store,
  request: SentinelRequest,
  lifetime: OperatorSessionLifetime,
): Promise<StoredOperatorSession | null> {
  const stored = await readStored(store, request);
  if (stored === null) return null;
  const left = stored.record.createdAt + lifetime.absolute * 1000 - Date.now();
  // A record without a readable start (`createdAt` NaN) has no end to count down to: it is over.
  if (!(left > 0)) {
    await store.delete(stored.key);
    return null;
  }
  const extended = await store.swap([
    { key: stored.key, expect: stored.raw, value: stored.raw, ttlMs: Math.max(1, Math.min(lifetime.idle * 1000, left)) },
  ]);
  return extended ? stored.record : null;
}

async function readStored(
  store: Store,
  request: SentinelRequest,
): Promise<{ key: string; raw: string; record: StoredOperatorSession } | null> {
  const id = readCookie(request, CONSOLE_COOKIE);
  if (id === null || id.length > 200) return null;
  const key = sessionKey(id);
  const raw = await store.get(key);
  if (raw === null) return null;
  try {
    const record = JSON.parse(raw) as Partial<StoredOperatorSession>;
    if (typeof record.accountId !== 'string' || typeof record.userId !== 'string' || typeof record.csrf !== 'string') return null;
    if (typeof record.sessionDigest !== 'string' || typeof record.grantId !== 'string' || typeof record.grantUntil !== 'number')
      return null;
    return {
      key,
      raw,
      record: {
        accountId: record.accountId,
        userId: record.userId,
        csrf: record.csrf,
        createdAt: Number(record.createdAt),
        sessionDigest: record.sessionDigest,
        grantId: record.grantId,
        grantUntil: record.grantUntil,
      },
    };
  } catch {
    return null;
  }
}

/**
 * Deletes the session `createOperatorSession` answered `id` for: one whose sign-in then failed before its cookie
 * was sent, which no browser could ever present.
 */
export async function discardOperatorSession(store: Store, id: string): Promise<void> {
  await store.delete(sessionKey(id));
}

/** Ends the session of the request's cookie, if any. */
export async function endOperatorSession(store: Store, request: SentinelRequest): Promise<void> {
  const id = readCookie(request, CONSOLE_COOKIE);
  if (id !== null && id.length <= 200) await store.delete(sessionKey(id));
}
