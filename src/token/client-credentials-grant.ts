/**
 * `grant_type=client_credentials` (RFC 6749 §4.4): a token for the application itself, bound to no consumer. The
 * v1 app token path and the account's token endpoint (the one the metadata advertises) both issue it.
 */
import { appTokenMarker, expiresInValue, issueAccessToken } from './access-token.js';
import { requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError, quotedValues } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { confirmation, tokenRequestBinding, tokenType } from '../dpop/token-binding.js';
import { tokenResources } from './resource-indicators.js';
import { requestedScopeTokens, scopeTokens } from './scope-tokens.js';

/**
 * The scope of an app token: the app's registered scope, or the requested part of it. RFC 6749 §3.3 lets the
 * server narrow a request; it never widens one, so a scope the app may not have is `invalid_scope`. The v2
 * consumer-bound path narrows with it too, so every client_credentials path reads `scope` alike.
 * @throws OAuthError invalid_scope for a malformed scope token or one the app is not registered for.
 * @example grantedScope({ ...app, scope: 'read write' }, 'read') // 'read'; undefined → 'read write'
 */
export function grantedScope(app: App, requested: string | undefined): string | undefined {
  if (requested === undefined || requested.trim() === '') return app.scope;
  // Checked first: only §3.3 scope tokens may be named in the refusal below (RFC 6749 §5.2's characters).
  const asked = requestedScopeTokens(requested);
  const allowed = new Set(scopeTokens(app.scope));
  const refused = asked.filter((token) => !allowed.has(token));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `scope not allowed for this application: ${quotedValues(refused)}`);
  return asked.join(' ');
}

/**
 * Issues an app token to an authenticated confidential client: `sub` = client id, `gty` client_credentials,
 * marked with `token_use: "app"` so it never passes where a consumer-bound token is required. A DPoP proof for
 * `htu` (the public URL of the endpoint the request came to) binds the token to its key (RFC 9449 §5).
 * `expiresIn`: `'number'` at the account token endpoint (RFC 6749 §5.1, what standard clients compute with);
 * `'configured'` on the platform's v1 path, whose contract shows a string of digits (the `expiresIn` option).
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=client_credentials  (client authenticated)
 * return handleClientCredentialsGrant(context, request, accountId, params, app, `${context.accountIssuer(accountId)}/token`, 'number');
 */
export async function handleClientCredentialsGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  htu: string,
  expiresIn: 'number' | 'configured',
): Promise<SentinelResponse> {
  requireGrant(app, 'client_credentials');
  const requested = single(params, 'scope');
  const scope = grantedScope(app, requested);
  const resources = tokenResources(context, app, params);
  const binding = tokenRequestBinding(context, request, app, htu);
  const dpopJkt = binding === undefined ? undefined : await binding;
  const issued = await issueAccessToken(context, {
    accountId,
    clientId: app.clientId,
    subject: app.clientId,
    grantType: 'client_credentials',
    scope,
    extra: { ...appTokenMarker(), ...confirmation(dpopJkt) },
    resources,
  });
  context.emit({
    type: 'token.issued',
    accountId,
    clientId: app.clientId,
    grantType: 'client_credentials',
    jti: issued.claims.jti,
  });
  return noStoreJSON(200, {
    access_token: issued.token,
    token_type: tokenType(dpopJkt),
    expires_in: expiresIn === 'number' ? issued.expiresIn : expiresInValue(context, issued.expiresIn),
    // RFC 6749 §5.1: the scope is echoed when the client asked for one.
    ...(requested === undefined || scope === undefined ? {} : { scope }),
  });
}
