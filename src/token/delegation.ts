/**
 * Delegation (RFC 8693 §4.1): the requesting client exchanges an access token this service issued (a user's, or a
 * consumer-bound one, of the same account) for a token that keeps the subject's `sub` and names the client as the
 * actor in `act`, nested over any earlier actor. The new token never widens the old one: its scope and audience are
 * the subject's or narrower, it expires no later, and a user token stays on its grant (revoking the grant, or any
 * token it was delegated from, revokes it). The host may refuse any delegation (`authorizeDelegation`).
 */
import { DEVICE_CODE_GRANT } from '../apps/app.js';
import { askHook } from '../lib/hook-verdict.js';
import type { App } from '../apps/app.js';
import type { DelegationSubjectKind } from '../hooks.js';
import type { SentinelContext } from '../http/context.js';
import { isOAuthError, OAuthError } from '../errors.js';
import type { SentinelRequest } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { routeUrl } from '../http/route-paths.js';
import { confirmation, pendingTokenRequestProof, tokenType } from '../dpop/token-binding.js';
import { type AccessTokenClaims, issueAccessToken, isAppToken, tokenAccountAudience } from './access-token.js';
import { actorsOf, issuedForUser } from './access-token-claims.js';
import { isDelegated } from './delegated-revocations.js';
import { narrowAudience, narrowScope } from './exchange-target.js';
import { tokenResources } from './resource-indicators.js';
import { TOKEN_EXCHANGE_GRANT, TOKEN_TYPES } from './exchange-types.js';

/** The longest `act` chain a token may carry: a delegation of a delegation of a delegation, and no further. */
export const MAX_DELEGATION_DEPTH = 3;

const refuse = (description: string): OAuthError => new OAuthError('invalid_request', description);

/**
 * The scope a delegation may carry: the subject's, narrowed to the acting app's registered scope when it has one.
 * @throws OAuthError invalid_scope when the two share nothing.
 */
function actorScope(subjectScope: string | undefined, app: App): string | undefined {
  if (subjectScope === undefined || app.scope === undefined) return subjectScope;
  const own = new Set(app.scope.split(' '));
  const shared = subjectScope.split(' ').filter((token) => token !== '' && own.has(token));
  if (shared.length === 0) throw new OAuthError('invalid_scope', "the acting application may have none of the subject's scope");
  return shared.join(' ');
}

/**
 * Whose token the subject is, from its own signed claims (what the guard calls consumer-bound, or what UserInfo calls
 * a user's), so that the host's policy can tell a consumer from a user whatever the request says. App tokens were
 * refused before; a token that is neither is refused rather than guessed at.
 */
function subjectKindOf(subject: AccessTokenClaims): DelegationSubjectKind {
  if (subject.gty === 'client_credentials') return 'consumer';
  if (issuedForUser(subject)) return 'user';
  throw refuse("subject_token must be a user's or a consumer-bound token");
}

/**
 * A live access token of this service and account, looked up as its holder presents it to be exchanged: signature,
 * account, expiry and its grant's revocation are checked; the refusal names which without echoing the token.
 */
async function verifyOwnToken(context: SentinelContext, accountId: string, token: string, name: string): Promise<AccessTokenClaims> {
  try {
    return await context.verifyAccessToken(token, { accountId, lookup: { checkRevocation: true } });
  } catch (error) {
    if (isOAuthError(error) && error.code === 'invalid_token')
      throw refuse(`${name} is not a live access token of this account: ${error.description}`);
    throw error;
  }
}

/**
 * Refuses a subject at or past its `exp`. Expired is expired here: the verification's clock tolerance would let each
 * hop of a chain outlive its subject.
 */
function refuseExpired(subject: AccessTokenClaims): void {
  if (subject.exp <= Math.floor(Date.now() / 1000))
    throw refuse('subject_token is not a live access token of this account: it has expired');
}

/** What a delegation issued. */
export interface DelegatedToken {
  token: string;
  expiresIn: number;
  tokenType: 'DPoP' | 'Bearer';
  /** The issued token's scope, whenever it has one (the response always names it). */
  scope?: string | undefined;
}

/**
 * Issues a token that lets `app` act for the subject of `subjectToken`.
 * @throws OAuthError invalid_request (subject or actor token invalid or refused by policy, chain too deep),
 *   invalid_scope, invalid_target.
 * @example const issued = await delegate(context, request, accountId, params, app, subjectToken, undefined, undefined);
 */
export async function delegate(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  subjectToken: string,
  actorToken: string | undefined,
  actorType: string | undefined,
): Promise<DelegatedToken> {
  const subject = await verifyOwnToken(context, accountId, subjectToken, 'subject_token');
  if (isAppToken(subject)) throw refuse("subject_token must be a user's or a consumer-bound token, not an app token");
  refuseExpired(subject);
  const subjectKind = subjectKindOf(subject);
  // The app the subject's token came from (the lookup above refused it if that app is gone: token-liveness.ts).
  const originClientId = subject.grant_client_id ?? subject.client_id;
  // A key-bound token is its holder's only with the key: exchanging it without a proof would unbind it.
  if (subject.cnf !== undefined) throw refuse('a DPoP-bound subject_token cannot be exchanged');
  const actors = actorsOf(subject.act);
  if (actors.length + 1 > MAX_DELEGATION_DEPTH) throw refuse(`the delegation chain would be deeper than ${MAX_DELEGATION_DEPTH}`);
  if (actorToken !== undefined) {
    if (actorType !== TOKEN_TYPES.accessToken) throw refuse(`actor_token_type must be ${TOKEN_TYPES.accessToken}`);
    // The actor is the requesting client (the act claim names it): an actor token must be that client's own app token.
    const actor = await verifyOwnToken(context, accountId, actorToken, 'actor_token');
    if (!isAppToken(actor) || actor.client_id !== app.clientId) throw refuse('actor_token must be an app token of the requesting client');
  }
  const requestedScope = single(params, 'scope');
  // Within the subject's scope and, when the acting app registered one, within its own: an app may not get through a
  // delegation a scope it could not get for itself.
  const scope = narrowScope(actorScope(subject.scope, app), requestedScope);
  const subjectAudiences = Array.isArray(subject.aud) ? subject.aud : [subject.aud];
  // RFC 8707 through the service's one resource check: the resources must be ones the acting app may ask for and,
  // as a grant's are, among the subject's (those of its audiences that are not the account's own: the one of the app
  // the subject comes from, which a delegated subject kept from its own subject).
  const accountAudience = tokenAccountAudience(context, accountId, subject);
  // Asked for or not: without `resource` the subject's resources are the token's, and the acting app must be allowed
  // them as much as if it had named them (`audience` may only narrow what this allows).
  const resources = tokenResources(
    context,
    app,
    params,
    subjectAudiences.filter((audience) => audience !== accountAudience),
  );
  const audiences = narrowAudience(params, resources ?? subjectAudiences) ?? resources;
  const tokenAudience: readonly string[] = audiences ?? subjectAudiences;
  // The client's proof before the host's policy: a request the service refuses on its own (a missing or bad DPoP
  // proof) never costs the host a decision, which may be a remote call. Its `jti` is spent only once the policy agrees.
  const pending = pendingTokenRequestProof(context, request, app, () => routeUrl(context.config, 'token', { accountId }));
  const dpop = pending === undefined ? undefined : await pending;
  const policy = context.config.authorizeDelegation;
  if (
    policy !== undefined &&
    !(await askHook('authorizeDelegation', () =>
      policy({
        accountId,
        clientId: app.clientId,
        subject: subject.sub,
        subjectKind,
        subjectClientId: subject.client_id,
        originClientId,
        actors,
        scope,
        // A copy: this array is the token's `aud` to be, and a policy that added to what it was handed (a plain
        // JavaScript host, or a cast) would have widened the token past what it approved.
        audience: [...tokenAudience],
      }),
    ))
  ) {
    throw refuse('the host does not allow this client to act for this subject');
  }
  await dpop?.remember();
  // Again, just before signing: the host's policy and the proof's checks may take seconds, and a subject that expired
  // meanwhile would give a token whose `exp` (never before its `iat`) is later than the subject's.
  refuseExpired(subject);
  const extra: Record<string, unknown> = { act: { sub: app.clientId, ...(subject.act === undefined ? {} : { act: subject.act }) } };
  if (audiences !== undefined) extra.aud = audiences.length === 1 ? audiences[0] : audiences;
  else extra.aud = subject.aud;
  // The app the subject's token came from (its grant's for a user token): the liveness check stops the delegated
  // token when that app is deleted, as it stops the subject's own tokens.
  extra.grant_client_id = originClientId;
  // The tokens it comes from, for the liveness check to refuse it once any of them is revoked (RFC 7009): a user
  // token's are in the grant record it reads anyway, a delegated token's under its own marker. A consumer's own token
  // is verified store-free and cannot be revoked, so a consumer chain lists only its delegated links.
  if (subject.gid !== undefined || isDelegated(subject)) extra.delegated_from = [subject.jti, ...(subject.delegated_from ?? [])];
  const consumerClaim = context.config.consumerClaim;
  if (consumerClaim !== undefined && subject[consumerClaim] !== undefined) extra[consumerClaim] = subject[consumerClaim];
  Object.assign(extra, confirmation(dpop?.jkt));
  const issued = await issueAccessToken(context, {
    accountId,
    clientId: app.clientId,
    subject: subject.sub,
    // The subject's kind is kept: a consumer-bound token delegates into a consumer-bound one, a user's into a user's,
    // and a user's names the grant it came from (a device's, or a code's: its refresh tokens' too).
    grantType:
      subjectKind === 'consumer' ? 'client_credentials' : subject.gty === DEVICE_CODE_GRANT ? DEVICE_CODE_GRANT : 'authorization_code',
    scope,
    authTime: subject.auth_time,
    // The sign-in behind the subject, whole: with its auth_time alone a step-up route (acrValues) would refuse every
    // delegation of a token that meets it, while maxAge, which reads auth_time, let it through.
    amr: subject.amr,
    acr: subject.acr,
    grantId: subject.gid,
    notAfter: subject.exp,
    extra,
  });
  context.emit({
    type: 'token.exchanged',
    accountId,
    clientId: app.clientId,
    grantType: TOKEN_EXCHANGE_GRANT,
    subject: subject.sub,
    ...(subjectKind === 'consumer' ? { consumerId: subject.sub } : {}),
    actor: app.clientId,
    jti: issued.claims.jti,
  });
  return {
    token: issued.token,
    expiresIn: issued.expiresIn,
    tokenType: tokenType(dpop?.jkt),
    // Always, not only when asked (RFC 8693 §2.2.1 requires it whenever it differs from the request): what the token
    // carries is the subject's scope narrowed by this app's registration, which the client cannot tell otherwise.
    ...(scope === undefined ? {} : { scope }),
  };
}
