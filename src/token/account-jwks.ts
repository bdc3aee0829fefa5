/**
 * `GET {basePath}/api/account/{accountId}/jwks` and `…/.well-known/jwks.json` — one account's public signing keys
 * (RFC 7517). With `keysPerAccount` this is the account's own ring and the `jwks_uri` of its metadata; otherwise the
 * service's keys. The `.well-known` path is the one validators derive from a token's `iss` when they are not told
 * `jwks_uri` (get-jwks, and with it @fastify/jwt's default set-up, append `/.well-known/jwks.json` to the issuer).
 */
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelResponse } from '../http/messages.js';
import { handleJWKS } from './jwks.js';

/**
 * The JWKS of an account; an unknown account is a 404, like its metadata, so issuers cannot be enumerated.
 * @example // GET /sentinel/api/account/123456/jwks → 200 {"keys":[{"kty":"EC","kid":"…","alg":"ES256","use":"sig",…}]}
 */
export async function handleAccountJWKS(context: SentinelContext, accountId: string): Promise<SentinelResponse> {
  if (!(await context.apps.hasAccount(accountId))) throw new OAuthError('invalid_request', 'unknown account', { status: 404 });
  context.observation?.noteAccount(accountId);
  return handleJWKS(context);
}
