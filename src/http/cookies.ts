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

/** What `randomSecret()` makes: 256 bits, base64url. */
const RANDOM_VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The value of the cookie `name` when it is one the service made with `randomSecret()`, else `undefined`: a cookie
 * that ties a form to its browser (the sign-in step, the device code entry) takes no value it did not set, and a
 * value of any other shape is replaced rather than used.
 *
 * @example
 * const value = readRandomCookie(request, 'sentinel_session_device') ?? randomSecret();
 */
export function readRandomCookie(request: SentinelRequest, name: string): string | undefined {
  const value = readCookie(request, name);
  return value !== null && RANDOM_VALUE.test(value) ? value : undefined;
}
