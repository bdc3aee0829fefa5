/** Reading a cookie of a request: the one parse every page of the service and the console share. */
import { parse } from 'cookie';
import { headerValue, type SentinelRequest } from './messages.js';

/**
 * The value of the cookie `name` the request carries, or `null` when it has none (or an empty one).
 *
 * @example
 * const sessionId = readCookie(request, 'sentinel_session');
 */
export function readCookie(request: SentinelRequest, name: string): string | null {
  const header = headerValue(request, 'cookie');
  if (header === undefined) return null;
  const value = parse(header)[name];
  return value === undefined || value === '' ? null : value;
}
