/**
 * The session methods of `Sentinel` (`listSessions`, `endSession`, `endUserSessions`, `listUserGrants`,
 * `revokeUserGrants`): their arguments checked, then the index's own functions. A wrong argument is a `TypeError`
 * before anything is read, never a lookup under a made-up key.
 */
import type { SentinelContext } from '../http/context.js';
import { endAllUserSessions, endSessionBySid, revokeUserAppGrants } from './end-sessions.js';
import { listAppGrants, listUserSessions, type SessionInfo, type UserAppGrants } from './session-views.js';

/** The methods, as `createSentinel()` spreads them into the service. */
export interface SessionMethods {
  listSessions(input: { accountId: string; userId: string }): Promise<SessionInfo[]>;
  endSession(input: { accountId: string; sid: string }): Promise<boolean>;
  endUserSessions(input: { accountId: string; userId: string }): Promise<number>;
  listUserGrants(input: { accountId: string; userId: string }): Promise<UserAppGrants[]>;
  revokeUserGrants(input: { accountId: string; userId: string; clientId: string }): Promise<number>;
}

function text(method: string, input: unknown, name: string): string {
  const value = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;
  if (typeof value !== 'string' || value === '') throw new TypeError(`sentinel.${method}(): ${name} must be a non-empty string`);
  return value;
}

/** Runs `body` after the checks, so a wrong argument rejects like a failure of the call. */
function checked<T>(body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The session methods over a service's context.
 *
 * @example const sentinel = { ...otherMethods, ...sessionMethods(context) };
 */
export function sessionMethods(context: SentinelContext): SessionMethods {
  return {
    listSessions: (input) =>
      checked(() => listUserSessions(context, text('listSessions', input, 'accountId'), text('listSessions', input, 'userId'))),
    endSession: (input) =>
      checked(
        async () => (await endSessionBySid(context, text('endSession', input, 'accountId'), text('endSession', input, 'sid'))) !== null,
      ),
    endUserSessions: (input) =>
      checked(() => endAllUserSessions(context, text('endUserSessions', input, 'accountId'), text('endUserSessions', input, 'userId'))),
    listUserGrants: (input) =>
      checked(() => listAppGrants(context, text('listUserGrants', input, 'accountId'), text('listUserGrants', input, 'userId'))),
    revokeUserGrants: (input) =>
      checked(() =>
        revokeUserAppGrants(
          context,
          text('revokeUserGrants', input, 'accountId'),
          text('revokeUserGrants', input, 'userId'),
          text('revokeUserGrants', input, 'clientId'),
        ),
      ),
  };
}
