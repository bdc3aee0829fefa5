/**
 * `POST {basePath}/api/account/{accountId}/app/token` — the platform's v1 client credentials grant
 * (RFC 6749 §4.4): a token for the application itself, bound to no consumer, kept for existing integrations.
 */
import { readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { refuseResource, requireGrantType } from './app-token.js';
import { authenticateClient } from './client-auth.js';
import { requireGrant } from '../apps/app.js';
import { handleClientCredentialsGrant } from './client-credentials-grant.js';
import { readGrantType } from './grant-type.js';
import { checkTokenQuery } from './token-endpoint.js';
import { routeUrl } from '../http/route-paths.js';

/**
 * Issues a v1 app token: `sub` = client id, `gty` client_credentials, marked with `token_use: "app"`.
 *
 * @example
 * // POST /sentinel/api/account/123/app/token?v=1.0  grant_type=client_credentials&client_id=…&client_secret=…
 * // 200 {"access_token":"…","token_type":"Bearer","expires_in":"3600"}
 */
export async function handleAppTokenV1(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  checkTokenQuery(request.query);
  const params = await readForm(request, context.config.bodyLimit);
  requireGrantType(readGrantType(context, request, params), 'client_credentials');
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: false });
  // `resource` would make the token for another audience: refused as on the v2 path, after the same grant check so
  // both answer alike, and before the grant below reads the form.
  requireGrant(app, 'client_credentials');
  refuseResource(params);
  // The grant reads `scope` as the account token endpoint does (RFC 6749 §4.4.2): without one the token carries the
  // app's registered scope, as it always did; with one, the requested part of it, echoed in the answer.
  // A DPoP proof binds the token as at the token endpoint; its htu is this path (RFC 9449 §4.3).
  // `expires_in` as the platform's contract shows it (the `expiresIn` option, a string of digits by default).
  const htu = routeUrl(context.config, 'app-token-v1', { accountId });
  return handleClientCredentialsGrant(context, request, accountId, params, app, htu, 'configured');
}
