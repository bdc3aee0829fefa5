/**
 * The `Authorization` field of a request as one value, and whether it carries more than one credential. The field
 * may appear once (RFC 9110 §5.3): every reader of it (client authentication, the client assertion path, the bearer
 * guard, UserInfo, registration access tokens) goes through here, so that a second credential is seen by all of them
 * or by none, never authenticated by one reader and dropped by another.
 */
import type { SentinelRequest } from './messages.js';
import { usesBasicScheme, usesTokenScheme } from './authorization-scheme.js';

/** What every reader answers a field of several credentials with ({@link joinsSeveralCredentials}). */
export const SEVERAL_CREDENTIALS = 'send one Authorization header with one credential';

/**
 * The request's `Authorization` field as one value. The adapters join repeated lines with `, `, as a fetch runtime
 * does, and a host calling the core itself may hand over every line; joined the same way here, so that a second
 * credential is never dropped unseen.
 * @example authorizationField({ headers: { authorization: ['Bearer a', 'Bearer b'] } }) // 'Bearer a, Bearer b'
 */
export function authorizationField(request: Pick<SentinelRequest, 'headers'>): string | undefined {
  const value = request.headers.authorization;
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Whether `authorization` joins a credential of a scheme read here (`Basic`, `Bearer`, `DPoP`) with another: two header
 * lines joined, or one line with a comma, which none of these credentials contains (a token68 or a b64token). RFC
 * 6749 §5.2 and RFC 6750 §3.1 make it `invalid_request`: reading only the first would authenticate the request by
 * whichever line a proxy or framework happened to put first. `schemes` narrows the schemes that count.
 * @example joinsSeveralCredentials('Bearer a, Basic YTpi') // true
 */
export function joinsSeveralCredentials(authorization: string, schemes: (credential: string) => boolean = readScheme): boolean {
  if (!authorization.includes(',')) return false;
  return authorization.split(',').some((credential) => schemes(credential.trim()));
}

function readScheme(credential: string): boolean {
  return usesBasicScheme(credential) || usesTokenScheme(credential);
}
