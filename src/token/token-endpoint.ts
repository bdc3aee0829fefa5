/**
 * `POST {basePath}/api/account/{accountId}/token` — the user token endpoint (RFC 6749 §3.2): client
 * authentication, then dispatch by `grant_type`.
 */
import { readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { fromSearchParams, single } from '../http/params.js';
import { handleAuthorizationCodeGrant } from './authorization-code-grant.js';
import { authenticateClient, refuseSecretsInQuery } from './client-auth.js';
import { handleClientCredentialsGrant } from './client-credentials-grant.js';
import { readGrantType } from './grant-type.js';
import { handleRefreshTokenGrant } from './refresh-token-grant.js';
import { pendingTokenRequestProof } from '../dpop/token-binding.js';
import { routeUrl } from '../http/route-paths.js';
import { DEVICE_CODE_GRANT } from '../apps/app.js';
import { handleDeviceCodeGrant } from '../device/device-code-grant.js';
import { JWT_BEARER_GRANT, TOKEN_EXCHANGE_GRANT } from './exchange-types.js';
import { handleJwtBearerGrant } from './jwt-bearer-grant.js';
import { handleTokenExchangeGrant } from './token-exchange-grant.js';

/** API versions the platform's clients send as `?v=` on these endpoints; the protocol is the same for both. */
const ACCEPTED_VERSIONS = new Set(['1.0', '2.0']);

/**
 * Checks the optional `v` query parameter of the account endpoints and refuses secrets in the URL.
 * @throws OAuthError invalid_request for another version, a repeated `v`, or a `client_secret` in the query.
 * @example checkTokenQuery(request.query) // ?v=1.0 passes, ?v=3 throws
 */
export function checkTokenQuery(query: URLSearchParams): void {
  refuseSecretsInQuery(query);
  const version = single(fromSearchParams(query), 'v');
  if (version !== undefined && !ACCEPTED_VERSIONS.has(version)) {
    throw new OAuthError('invalid_request', 'unsupported API version v; use 1.0 or 2.0');
  }
}

/**
 * Handles a token request for the authorization_code, refresh_token, client_credentials and device_code (RFC 8628)
 * grants. Public clients (no secret) may use all but client_credentials; their codes must carry PKCE.
 *
 * @example
 * // POST /sentinel/api/account/123/token?v=1.0
 * // grant_type=authorization_code&code=…&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb&client_id=…&client_secret=…
 * const response = await handleToken(context, request, '123');
 */
export async function handleToken(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  checkTokenQuery(request.query);
  const params = await readForm(request, context.config.bodyLimit);
  const grantType = readGrantType(context, request, params);
  if (grantType === undefined) throw new OAuthError('invalid_request', 'parameter grant_type is required');
  if (grantType === 'client_credentials') {
    // The grant the metadata advertises at this endpoint: an app token, as the v1 app token path issues.
    const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: false });
    return handleClientCredentialsGrant(
      context,
      request,
      accountId,
      params,
      app,
      routeUrl(context.config, 'token', { accountId }),
      'number',
    );
  }
  if (grantType === TOKEN_EXCHANGE_GRANT || grantType === JWT_BEARER_GRANT) {
    // RFC 8693 and RFC 7523: a consumer proven by a trusted issuer's JWT, or a delegation (their own files).
    const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: false });
    return grantType === TOKEN_EXCHANGE_GRANT
      ? handleTokenExchangeGrant(context, request, accountId, params, app)
      : handleJwtBearerGrant(context, request, accountId, params, app);
  }
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token' && grantType !== DEVICE_CODE_GRANT) {
    throw new OAuthError(
      'unsupported_grant_type',
      `grant_type must be authorization_code, refresh_token, client_credentials, ${DEVICE_CODE_GRANT}, ${TOKEN_EXCHANGE_GRANT} or ${JWT_BEARER_GRANT}`,
    );
  }
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: true });
  // The proof is checked here, its jti spent by the grant once the code or refresh token has proved good. The URL
  // it must name is built only when there is a proof.
  const pending = pendingTokenRequestProof(context, request, app, () => routeUrl(context.config, 'token', { accountId }));
  const dpop = pending === undefined ? undefined : await pending;
  if (grantType === DEVICE_CODE_GRANT) return handleDeviceCodeGrant(context, request, accountId, params, app, dpop);
  return grantType === 'authorization_code'
    ? handleAuthorizationCodeGrant(context, request, accountId, params, app, dpop)
    : handleRefreshTokenGrant(context, request, accountId, params, app, dpop);
}
