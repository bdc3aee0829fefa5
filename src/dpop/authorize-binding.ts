/**
 * `dpop_jkt` at the authorization endpoint (RFC 9449 §10): the client names the thumbprint of its DPoP key, and
 * the code is redeemable only with a proof by that key, which ties the whole flow to one key.
 */
import { AuthorizationError } from '../authorize/request/authorization-error.js';
import type { RedirectTarget } from '../authorize/request/authorization-response.js';

/** An RFC 7638 SHA-256 thumbprint: 43 base64url characters. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Checks the syntax of `dpop_jkt`.
 * @throws AuthorizationError invalid_request (redirected) for a malformed value.
 * @example const dpopJkt = readDPoPJkt(readParam(params, 'dpop_jkt', target), target);
 */
export function readDPoPJkt(value: string | undefined, target: RedirectTarget): string | undefined {
  if (value === undefined) return undefined;
  if (!THUMBPRINT.test(value)) {
    throw new AuthorizationError('invalid_request', 'dpop_jkt must be the base64url SHA-256 JWK thumbprint of the DPoP key', target);
  }
  return value;
}
