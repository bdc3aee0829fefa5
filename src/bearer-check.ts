/**
 * `sentinel.checkBearer()`: the `Authorization` header of a protected resource's request turned into verified
 * claims or the answer to send (RFC 6750 §3, RFC 9449 §7.1). A token that cannot be *checked* (the store failed) is
 * neither accepted nor called invalid: it gets a 503 and the cause goes to `onError`.
 */
import type { AccessTokenClaims, VerifyAccessTokenOptions } from './access-token.js';
import type { SentinelContext } from './context.js';
import { presentationOf, type ResourceRequest } from './dpop/resource.js';
import { isOAuthError, OAuthError } from './errors.js';
import { noStoreJSON, type SentinelResponse } from './http.js';
import type { AccessTokenVerifier } from './token-verification.js';

/**
 * Outcome of a bearer check: the verified claims, or the 401 with `WWW-Authenticate: Bearer` to send (RFC 6750 §3).
 *
 * @example
 * const result = await sentinel.checkBearer(req.headers.authorization, { accountId, consumerId });
 * if (!result.ok) return send(result.response);
 * use(result.claims.sub);
 */
export type BearerResult = { ok: true; claims: AccessTokenClaims } | { ok: false; response: SentinelResponse };

/** Checks one `Authorization` header value; see `Sentinel.checkBearer`. */
export type BearerCheck = (
  authorization: string | undefined,
  options?: VerifyAccessTokenOptions,
  resource?: ResourceRequest,
) => Promise<BearerResult>;

/** Errors a protected resource answers with 401 (RFC 6750 §3.1, RFC 9449 §7.1). */
const RESOURCE_ERRORS = new Set(['invalid_token', 'invalid_dpop_proof', 'use_dpop_nonce']);

/** What a bearer guard answers when the token cannot be checked right now (the store failed). */
function bearerUnavailable(): SentinelResponse {
  return noStoreJSON(503, { error: 'server_error', error_description: 'the access token could not be checked' }, { 'retry-after': '1' });
}

function bearerChallenge(error: OAuthError | undefined): SentinelResponse {
  // DPoP failures carry their own `WWW-Authenticate: DPoP` challenge (and maybe a DPoP-Nonce).
  if (error?.headers['www-authenticate'] !== undefined) return noStoreJSON(401, error.toJSON(), { ...error.headers });
  const challenge =
    error === undefined
      ? 'Bearer realm="sentinel"'
      : `Bearer realm="sentinel", error="${error.code}", error_description="${error.description.replace(/["\\]/g, '')}"`;
  const body = error === undefined ? { error: 'invalid_token', error_description: 'a Bearer access token is required' } : error.toJSON();
  return noStoreJSON(401, body, { 'www-authenticate': challenge });
}

/**
 * Builds the bearer check over the service's verifier; `report` receives what could not be checked (route `bearer`).
 */
export function createBearerCheck(
  context: SentinelContext,
  verifyAccessToken: AccessTokenVerifier,
  report: (error: unknown, route: string, accountId: string | undefined) => void,
): BearerCheck {
  return async (authorization, verifyOptions = {}, resource) => {
    const found = authorization === undefined ? null : /^(Bearer|DPoP) +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
    if (found === null) {
      return {
        ok: false,
        response:
          authorization === undefined
            ? bearerChallenge(undefined)
            : bearerChallenge(new OAuthError('invalid_token', 'the Authorization header must be "Bearer <token>"', { status: 401 })),
      };
    }
    try {
      const scheme: 'Bearer' | 'DPoP' = (found[1] as string).toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
      // Without the resource request a DPoP presentation has no proof to check, and a bound token is refused.
      const dpop = resource === undefined ? { scheme, method: '', url: '' } : presentationOf(context, scheme, resource);
      return { ok: true, claims: await verifyAccessToken(found[2] as string, { ...verifyOptions, dpop: verifyOptions.dpop ?? dpop }) };
    } catch (error) {
      if (isOAuthError(error) && RESOURCE_ERRORS.has(error.code)) return { ok: false, response: bearerChallenge(error) };
      // The grant could not be read (store down): the token is neither accepted nor called invalid. The cause goes
      // to onError like every other store failure, and every adapter sends the same stack-free 503.
      report(error, 'bearer', verifyOptions.accountId);
      return { ok: false, response: bearerUnavailable() };
    }
  };
}
