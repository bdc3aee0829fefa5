/**
 * What the service's access-token verifier takes and returns, on its own (no module that imports the request context),
 * so that the context can carry the verifier (`context.verifyAccessToken`) without an import cycle.
 */
import type { DPoPPresentation } from '../dpop/presentation.js';
import type { AccessTokenClaims } from '../token/access-token-claims.js';

/**
 * What `verifyAccessToken` should additionally require beyond signature, `typ`, `iss`, `aud` and `exp`
 * (RFC 9068 §4, RFC 6750 §3.1 `invalid_token` otherwise).
 * @example await sentinel.verifyAccessToken(token, { accountId: '123456', consumerId });
 */
export interface VerifyAccessTokenOptions {
  /** The token must have been issued for this account. */
  accountId?: string | undefined;
  /** The token must be consumer-bound to this consumer. */
  consumerId?: string | undefined;
  /** How the token was presented (RFC 9449 §7): a DPoP-bound token needs the DPoP scheme and a matching proof. */
  dpop?: DPoPPresentation | undefined;
}

/** Verifies an access token issued by this service; throws an `invalid_token` OAuthError otherwise. */
export type AccessTokenVerifier = (token: string, options?: VerifyAccessTokenOptions) => Promise<AccessTokenClaims>;
