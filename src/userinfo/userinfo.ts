/**
 * `GET|POST {basePath}/api/account/{accountId}/userinfo` — the UserInfo endpoint (OpenID Connect Core §5.3).
 *
 * The access token comes as a Bearer header or, on POST, as the `access_token` form field (RFC 6750 §2.1, §2.2);
 * never in the query, where it would end up in logs. A POST with the header may have a body of any type. A
 * DPoP-bound token comes as `Authorization: DPoP` with a proof for this endpoint (RFC 9449 §7), as for any protected
 * resource. Answers are readable cross-origin (the route's `USERINFO_CORS`, src/http/cors.ts): the endpoint is
 * authenticated by the token alone, never by cookies, so a browser app on any origin may call it, as OpenID Connect
 * clients in browsers do.
 */
import { issuedForUser } from '../token/access-token-claims.js';
import type { AccessTokenClaims } from '../token/access-token.js';
import { declaresForm, readForm } from '../http/form-body.js';
import type { SentinelContext } from '../http/context.js';
import { isOAuthError, OAuthError, wireDescription } from '../errors.js';
import { headerValue, noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { single } from '../http/params.js';
import { dpopUnauthorized, type DPoPPresentation } from '../dpop/resource.js';
import { dpopHeader } from '../dpop/token-binding.js';
import { hasOpenIDScope } from '../token/id-token.js';
import { loadUserClaims, scopeList } from './claims.js';
import { SIGN_IN_CLAIMS, storedClaimNames } from '../token/requested-claims.js';
import { routeUrl } from '../http/route-paths.js';
import { revokeGrant } from '../token/grant-records.js';
import {
  challengeScheme,
  credentialsChallenge,
  malformedAuthorization,
  parseAuthorization,
  type PresentedToken,
  resourceChallenge,
  usesTokenScheme,
} from '../http/authorization-scheme.js';
import { authorizationField, joinsSeveralCredentials, SEVERAL_CREDENTIALS } from '../http/authorization-field.js';

/** What a refusal's challenge needs of the request: the scheme it used (RFC 9449 §7.1) and the proof algorithms. */
interface ChallengeScheme {
  scheme: 'Bearer' | 'DPoP';
  algorithms: readonly string[];
}

function challenge(
  asked: ChallengeScheme,
  code: 'invalid_request' | 'invalid_token' | 'insufficient_scope',
  description: string,
  status: number,
  headers: Readonly<Record<string, string>> = {},
): OAuthError {
  const extra = code === 'insufficient_scope' ? ', scope="openid"' : '';
  // In the characters RFC 6749 §5.2 allows, which never end the quoted-string (RFC 9110 §5.6.4), as in the body.
  const params = `, error="${code}", error_description="${wireDescription(description)}"${extra}`;
  return new OAuthError(code, description, {
    status,
    headers: { ...headers, 'www-authenticate': resourceChallenge(asked.scheme, asked.algorithms, params) },
  });
}

/**
 * The `access_token` of a form body (RFC 6750 §2.2). A body that cannot be read as one form with one token is an
 * `invalid_request` at a protected resource, so it carries the challenge as every other refusal here does (RFC 6750
 * §3.1); a 413 or 408 keeps its status and its `connection: close`.
 */
async function tokenInBody(context: SentinelContext, request: SentinelRequest, asked: ChallengeScheme): Promise<string | undefined> {
  try {
    return single(await readForm(request, context.config.bodyLimit), 'access_token');
  } catch (error) {
    if (isOAuthError(error) && error.code === 'invalid_request')
      throw challenge(asked, 'invalid_request', error.description, error.status, error.headers);
    throw error;
  }
}

/**
 * RFC 6750 §3.1: a request without credentials for this endpoint gets a challenge without an error code, in both
 * schemes the endpoint takes (RFC 9449 §7.1), as the bearer guard answers.
 */
function credentialsRequired(asked: ChallengeScheme): OAuthError {
  return new OAuthError('invalid_token', 'an access token is required', {
    status: 401,
    headers: { 'www-authenticate': credentialsChallenge(asked.algorithms, '') },
  });
}

async function readAccessToken(context: SentinelContext, request: SentinelRequest, asked: ChallengeScheme): Promise<PresentedToken> {
  if (request.query.has('access_token')) {
    throw challenge(asked, 'invalid_request', 'send the access token in the Authorization header, not in the URL', 400);
  }
  const authorization = authorizationField(request);
  // RFC 6750 §3.1: two credentials (two lines the adapters join, or one line with a comma) are invalid_request;
  // reading the first would answer with whichever line a proxy put first, and hide a second token beside a body one.
  if (authorization !== undefined && joinsSeveralCredentials(authorization)) {
    throw challenge(asked, 'invalid_request', SEVERAL_CREDENTIALS, 400);
  }
  const contentType = headerValue(request, 'content-type');
  // RFC 6750 §2.2 constrains the body only when it carries the token. With the token in the header (OpenID Connect
  // Core §5.3.1 allows that on POST), only a form body can hold a second one; any other body is not ours to judge.
  // Without the header, a body of another type is refused by readForm, which says what the body must be.
  const bodyMayHoldToken = contentType !== undefined && (authorization === undefined || declaresForm(contentType));
  const fromBody = request.method === 'POST' && bodyMayHoldToken ? await tokenInBody(context, request, asked) : undefined;
  // Twice only when the header carries a token too: another scheme's (`Basic …`) is no credential for this resource
  // (RFC 6750 §3.1, as answered below), so the body's token is the one token of the request.
  if (authorization !== undefined && usesTokenScheme(authorization) && fromBody !== undefined) {
    throw challenge(asked, 'invalid_request', 'send the access token once: in the Authorization header or the body, not both', 400);
  }
  if (fromBody !== undefined) return { token: fromBody, scheme: 'Bearer' };
  // RFC 6750 §3.1: no credentials, or another scheme's (`Basic …`), as the bearer guard answers them.
  if (authorization === undefined || !usesTokenScheme(authorization)) throw credentialsRequired(asked);
  const presented = parseAuthorization(authorization);
  if (presented === null) throw challenge(asked, 'invalid_token', malformedAuthorization(authorization), 401);
  return presented;
}

/** How the token was presented, for the DPoP binding check: the proof's `htu` is this endpoint's public URL. */
function presentation(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  scheme: PresentedToken['scheme'],
): DPoPPresentation {
  let proof: string | undefined;
  try {
    proof = dpopHeader(request);
  } catch {
    throw dpopUnauthorized(context, 'invalid_dpop_proof', 'send exactly one DPoP header');
  }
  return { scheme, proof, method: request.method.toUpperCase(), url: routeUrl(context.config, 'userinfo', { accountId }) };
}

async function verifyUserToken(
  context: SentinelContext,
  request: SentinelRequest,
  presented: PresentedToken,
  accountId: string,
  asked: ChallengeScheme,
): Promise<AccessTokenClaims> {
  let claims: AccessTokenClaims;
  try {
    const dpop = presentation(context, request, accountId, presented.scheme);
    // The service's verifier, the bearer guard's: the same key ring (shared or the account's), the same one reload for
    // a kid another instance just created, and the same liveness check (a revoked grant or a deleted app ends it).
    claims = await context.verifyAccessToken(presented.token, { accountId, dpop });
  } catch (error) {
    // DPoP failures keep their own `WWW-Authenticate: DPoP` challenge (and a `DPoP-Nonce` when one is due).
    if (isOAuthError(error) && error.headers['www-authenticate']?.startsWith('DPoP') === true) throw error;
    if (isOAuthError(error) && error.code === 'invalid_token') throw challenge(asked, 'invalid_token', error.description, 401);
    throw error;
  }
  // Tokens of the client credentials grants name an application or a consumer, not a user.
  if (!issuedForUser(claims)) {
    throw challenge(asked, 'invalid_token', 'the access token was not issued for a user', 401);
  }
  if (!hasOpenIDScope(claims.scope)) throw challenge(asked, 'insufficient_scope', 'the access token lacks the openid scope', 403);
  return claims;
}

/**
 * Ends the grant of a token whose user the `users.claims` hook says is gone (`null`), as the token endpoint ends the
 * grant of a refresh for such a user (token/user-tokens.ts): same event, same reason. Refusing the one call was not
 * enough: the grant's other access tokens kept passing the bearer guard and introspection until they expired, its
 * refresh token kept working without `idTokenClaims`, and every UserInfo call asked the hook again. Deleting the grant
 * is what the guard checks (grant-bound tokens always read their grant, never only its verified-token cache).
 * A delegated token (RFC 8693) lives on the subject's grant (`gid`): that grant ends too, because the person it stands
 * for is gone, whichever client holds the token; the event names the grant's own client. A failing store throws
 * (500 server_error, reported to onError), so the request is refused either way.
 */
async function endGrantOfGoneUser(context: SentinelContext, accountId: string, grantId: string): Promise<void> {
  const ended = await revokeGrant(context, grantId);
  // Already gone (a concurrent call, a logout): whoever ended it said so.
  if (ended === null) return;
  // Committed: the grant is gone whatever the hook says, and the answer stays the refusal below.
  context.emit({ type: 'grant.ended', accountId, clientId: ended.clientId, userId: ended.userId, reason: 'user-gone' }, 'committed');
}

/**
 * Answers UserInfo: `sub` and the claims the token's scopes release from `users.claims`, and those its authorization
 * request's `claims` parameter named for UserInfo.
 *
 * @example
 * // GET /sentinel/api/account/123/userinfo   Authorization: Bearer eyJ…
 * // 200 {"sub":"u-42","email":"alice@example.com","email_verified":true}
 */
export async function handleUserInfo(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const { algorithms } = context.config.dpop;
  // A refusal names the scheme the request used (RFC 9449 §7.1): before a token is found, the Authorization header's;
  // then the token's own, Bearer for a form-body token whatever else the request carries.
  const presented = await readAccessToken(context, request, { scheme: challengeScheme(authorizationField(request)), algorithms });
  const asked: ChallengeScheme = { scheme: presented.scheme, algorithms };
  const claims = await verifyUserToken(context, request, presented, accountId, asked);
  // A token this service signed for the account, still live: the account exists.
  context.observation?.noteAccount(accountId);
  // The claims the authorization request named for UserInfo (OpenID Connect Core §5.5), which the token carries.
  if (claims.userinfo_claims !== undefined) return namedClaimsResponse(context, accountId, claims, asked);
  const released = await loadUserClaims(context, { accountId, userId: claims.sub, scopes: scopeList(claims.scope) });
  if (released === null) return userGoneRefusal(context, accountId, claims, asked);
  return noStoreJSON(200, { ...released, sub: claims.sub });
}

async function userGoneRefusal(
  context: SentinelContext,
  accountId: string,
  claims: AccessTokenClaims,
  asked: ChallengeScheme,
): Promise<never> {
  await endGrantOfGoneUser(context, accountId, claims.gid as string);
  throw challenge(asked, 'invalid_token', 'the user of this access token no longer exists', 401);
}

/**
 * UserInfo for a token whose request named claims (`userinfo_claims`): the hook's user claims by scope and by name,
 * and the sign-in's own (`auth_time`, `acr`, `amr`) from the token when named; the hook is told only user claims.
 */
async function namedClaimsResponse(
  context: SentinelContext,
  accountId: string,
  claims: AccessTokenClaims,
  asked: ChallengeScheme,
): Promise<SentinelResponse> {
  const named = storedClaimNames(claims.userinfo_claims, 'userinfo');
  const userNames = named.filter((name) => !SIGN_IN_CLAIMS.includes(name));
  const input = { accountId, userId: claims.sub, scopes: scopeList(claims.scope) };
  const released = await loadUserClaims(context, userNames.length === 0 ? input : { ...input, claims: userNames });
  if (released === null) return userGoneRefusal(context, accountId, claims, asked);
  for (const name of named) {
    if (SIGN_IN_CLAIMS.includes(name) && claims[name] !== undefined) released[name] = claims[name];
  }
  return noStoreJSON(200, { ...released, sub: claims.sub });
}
