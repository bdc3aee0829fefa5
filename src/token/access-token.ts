/**
 * Access tokens: RFC 9068 JWTs (`typ: at+jwt`) issued for consumers (client credentials) and users
 * (authorization code). Their verification is the guard's: `guard/access-token-jwt.ts`.
 */
import type { DEVICE_CODE_GRANT } from '../apps/app.js';
import { randomUUID } from 'node:crypto';
import type { SentinelContext } from '../http/context.js';
import { noStoreJSONHeaders, type SentinelResponse } from '../http/messages.js';
import { signJWT } from '../keys/jws.js';
import type { AccessTokenClaims } from './access-token-claims.js';
import { assuranceClaims } from '../assurance/levels.js';
import { catchRejection } from '../lib/thenable.js';

export type { AccessTokenClaims, ActorClaim } from './access-token-claims.js';

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
  grantType: 'client_credentials' | 'authorization_code' | 'refresh_token' | typeof DEVICE_CODE_GRANT;
  scope?: string | undefined;
  /** A latest `exp` (epoch seconds): a delegated token never outlives the token it was exchanged for (RFC 8693). */
  notAfter?: number | undefined;
  authTime?: number | undefined;
  grantId?: string | undefined;
  /** How the user authenticated (RFC 8176): user tokens carry it with the `acr` it adds up to. */
  amr?: readonly string[] | undefined;
  /** The `acr` to report instead of the derived one (essential `acr` values; `assuranceClaims`). */
  acr?: string | undefined;
  /** Extra claims (e.g. the namespaced consumer claim). */
  extra?: Record<string, unknown> | undefined;
  /** RFC 8707 resources the token is for: its `aud` instead of the account's audience. */
  resources?: readonly string[] | undefined;
}

/**
 * The `aud` of tokens for one app: the `audience` option, or the account id. A function's answer must be a non-empty
 * string, given at once: `undefined`, `''` or a promise (an async function) would be signed into the token as no
 * audience, an empty one or `{}`, a token any resource server that reads `aud` loosely takes for its own. Such an answer
 * is a bug of the hook: a TypeError (500 server_error, to `onError`), no token.
 */
export function audienceFor(context: SentinelContext, accountId: string, clientId: string): string {
  const { audience } = context.config;
  if (audience === undefined) return accountId;
  if (typeof audience === 'string') return audience;
  const answer: unknown = audience({ accountId, clientId });
  if (typeof answer === 'string' && answer !== '') return answer;
  // An async function's promise is not awaited: its rejection must not go unhandled and end the host's process.
  catchRejection(answer);
  throw new TypeError('sentinel-idp: audience() must return a non-empty string, synchronously');
}

/**
 * The account's audience an issued token carries unless it is resource-bound: that of the app it comes from. A
 * delegated token (RFC 8693) keeps its subject's `aud`, so it is the app named in `grant_client_id`, not the actor
 * in `client_id`; the two differ when `audience` is a function of the client.
 *
 * @example if (!audiences.includes(tokenAccountAudience(context, accountId, claims))) throw wrongAudience();
 */
export function tokenAccountAudience(
  context: SentinelContext,
  accountId: string,
  claims: Pick<AccessTokenClaims, 'client_id' | 'grant_client_id'>,
): string {
  return audienceFor(context, accountId, claims.grant_client_id ?? claims.client_id);
}

/** The `aud` of a resource-bound token (RFC 8707 §2): the one resource as a string, several as an array. */
function resourceAudience(resources: readonly string[]): string | string[] {
  return resources.length === 1 ? (resources[0] as string) : [...resources];
}

/** Signs an access token; returns it with its claims. */
export async function issueAccessToken(
  context: SentinelContext,
  input: AccessTokenInput,
): Promise<{ token: string; claims: AccessTokenClaims; expiresIn: number }> {
  const iat = Math.floor(Date.now() / 1000);
  const ttl = context.config.accessTokenTtl;
  const expiresIn = input.notAfter === undefined || input.notAfter - iat >= ttl ? ttl : Math.max(input.notAfter - iat, 0);
  const claims: AccessTokenClaims = {
    iss: context.accountIssuer(input.accountId),
    sub: input.subject,
    aud: input.resources === undefined ? audienceFor(context, input.accountId, input.clientId) : resourceAudience(input.resources),
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
  const assurance = assuranceClaims(input.amr, input.acr);
  if (assurance !== undefined) {
    claims.acr = assurance.acr;
    claims.amr = assurance.amr;
  }
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
  return { status: 200, headers: noStoreJSONHeaders(), body: `${body}}` };
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
