/**
 * Verifying an access token this service issued (RFC 9068 §4, RFC 6750 §3.1): signature, `typ`, issuer, audience,
 * expiry, the account and consumer a caller expects, revocation and the DPoP binding. Issuing is `token/access-token.ts`.
 */
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { VerifyJWTOptions } from '../keys/jws.js';
import { checkTokenBinding } from '../dpop/resource.js';
import { type AccessTokenClaims, isAppToken, tokenAccountAudience } from '../token/access-token.js';
import { actorsOf } from '../token/access-token-claims.js';
import { cachedToken, verifySignedToken, type VerifiedToken } from './verified-token-cache.js';
import type { ServiceVerifyOptions, VerifyAccessTokenOptions } from './verifier-contract.js';
import { checkStepUp, stepUpRequirement } from '../assurance/step-up-challenge.js';
import { isAuthorizationServerOf } from './resource-servers.js';
import { checkScopes } from './scope-requirement.js';

export type { VerifyAccessTokenOptions } from './verifier-contract.js';

/** Hook for revocation checks of user tokens (the grant store); returns true when the token must be refused. */
export type RevocationCheck = (claims: AccessTokenClaims) => Promise<boolean>;

/**
 * What the checks read from a verified token's claims, derived once per verified-token cache entry: none of it can
 * change while the token lives, so a cache hit does not decode the issuer or walk the audience again.
 */
interface TokenFacts {
  /** The account of a well-formed token (its `iss` is exactly this account's issuer); undefined otherwise. */
  accountId: string | undefined;
  audiences: readonly unknown[];
  /** Issued by the client credentials grant and not a v1 app token. */
  consumerBound: boolean;
  /** Carries `cnf.jkt` (RFC 9449 §6): every presentation needs a DPoP proof. */
  dpopBound: boolean;
  /** Carries a grant id: liveness is a store read. */
  grantBound: boolean;
  /** The actors of a delegated token's `act` chain, nearest first (empty otherwise): each must be known live. */
  actors: readonly string[];
}

function factsOf(context: SentinelContext, entry: VerifiedToken<TokenFacts>): TokenFacts {
  if (entry.facts !== undefined) return entry.facts;
  const claims = entry.claims as AccessTokenClaims;
  const prefix = context.accountIssuer('');
  let accountId: string | undefined;
  if (typeof claims.client_id === 'string' && typeof claims.sub === 'string' && claims.iss.length > prefix.length) {
    try {
      accountId = decodeURIComponent(claims.iss.slice(prefix.length));
    } catch {
      accountId = undefined;
    }
    // Only the issuer this service writes for the account counts (no second spelling of the same account).
    if (accountId !== undefined && context.accountIssuer(accountId) !== claims.iss) accountId = undefined;
  }
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  const facts: TokenFacts = {
    accountId,
    audiences: Array.isArray(claims.aud) ? claims.aud : [claims.aud],
    consumerBound: claims.gty === 'client_credentials' && !isAppToken(claims),
    dpopBound: typeof cnf === 'object' && cnf !== null && cnf.jkt !== undefined,
    grantBound: claims.gid !== undefined,
    actors: actorsOf(claims.act),
  };
  entry.facts = facts;
  return facts;
}

/** The account, audience and consumer checks, which depend on the request; throws `invalid_token` (401). */
function checkAudience(context: SentinelContext, claims: AccessTokenClaims, facts: TokenFacts, options: VerifyAccessTokenOptions): void {
  const { accountId } = facts;
  if (accountId === undefined) throw new OAuthError('invalid_token', 'the token is malformed', { status: 401 });
  if (options.accountId !== undefined && accountId !== options.accountId) {
    throw new OAuthError('invalid_token', 'the token was issued for another account', { status: 401 });
  }
  if (options.resource !== undefined) {
    // RFC 8707: a resource accepts only tokens asked for it.
    if (!facts.audiences.includes(options.resource)) {
      throw new OAuthError('invalid_token', 'the token is not for this resource', { status: 401 });
    }
    // RFC 9068 §4: the issuer too. Any account's app may ask for a default resource, so the audience names it in
    // every account's tokens; only the accounts its metadata names are its authorization servers.
    if (!isAuthorizationServerOf(context, options.resource, accountId, options.accountId)) {
      throw new OAuthError('invalid_token', 'the token was issued by an authorization server this resource does not name', {
        status: 401,
      });
    }
  } else if (!(options as ServiceVerifyOptions).lookup && !facts.audiences.includes(tokenAccountAudience(context, accountId, claims))) {
    // A lookup by the token's own client (introspection, revocation) is not a presentation to a resource: a
    // resource-bound token is still the client's to introspect or revoke.
    throw new OAuthError('invalid_token', 'the token is for another audience', { status: 401 });
  }
  // Consumer-bound: issued by the client credentials grant for this consumer, and not a v1 app token.
  if (options.consumerId !== undefined && (!facts.consumerBound || claims.sub !== options.consumerId)) {
    throw new OAuthError('invalid_token', 'the token is not bound to this consumer', { status: 401 });
  }
}

function verifyOptionsOf(context: SentinelContext): VerifyJWTOptions {
  const prefix = context.accountIssuer('');
  return {
    typ: 'at+jwt',
    issuer: (iss) => iss.startsWith(prefix) && iss.length > prefix.length,
    clockTolerance: context.config.clockTolerance,
  };
}

/**
 * Verifies an access token issued by this service: signature, `typ`, `iss`, `aud`, `exp`, and optionally account
 * and consumer (RFC 6750 §3.1 `invalid_token` otherwise). With a `resource`, the issuer must be one its protected
 * resource metadata names (resource-servers.ts).
 * @throws ConfigurationError for a `resource` nothing names an authorization server of.
 */
export async function verifyAccessTokenJWT(
  context: SentinelContext,
  token: string,
  options: VerifyAccessTokenOptions,
  isRevoked?: RevocationCheck,
  checkBinding = true,
): Promise<AccessTokenClaims> {
  // Signature, typ and times (from the verified-token cache when this token passed before); every check below runs
  // on each call because its answer can change while the token lives.
  const entry = (await verifySignedToken(context, token, verifyOptionsOf(context))) as VerifiedToken<TokenFacts>;
  // A copy: the cached claims are shared by later hits, and hosts may decorate what they get.
  const claims = detachedClaims(entry.claims as AccessTokenClaims);
  checkAudience(context, claims, factsOf(context, entry), options);
  if (isRevoked !== undefined && (await isRevoked(claims))) {
    throw new OAuthError('invalid_token', 'the token has been revoked', { status: 401 });
  }
  // Introspection and revocation see the token from its client, not as a presentation: no proof to check there.
  if (checkBinding) await checkTokenBinding(context, token, claims, options.dpop);
  checkAssurance(context, claims, options);
  return claims;
}

/**
 * RFC 9470: the sign-in behind the token must reach `acrValues` and be within `maxAge`; then RFC 6750 §3.1: it must
 * carry every one of `scopes`. Checked last, so a client is told to step up or ask for more scope only with a token
 * that is otherwise good.
 */
function checkAssurance(context: SentinelContext, claims: AccessTokenClaims, options: VerifyAccessTokenOptions): void {
  const { scopes } = options;
  if (options.acrValues === undefined && options.maxAge === undefined && scopes === undefined) return;
  const scheme = options.dpop?.scheme === 'DPoP' ? 'DPoP' : 'Bearer';
  const requirement = stepUpRequirement(options, 'verifyAccessToken');
  if (requirement !== undefined) checkStepUp(claims, requirement, Math.floor(Date.now() / 1000), scheme, context.config.dpop.algorithms);
  // RFC 6750 §3.1: a valid token without a scope the resource needs is 403 insufficient_scope (the options were
  // checked where the host passed them: verify-options.ts, bearer-check.ts, bearer-request.ts).
  if (scopes !== undefined) checkScopes(claims, scopes, scheme, context.config.dpop.algorithms);
}

/**
 * Whether the app of an unbound token is known to exist without asking the store (the guard's presence cache);
 * false sends the token down the full path, which asks.
 */
export type KnownLive = (accountId: string, clientId: string) => boolean;

/**
 * {@link verifyAccessTokenJWT} for a token the verified-token cache holds, without a promise: the bearer guard's hot
 * path, for a token presented as Bearer without a DPoP proof (`options.dpop` unset means exactly that, so the guard
 * passes its expectations as they are instead of copying them per request). Returns the claims when every check
 * passes here; `undefined` when the answer needs the full path (a cache miss, a grant to read, an app not known to
 * exist, a DPoP-bound token or presentation). Throws the same `invalid_token` errors as the full path for a foreign
 * account, audience or consumer.
 * @example const claims = verifyCachedAccessToken(context, token, { accountId, consumerId }, live) ?? (await verifyAccessTokenJWT(...));
 */
export function verifyCachedAccessToken(
  context: SentinelContext,
  token: string,
  options: VerifyAccessTokenOptions,
  isKnownLive: KnownLive,
): AccessTokenClaims | undefined {
  const entry = cachedToken(context, token) as VerifiedToken<TokenFacts> | undefined;
  if (entry === undefined) return undefined;
  const facts = factsOf(context, entry);
  const claims = entry.claims as AccessTokenClaims;
  checkAudience(context, claims, facts, options);
  // Proofs, grants and a delegated token's revocation markers are checked where they can be: on the full path, which
  // also serves the signature from here. Only a delegation reads a marker: a consumer's own token stays store-free.
  if (facts.grantBound || facts.actors.length > 0 || facts.dpopBound || (options.dpop !== undefined && options.dpop.scheme !== 'Bearer'))
    return undefined;
  if (!isKnownLive(facts.accountId as string, claims.client_id)) return undefined;
  // A delegated token: the app it was delegated from must be known live too (token-liveness.ts), else the full path.
  if (claims.grant_client_id !== undefined && !isKnownLive(facts.accountId as string, claims.grant_client_id)) return undefined;
  // And every actor of its chain (the nearest is `client_id`): one deleted midway stops what it passed on.
  for (const actor of facts.actors) if (!isKnownLive(facts.accountId as string, actor)) return undefined;
  checkAssurance(context, claims, options);
  return detachedClaims(claims);
}

/**
 * A copy of cached claims that shares nothing with the cache, nested members included: the next presentation of
 * the token is checked against the cached `cnf`, `aud` and `act`, so a host that edits what it was handed (drops
 * `cnf.jkt` before logging the claims, adds to `aud`) would otherwise turn off the DPoP binding or widen the
 * audience for everyone presenting that token. Claims are JSON, and most members are strings: only objects are cloned.
 */
function detachedClaims(claims: AccessTokenClaims): AccessTokenClaims {
  const copy: Record<string, unknown> = { ...claims };
  for (const name in copy) {
    const value = copy[name];
    if (typeof value === 'object' && value !== null) copy[name] = structuredClone(value);
  }
  return copy as AccessTokenClaims;
}
