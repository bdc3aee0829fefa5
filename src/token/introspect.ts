/**
 * `POST {basePath}/api/account/{accountId}/token/introspect` — token introspection (RFC 7662).
 */
import type { AccessTokenClaims } from './access-token.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { isOAuthError, unauthorizedClient } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { findClientToken, type FoundToken } from './token-lookup.js';
import { readRevokeOrIntrospectRequest } from './revoke-introspect-request.js';
import { withinAppScope } from './scope-tokens.js';

const INACTIVE = { active: false } as const;

/**
 * Whether an access token has reached its `exp`. The verifier accepts a token `clockTolerance` seconds past it, for a
 * resource server whose clock runs behind the issuer's; introspection is the issuer answering by its own clock, so
 * it allows nothing: a token is active only before its `exp` (RFC 7662 §2.2, RFC 7519 §4.1.4).
 */
function expired(claims: AccessTokenClaims): boolean {
  return claims.exp <= Math.floor(Date.now() / 1000);
}

/** `app`: the token's own client, the caller (a refresh token is described as a refresh with it would go). */
function describe(context: SentinelContext, found: FoundToken, app: App): Record<string, unknown> {
  if (found.kind === 'access_token') {
    const { claims } = found;
    return {
      active: true,
      ...(claims.scope === undefined ? {} : { scope: claims.scope }),
      client_id: claims.client_id,
      sub: claims.sub,
      exp: claims.exp,
      iat: claims.iat,
      iss: claims.iss,
      aud: claims.aud,
      jti: claims.jti,
      // RFC 9470 §6.2: the sign-in behind the token, for a resource server that checks step-up requirements (acr,
      // max_age) by introspection as a JWT-reading one does by the claims.
      ...(claims.acr === undefined ? {} : { acr: claims.acr }),
      ...(claims.auth_time === undefined ? {} : { auth_time: claims.auth_time }),
      ...(claims.cnf === undefined ? {} : { cnf: claims.cnf }),
      // RFC 8693 §4.1: who acts for `sub` in a delegated token.
      ...(claims.act === undefined ? {} : { act: claims.act }),
      // RFC 7662 §2.2: the token's type as the token response named it (RFC 9449 §6.2: `DPoP` when bound, and the
      // service binds a token only by `cnf.jkt`).
      token_type: claims.cnf === undefined ? 'Bearer' : 'DPoP',
    };
  }
  const { record } = found;
  // The grant keeps the scope it was given; each refresh narrows it to the app's scope as it is now (an operator may
  // have narrowed that since), so that is the scope the refresh token stands for.
  const scope = withinAppScope(record.scope, app);
  return {
    active: true,
    ...(scope === undefined ? {} : { scope }),
    client_id: record.clientId,
    sub: record.userId,
    exp: Math.min(record.expiresAt, record.absoluteExpiresAt),
    iat: record.createdAt,
    // No token_type: RFC 7662 §2.2 names the types of RFC 6749 §7.1, which are access tokens' alone.
    iss: context.accountIssuer(record.accountId),
  };
}

/**
 * RFC 7662 §2.3 answers a caller whose client credentials are invalid with `401`, whatever way it authenticated;
 * the token endpoint's `400` for a failed `client_secret_post` or assertion (RFC 6749 §5.2 allows it) would be read
 * by a resource server as a malformed request of its own rather than a credential to fix.
 */
function unauthorizedOnFailedAuthentication(error: unknown): never {
  if (isOAuthError(error) && error.code === 'invalid_client' && error.status !== 401) throw unauthorizedClient(error.description);
  throw error;
}

/**
 * Describes a token to the client it was issued to. The caller must authenticate as a confidential client of the
 * account (RFC 7662 §2.1); a client may introspect only its own tokens, so another client's token is reported
 * exactly like an invalid, expired or revoked one: `{"active": false}` and nothing else (§2.2).
 *
 * @example
 * // POST /sentinel/api/account/123/token/introspect  token=…&client_id=…&client_secret=…
 * // 200 {"active":true,"scope":"openid","client_id":"…","sub":"u-1","exp":…,"iat":…,"iss":"…","aud":"123","jti":"…","acr":"…","auth_time":…,"token_type":"Bearer"}
 */
export async function handleIntrospect(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const { token, hint, app } = await readRevokeOrIntrospectRequest(context, request, accountId, { allowPublic: false }).catch(
    unauthorizedOnFailedAuthentication,
  );
  const found = await findClientToken(context, {
    token,
    accountId,
    clientId: app.clientId,
    hint,
    checkRevocation: true,
    // A rotated or expired refresh token is not active (RFC 7662 §2.2), whatever grant it belongs to.
    refreshGenerations: 'current',
  });
  if (found === null || (found.kind === 'access_token' && expired(found.claims))) return noStoreJSON(200, INACTIVE);
  return noStoreJSON(200, describe(context, found, app));
}
