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
  // RFC 8707 (MCP authorization, issue #33).
  /**
   * The protected resource (RFC 8707 URI) verifying the token: its `aud` must contain it, and its issuer must be an
   * account the resource's protected resource metadata names (`sentinel.protectedResourceMetadata()`; when none was
   * built, `accountId` or the one account of the `apps` option, else a `ConfigurationError`). When left out, the
   * `aud` must be the account's audience, so a token asked for a resource passes nowhere else.
   */
  resource?: string | undefined;
  // RFC 9470 (step-up authentication, issue #34).
  /**
   * The `acr` values acceptable for this resource (a space-separated string or a list, of `urn:sentinel:acr:…`): a
   * token whose `acr` is below the weakest of them is refused with `insufficient_user_authentication` and an RFC
   * 9470 §3 challenge naming them.
   */
  acrValues?: string | readonly string[] | undefined;
  /** Seconds since the user's sign-in (`auth_time`) beyond which the token is refused the same way (`max_age`). */
  maxAge?: number | undefined;
  // RFC 6750 §3.1 (MCP scope challenge handling).
  /**
   * Scopes the token must all carry in its `scope` (RFC 6749 §3.3 scope tokens, at least one; anything else is a
   * `ConfigurationError`). Checked last, on a token that is otherwise valid: one lacking any of them is refused with
   * `insufficient_scope`, status 403, and a challenge naming them all, in the scheme it came with
   * (`Bearer error="insufficient_scope", error_description="…", scope="…"`; `checkBearer` adds `resource_metadata`
   * for a `resource`). App and consumer-bound tokens carry their app's registered scope (or the part they asked for),
   * so an app without one meets no requirement.
   * @example await sentinel.verifyAccessToken(token, { resource: 'https://mcp.example.com/mcp', scopes: ['files:write'] });
   */
  scopes?: readonly string[] | undefined;
}

/**
 * The service's own options on top of the host's: `lookup` is for the token's client at introspection and revocation
 * (RFC 7662, RFC 7009), which presents no DPoP proof and decides itself what a revoked grant means. A host cannot pass
 * it: `sentinel.verifyAccessToken()` accepts only the keys of {@link VerifyAccessTokenOptions}.
 */
export interface ServiceVerifyOptions extends VerifyAccessTokenOptions {
  /** Look the token up for its client: no key-binding check; the grant's revocation only when `checkRevocation`. */
  lookup?: { readonly checkRevocation: boolean } | undefined;
}

/** Verifies an access token issued by this service; throws an `invalid_token` OAuthError otherwise. */
export type AccessTokenVerifier = (token: string, options?: ServiceVerifyOptions) => Promise<AccessTokenClaims>;
