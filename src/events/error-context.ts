/**
 * The context `onError` is given is as safe to write to a line-oriented log as an audit event is. Its `accountId` is
 * often the account id of the request's path, decoded and unchecked: any text the caller chose, of any length. A
 * request naming `123456%0D%0AX-Injected: 1` while the store or the AppStore fails reached a text logger as two lines,
 * and one naming kilobytes of text wrote them all, once per failed request. Every call of the hook goes through
 * {@link safeErrorReporter}, so no path that reports a failure can forget it.
 */
import type { ErrorContext } from '../hooks.js';
import { escapeControlCharacters } from './event-fields.js';

/** The longest an account id can be (src/lib/account-id.ts): anything longer names no account, and is cut there. */
const MAX_ACCOUNT_ID = 256;

/**
 * `accountId` as `onError` is given it: cut to 256 characters (marked with `…`), control characters written as
 * `\uXXXX` as in audit events.
 *
 * @example errorContextAccount('123456\r\nX-Injected: 1') // '123456\\u000d\\u000aX-Injected: 1'
 */
export function errorContextAccount(accountId: string): string {
  const bounded = accountId.length > MAX_ACCOUNT_ID ? `${accountId.slice(0, MAX_ACCOUNT_ID)}…` : accountId;
  return escapeControlCharacters(bounded);
}

/**
 * The host's `onError`, called with a safe context (see {@link errorContextAccount}); what the hook returns (a
 * promise, a throw) is the caller's to handle, as before.
 *
 * @example const onError = safeErrorReporter(options.onError); onError?.(error, { route: 'token', accountId });
 */
export function safeErrorReporter<R>(
  onError: ((error: unknown, context: ErrorContext) => R) | undefined,
): ((error: unknown, context: ErrorContext) => R) | undefined {
  if (onError === undefined) return undefined;
  return (error, context) => {
    const { accountId } = context;
    return onError(error, accountId === undefined ? context : { ...context, accountId: errorContextAccount(accountId) });
  };
}
