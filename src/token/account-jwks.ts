/**
 * `GET {basePath}/api/account/{accountId}/.well-known/jwks.json` — the same JWKS as `/well-known/jwks`, at the path
 * that validators derive from a token's `iss` when they are not told `jwks_uri` (get-jwks, and with it
 * @fastify/jwt's default set-up, append `/.well-known/jwks.json` to the issuer).
 */
import type { SentinelContext } from '../context.js';
import { OAuthError } from '../errors.js';
import type { SentinelResponse } from '../http.js';
import { handleJWKS } from './jwks.js';

/**
 * The JWKS under an account's issuer; an unknown account is a 404, as for its metadata.
 *
 * @example
 * // GET /sentinel/api/account/123/.well-known/jwks.json
 * // 200 {"keys":[{"kty":"EC","crv":"P-256",…,"kid":"…","alg":"ES256","use":"sig"}]}
 */
export async function handleAccountJWKS(context: SentinelContext, accountId: string): Promise<SentinelResponse> {
  if (!(await context.apps.hasAccount(accountId))) {
    throw new OAuthError('invalid_request', 'unknown account', { status: 404 });
  }
  return handleJWKS(context);
}
