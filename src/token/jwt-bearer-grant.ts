/**
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1) at the account's token endpoint: the
 * `assertion` is a JWT a trusted brand issuer of the account signed about a consumer, and the answer is that
 * consumer's bound token, as the v2 endpoint issues it. Every refusal of the assertion is `invalid_grant` (§3.1).
 */
import { requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { accessTokenResponse } from './access-token.js';
import { issueForBrandJWT } from './consumer-assertion.js';
import { requiredParam } from './exchange-target.js';
import { JWT_BEARER_GRANT } from './exchange-types.js';

const refuse = (description: string): OAuthError => new OAuthError('invalid_grant', description);

/**
 * Issues a consumer-bound token for an authenticated `app` from the brand JWT in `assertion`.
 * @throws OAuthError unauthorized_client (app not registered for the grant), invalid_request (no assertion),
 *   invalid_grant (the assertion), invalid_scope, invalid_target.
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=eyJ…
 * return handleJwtBearerGrant(context, request, accountId, params, app);
 */
export async function handleJwtBearerGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
): Promise<SentinelResponse> {
  requireGrant(app, JWT_BEARER_GRANT);
  const assertion = requiredParam(params, 'assertion');
  const issued = await issueForBrandJWT(context, request, accountId, params, app, assertion, JWT_BEARER_GRANT, refuse, 'the assertion');
  return accessTokenResponse(issued.token, issued.tokenType, issued.expiresIn, { scope: issued.scope });
}
