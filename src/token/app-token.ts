/**
 * `POST {basePath}/api/v2/account/{accountId}/app/token?state={consumerId}` — the consumer-bound client
 * credentials grant of platform-operations.md §4.1 (RFC 6749 §4.4 with the consumer named in `state`).
 */
import { askHook } from '../lib/hook-verdict.js';
import { type AccessTokenInput, accessTokenResponse, expiresInValue, issueAccessToken } from './access-token.js';
import { readForm } from '../http/form-body.js';
import { isParticipantId } from './consumer-id.js';
import { type App, requireGrant } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { type ParamMap, single, singleQuery } from '../http/params.js';
import { authenticateClient, refuseSecretsInQuery } from './client-auth.js';
import { readGrantType } from './grant-type.js';
import { grantedScope } from './client-credentials-grant.js';
import { confirmation, tokenRequestBinding, tokenType } from '../dpop/token-binding.js';
import { routeUrl } from '../http/route-paths.js';

/** Checks `grant_type` is exactly `expected` (RFC 6749 §5.2 codes). */
export function requireGrantType(grantType: string | undefined, expected: string): void {
  if (grantType === undefined) throw new OAuthError('invalid_request', 'parameter grant_type is required');
  if (grantType !== expected) {
    throw new OAuthError('unsupported_grant_type', `grant_type must be ${expected} at this endpoint`);
  }
}

/**
 * Refuses `resource` (RFC 8707) at the app-token paths (v1 and v2). Their tokens are for the account's own API; a
 * client that asks for another audience is told so (`invalid_target`) rather than handed a broader token than it
 * asked for. Called after client authentication, so an unauthenticated caller learns nothing from it.
 * @throws OAuthError invalid_target when the form names `resource`, whatever its value.
 * @example refuseResource(params); // before issuing
 */
export function refuseResource(params: ParamMap): void {
  if (params.has('resource')) {
    throw new OAuthError('invalid_target', 'resource is not accepted here; ask the account token endpoint (grant_type=client_credentials)');
  }
}

/**
 * What a consumer-bound access token is issued from: `sub` = the consumer, `gty` client_credentials, the app's
 * scope (or a narrower one), the `consumerClaim` copy of the consumer id, and the DPoP confirmation. The v2 endpoint
 * and the grants that prove the consumer with a trusted issuer's JWT (RFC 7523, RFC 8693) all issue through it, so
 * their tokens cannot differ in shape and the same guard accepts them.
 * @example const issued = await issueAccessToken(context, consumerTokenInput(context, accountId, app, consumerId, dpopJkt));
 */
export function consumerTokenInput(
  context: SentinelContext,
  accountId: string,
  app: App,
  consumerId: string,
  dpopJkt: string | undefined,
  scope: string | undefined = app.scope,
  resources?: readonly string[],
): AccessTokenInput {
  return {
    accountId,
    clientId: app.clientId,
    subject: consumerId,
    grantType: 'client_credentials',
    scope,
    extra: consumerExtra(context.config.consumerClaim, consumerId, dpopJkt),
    resources,
  };
}

/** The `consumerClaim` copy and the DPoP `cnf`, or nothing: built in place, no spread objects per token. */
function consumerExtra(
  consumerClaim: string | undefined,
  consumerId: string,
  dpopJkt: string | undefined,
): Record<string, unknown> | undefined {
  if (consumerClaim === undefined && dpopJkt === undefined) return undefined;
  // A computed key defines an own property whatever the configured name is (an assignment to `__proto__` would not).
  const extra: Record<string, unknown> = consumerClaim === undefined ? {} : { [consumerClaim]: consumerId };
  if (dpopJkt !== undefined) Object.assign(extra, confirmation(dpopJkt));
  return extra;
}

/** Handles the v2 consumer-bound token request. */
export async function handleAppToken(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  refuseSecretsInQuery(request.query);
  const consumerId = singleQuery(request.query, 'state');
  const params = await readForm(request, context.config.bodyLimit);
  requireGrantType(readGrantType(context, request, params), 'client_credentials');
  if (consumerId === undefined) {
    throw new OAuthError('invalid_request', 'query parameter state (the consumer participant id) is required');
  }
  const validator = context.config.consumerId;
  if (validator === undefined && !isParticipantId(consumerId)) {
    throw new OAuthError('invalid_request', 'state must be a consumer participant id (a UUID or 64 lower-case hex characters)');
  }
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: false });
  requireGrant(app, 'client_credentials');
  refuseResource(params);
  // RFC 6749 §4.4.2, §3.3: a client that asks for less than its app's scope gets that, never silently all of it.
  const requestedScope = single(params, 'scope');
  const scope = grantedScope(app, requestedScope);
  if (validator !== undefined && !(await askHook('consumerId', () => validator(consumerId, { accountId, clientId: app.clientId })))) {
    throw new OAuthError('invalid_request', 'state does not name a valid consumer of this account');
  }
  const binding = tokenRequestBinding(context, request, app, routeUrl(context.config, 'app-token-v2', { accountId }));
  const dpopJkt = binding === undefined ? undefined : await binding;
  const input = consumerTokenInput(context, accountId, app, consumerId, dpopJkt, scope);
  const { token, claims, expiresIn } = await issueAccessToken(context, input);
  context.emit({
    type: 'token.issued',
    accountId,
    clientId: app.clientId,
    grantType: 'client_credentials',
    consumerId,
    jti: claims.jti,
  });
  // RFC 6749 §5.1: the scope is echoed when the client asked for one, as at the account token endpoint; a request
  // without one keeps the platform's three-member answer.
  const more = requestedScope === undefined || scope === undefined ? undefined : { scope };
  return accessTokenResponse(token, tokenType(dpopJkt), expiresInValue(context, expiresIn), more);
}
