/**
 * The consumer-bound token both brand-JWT grants issue: a JWT of a trusted issuer of the account (RFC 7523
 * `assertion`, or an RFC 8693 `subject_token` of type `id_token` / `jwt`) proves who the consumer is, where the v2
 * endpoint takes the app's word for it (`state`). The token is the v2 token exactly ({@link consumerTokenInput}).
 */
import { askHook } from '../lib/hook-verdict.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { routeUrl } from '../http/route-paths.js';
import { pendingTokenRequestProof, tokenType } from '../dpop/token-binding.js';
import { type Refusal, verifyBrandJWT } from '../trusted-issuers/brand-jwt.js';
import { audienceFor, issueAccessToken } from './access-token.js';
import { consumerTokenInput } from './app-token.js';
import { isParticipantId } from './consumer-id.js';
import { narrowAudience, narrowScope } from './exchange-target.js';
import { tokenResources } from './resource-indicators.js';

/** An issued consumer-bound token and what the response needs. */
export interface ConsumerTokenIssued {
  token: string;
  expiresIn: number;
  tokenType: 'DPoP' | 'Bearer';
  /**
   * The token's scope, whenever it has one: without a `scope` parameter it is the app's registered scope, which
   * differs from the (absent) request, and RFC 6749 §5.1 / RFC 8693 §2.2.1 require it in the answer then.
   */
  scope?: string | undefined;
}

/**
 * Verifies `jwt` (named `name` in refusals) for `app` and issues the consumer-bound token it proves. Every check
 * runs before anything is written; then the DPoP proof's `jti` is spent, the token signed, and the JWT's `jti` spent
 * (a replay found only then discards the signed token).
 * @throws OAuthError from `refuse` for the JWT and its consumer; invalid_scope, invalid_target, invalid_dpop_proof.
 * @example const issued = await issueForBrandJWT(context, request, accountId, params, app, assertion, grantType, refuse, 'assertion');
 */
export async function issueForBrandJWT(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  jwt: string,
  grantType: string,
  refuse: Refusal,
  name: string,
): Promise<ConsumerTokenIssued> {
  const brand = await verifyBrandJWT(context, accountId, jwt, app.clientId, refuse, name);
  const { consumerId } = brand;
  // The same rule as the v2 endpoint's `state`: the host's validator, or the platform's participant-id shapes.
  const validator = context.config.consumerId;
  const valid =
    validator === undefined
      ? isParticipantId(consumerId)
      : await askHook('consumerId', () => validator(consumerId, { accountId, clientId: app.clientId }));
  if (!valid) throw refuse(`the consumer id of ${name} is not a valid participant id of this account`);
  const scope = narrowScope(app.scope, single(params, 'scope'));
  // RFC 8707 as at every grant (the resources the app may ask for); `audience` may only name what the token is for.
  const resources = tokenResources(context, app, params);
  // Only when asked: the account's audience may be a host callback, not to be called for nothing. The narrowed
  // audiences are the token's (as a delegation's are): `resource=A&resource=B&audience=A` is a token for A alone.
  // Without resources the one audience it may name is the account's, which the token has anyway.
  const narrowed = params.has('audience')
    ? narrowAudience(params, resources ?? [audienceFor(context, accountId, app.clientId)])
    : undefined;
  const audiences = resources === undefined ? undefined : (narrowed ?? resources);
  // The URL a proof must name is built only when there is a proof, as at the other grants.
  const pending = pendingTokenRequestProof(context, request, app, () => routeUrl(context.config, 'token', { accountId }));
  const dpop = pending === undefined ? undefined : await pending;
  // The proof first: a proof is made for one request, the brand's JWT is not. Refused for its proof (replayed, or
  // the replay store full), a request must leave the JWT unspent for the retry with a new proof.
  await dpop?.remember();
  // Signed before the JWT is spent, as the code grant does: a signer that fails (a KMS or HSM outage) leaves the JWT
  // for the retry. A spend refused afterwards (a replay) discards the signed token unsent.
  const issued = await issueAccessToken(context, consumerTokenInput(context, accountId, app, consumerId, dpop?.jkt, scope, audiences));
  await brand.spend();
  // Committed, as a code exchange's token.issued: the JWT is spent, so a veto's 500 would leave the client's retry
  // refused as a replay, with no token from either.
  context.emit(
    {
      type: 'token.exchanged',
      accountId,
      clientId: app.clientId,
      grantType,
      subject: consumerId,
      issuer: brand.issuer.issuer,
      consumerId,
      jti: issued.claims.jti,
    },
    'committed',
  );
  return {
    token: issued.token,
    expiresIn: issued.expiresIn,
    tokenType: tokenType(dpop?.jkt),
    ...(scope === undefined ? {} : { scope }),
  };
}
