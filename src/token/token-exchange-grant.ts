/**
 * `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693) at the account's token endpoint, in two
 * forms, told apart by `subject_token_type`:
 *
 * - `…:id_token` or `…:jwt`: a JWT of a trusted brand issuer of the account names a consumer; the answer is that
 *   consumer's bound token, as the v2 endpoint issues it (`consumer-assertion.ts`).
 * - `…:access_token`: an access token this service issued; the answer is a delegated token that lets the
 *   requesting client act for its subject (§4.1, `delegation.ts`).
 *
 * Responses follow §2.2.1 (`issued_token_type` included); an invalid or unacceptable subject or actor token is
 * `invalid_request` (§2.2.2), a target the subject does not have `invalid_target`.
 */
import { requireGrant, type App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { issueForBrandJWT } from './consumer-assertion.js';
import { delegate } from './delegation.js';
import { requiredParam } from './exchange-target.js';
import { TOKEN_EXCHANGE_GRANT, TOKEN_TYPES } from './exchange-types.js';

const refuse = (description: string): OAuthError => new OAuthError('invalid_request', description);

/** The §2.2.1 response: the token, what it is, how to present it and for how long. */
function exchangeResponse(token: string, tokenType: 'DPoP' | 'Bearer', expiresIn: number, scope: string | undefined): SentinelResponse {
  return noStoreJSON(200, {
    access_token: token,
    issued_token_type: TOKEN_TYPES.accessToken,
    token_type: tokenType,
    expires_in: expiresIn,
    ...(scope === undefined ? {} : { scope }),
  });
}

/**
 * Handles a token-exchange request of an authenticated `app`.
 * @throws OAuthError unauthorized_client, invalid_request, invalid_scope, invalid_target, invalid_grant (an issuer's keys unavailable).
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=urn:ietf:params:oauth:grant-type:token-exchange
 * //   &subject_token=eyJ…&subject_token_type=urn:ietf:params:oauth:token-type:id_token
 * return handleTokenExchangeGrant(context, request, accountId, params, app);
 */
export async function handleTokenExchangeGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
): Promise<SentinelResponse> {
  requireGrant(app, TOKEN_EXCHANGE_GRANT);
  const requested = single(params, 'requested_token_type');
  if (requested !== undefined && requested !== TOKEN_TYPES.accessToken) {
    throw refuse(`requested_token_type must be ${TOKEN_TYPES.accessToken}`);
  }
  const subjectToken = requiredParam(params, 'subject_token');
  const subjectType = requiredParam(params, 'subject_token_type');
  const actorToken = single(params, 'actor_token');
  const actorType = single(params, 'actor_token_type');
  // §2.1: actor_token_type is REQUIRED with an actor_token and MUST NOT be there without one.
  if ((actorToken === undefined) !== (actorType === undefined)) {
    throw refuse('actor_token and actor_token_type must be given together');
  }
  if (subjectType === TOKEN_TYPES.accessToken) {
    const issued = await delegate(context, request, accountId, params, app, subjectToken, actorToken, actorType);
    return exchangeResponse(issued.token, issued.tokenType, issued.expiresIn, issued.scope);
  }
  if (subjectType !== TOKEN_TYPES.idToken && subjectType !== TOKEN_TYPES.jwt) {
    throw refuse('subject_token_type must be an access_token, id_token or jwt token type');
  }
  if (actorToken !== undefined) throw refuse('actor_token is accepted only with an access_token subject_token');
  const issued = await issueForBrandJWT(
    context,
    request,
    accountId,
    params,
    app,
    subjectToken,
    TOKEN_EXCHANGE_GRANT,
    refuse,
    'subject_token',
  );
  return exchangeResponse(issued.token, issued.tokenType, issued.expiresIn, issued.scope);
}
