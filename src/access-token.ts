/**
 * Access tokens: RFC 9068 JWTs (`typ: at+jwt`) issued for consumers (client credentials) and users
 * (authorization code), and their verification for protected resources such as the token-retrieval API.
 */
import { randomUUID } from 'node:crypto';
import type { SentinelContext } from './context.js';
import { OAuthError } from './errors.js';
import { NO_STORE_JSON_HEADERS, type SentinelResponse } from './http.js';
import { signJWT, type JWTClaims, type VerifyJWTOptions } from './jwt.js';
import { cachedToken, verifySignedToken, type VerifiedToken } from './verified-tokens.js';
import { checkTokenBinding, type DPoPPresentation } from './dpop/resource.js';

/**
 * Claims of an access token issued by sentinel-idp (RFC 9068 §2.2): on `req.sentinel` / `ctx.state.sentinel` /
 * `request.sentinel` behind `requireAccessToken`, and returned by `sentinel.verifyAccessToken()`.
 * @example const { sub: consumerId, client_id } = await sentinel.verifyAccessToken(token, { accountId });
 */
export interface AccessTokenClaims extends JWTClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  exp: number;
  iat: number;
  jti: string;
  client_id: string;
  azp: string;
  /** `client_credentials` for consumer-bound tokens, `authorization_code` for user tokens. */
  gty: string;
  scope?: string;
  auth_time?: number;
  /** Grant (refresh family) id of user tokens; revoking the grant revokes the token. */
  gid?: string;
}

/**
 * The claim that marks a v1 app token. Its `sub` is the client id, and client ids may be UUIDs like consumer ids:
 * the marker is what stops an app token from passing where a consumer-bound token is required.
 */
export const APP_TOKEN_CLAIM = 'token_use';
const APP_TOKEN_VALUE = 'app';

/**
 * True for a v1 app token (a token for the application itself, bound to no consumer).
 * @example issueAccessToken(context, { …, extra: appTokenMarker() })
 */
export function isAppToken(claims: AccessTokenClaims): boolean {
  return claims[APP_TOKEN_CLAIM] === APP_TOKEN_VALUE;
}

/** The claim that marks a v1 app token, for {@link issueAccessToken}'s `extra`. */
export function appTokenMarker(): Record<string, string> {
  return { [APP_TOKEN_CLAIM]: APP_TOKEN_VALUE };
}

/** What an access token is issued for. */
export interface AccessTokenInput {
  accountId: string;
  clientId: string;
  subject: string;
  grantType: 'client_credentials' | 'authorization_code' | 'refresh_token';
  scope?: string | undefined;
  authTime?: number | undefined;
  grantId?: string | undefined;
  /** Extra claims (e.g. the namespaced consumer claim). */
  extra?: Record<string, unknown> | undefined;
}

/** The `aud` of tokens for one app: the `audience` option, or the account id. */
export function audienceFor(context: SentinelContext, accountId: string, clientId: string): string {
  const { audience } = context.config;
  if (audience === undefined) return accountId;
  return typeof audience === 'string' ? audience : audience({ accountId, clientId });
}

/** Signs an access token; returns it with its claims. */
export async function issueAccessToken(
  context: SentinelContext,
  input: AccessTokenInput,
): Promise<{ token: string; claims: AccessTokenClaims; expiresIn: number }> {
  const iat = Math.floor(Date.now() / 1000);
  const expiresIn = context.config.accessTokenTtl;
  const claims: AccessTokenClaims = {
    iss: context.accountIssuer(input.accountId),
    sub: input.subject,
    aud: audienceFor(context, input.accountId, input.clientId),
    exp: iat + expiresIn,
    iat,
    jti: randomUUID(),
    client_id: input.clientId,
    azp: input.clientId,
    gty: input.grantType === 'refresh_token' ? 'authorization_code' : input.grantType,
  };
  // Set only when present (the claim order of the JSON stays that of the spreads this replaced).
  if (input.scope !== undefined) claims.scope = input.scope;
  if (input.authTime !== undefined) claims.auth_time = input.authTime;
  if (input.grantId !== undefined) claims.gid = input.grantId;
  if (input.extra !== undefined) Object.assign(claims, input.extra);
  return {
    token: await signJWT(context.keys, 'at+jwt', claims, context.config.signing, context.keys.signer, context.traceContext),
    claims,
    expiresIn,
  };
}

/**
 * The token response (RFC 6749 §5.1): `access_token`, `token_type`, `expires_in`, and for user tokens the refresh
 * token, scope and ID token. Written out rather than JSON.stringify'd: the tokens are compact JWS and refresh tokens
 * this service made, base64url segments and dots that JSON never escapes, and serializing their characters one by one
 * was the response's largest cost (an exchange's answer carries two JWS, over a kilobyte).
 *
 * @example return accessTokenResponse(token, tokenType(dpopJkt), expiresInValue(context, expiresIn));
 */
export function accessTokenResponse(
  token: string,
  tokenType: 'Bearer' | 'DPoP',
  expiresIn: string | number,
  more?: UserTokenMembers,
): SentinelResponse {
  let body = `{"access_token":"${token}","token_type":"${tokenType}","expires_in":${JSON.stringify(expiresIn)}`;
  if (more !== undefined) {
    // The refresh token is ours too (base64url parts and dots); the scope, short, is escaped as JSON would.
    if (more.refreshToken !== undefined) body += `,"refresh_token":"${more.refreshToken}"`;
    if (more.scope !== undefined) body += `,"scope":${JSON.stringify(more.scope)}`;
    if (more.idToken !== undefined) body += `,"id_token":"${more.idToken}"`;
  }
  return { status: 200, headers: { ...NO_STORE_JSON_HEADERS }, body: `${body}}` };
}

/** The members a user token response (code exchange, refresh) adds after `expires_in`, in this order. */
export interface UserTokenMembers {
  refreshToken?: string | undefined;
  scope?: string | undefined;
  /** A compact JWS this service signed. */
  idToken?: string | undefined;
}

/**
 * The `expires_in` member of the platform's app-token paths (v1 and v2) in the configured representation: a string
 * of digits by default, as the platform's contract shows. The account token endpoint always answers a number.
 */
export function expiresInValue(context: SentinelContext, seconds: number): string | number {
  return context.config.expiresIn === 'number' ? seconds : String(seconds);
}

/**
 * What `verifyAccessToken` should additionally require beyond signature, `typ`, `iss`, `aud` and `exp`
 * (RFC 9068 §4, RFC 6750 §3.1 `invalid_token` otherwise).
 * @example await sentinel.verifyAccessToken(token, { accountId: '123456', consumerId });
 */
export interface VerifyAccessTokenOptions {
  /** The token must have been issued for this account. */
  accountId?: string | undefined;
  /** The token must be consumer-bound to this consumer. */
  consumerId?: string | undefined;
  /** How the token was presented (RFC 9449 §7): a DPoP-bound token needs the DPoP scheme and a matching proof. */
  dpop?: DPoPPresentation | undefined;
}

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
  if (!facts.audiences.includes(audienceFor(context, accountId, claims.client_id))) {
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
 * and consumer (RFC 6750 §3.1 `invalid_token` otherwise).
 */
export async function verifyAccessToken(
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
  const claims = { ...entry.claims } as AccessTokenClaims;
  checkAudience(context, claims, factsOf(context, entry), options);
  if (isRevoked !== undefined && (await isRevoked(claims))) {
    throw new OAuthError('invalid_token', 'the token has been revoked', { status: 401 });
  }
  // Introspection and revocation see the token from its client, not as a presentation: no proof to check there.
  if (checkBinding) await checkTokenBinding(context, token, claims, options.dpop);
  return claims;
}

/**
 * Whether the app of an unbound token is known to exist without asking the store (the guard's presence cache);
 * false sends the token down the full path, which asks.
 */
export type KnownLive = (accountId: string, clientId: string) => boolean;

/**
 * {@link verifyAccessToken} for a token the verified-token cache holds, without a promise: the bearer guard's hot
 * path. Returns the claims when every check passes here; `undefined` when the answer needs the full path (a cache
 * miss, a grant to read, an app not known to exist, a DPoP-bound token or presentation). Throws the same
 * `invalid_token` errors as the full path for a foreign account, audience or consumer.
 * @example const claims = verifyCachedAccessToken(context, token, { accountId, consumerId }, live) ?? (await verifyAccessToken(...));
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
  // Proofs and grants are checked where they can be: on the full path, which also serves the signature from here.
  if (facts.grantBound || facts.dpopBound || options.dpop?.scheme !== 'Bearer') return undefined;
  if (!isKnownLive(facts.accountId as string, claims.client_id)) return undefined;
  return { ...claims };
}
