/**
 * `POST {basePath}/api/account/{accountId}/app/token` — the platform's v1 client credentials grant
 * (RFC 6749 §4.4): a token for the application itself, bound to no consumer, kept for existing integrations.
 */
import { appTokenMarker, expiresInValue, issueAccessToken } from '../access-token.js';
import { readForm } from '../body.js';
import { requireGrant } from '../apps.js';
import type { SentinelContext } from '../context.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http.js';
import { single } from '../params.js';
import { requireGrantType } from './app-token.js';
import { authenticateClient } from './client-auth.js';
import { confirmation, tokenRequestBinding, tokenType } from '../dpop/token-binding.js';
import { checkTokenQuery } from './token-endpoint.js';

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
  requireGrantType(single(params, 'grant_type'), 'client_credentials');
  const { app } = await authenticateClient(context, accountId, request, params, { allowPublic: false });
  requireGrant(app, 'client_credentials');
  const dpopJkt = await tokenRequestBinding(context, request, app, `${context.accountIssuer(accountId)}/app/token`);
  const { token, claims, expiresIn } = await issueAccessToken(context, {
    accountId,
    clientId: app.clientId,
    subject: app.clientId,
    grantType: 'client_credentials',
    scope: app.scope,
    extra: { ...appTokenMarker(), ...confirmation(dpopJkt) },
  });
  context.emit({
    type: 'token.issued',
    accountId,
    clientId: app.clientId,
    grantType: 'client_credentials',
    jti: claims.jti,
    ip: request.ip,
  });
  return noStoreJSON(200, { access_token: token, token_type: tokenType(dpopJkt), expires_in: expiresInValue(context, expiresIn) });
}
