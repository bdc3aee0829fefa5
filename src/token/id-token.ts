/**
 * ID tokens (OpenID Connect Core §2, §3.1.3.6) for code grants whose scope includes `openid`.
 */
import { hash } from 'node:crypto';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { type JWTClaims, signJWT } from '../keys/jws.js';
import type { SigningAlgorithm, SigningKey } from '../keys/signing-keys.js';
import { assuranceClaims } from '../assurance/levels.js';
import { FAPI2_ALGORITHMS, isFapi2 } from '../assurance/fapi2.js';

/** What an ID token states. */
export interface IDTokenInput {
  accountId: string;
  clientId: string;
  userId: string;
  authTime: number;
  /** How the user authenticated (RFC 8176): the token carries it and the `acr` it adds up to (§2). */
  amr?: readonly string[] | undefined;
  /** The `acr` to report instead of the derived one (essential `acr` values; `assuranceClaims`). */
  acr?: string | undefined;
  nonce?: string | undefined;
  /** The device session's `sid` (OpenID Connect Back-Channel Logout §2.1), when the grant has one. */
  sid?: string | undefined;
  /** The access token issued with it, for `at_hash` (OpenID Connect Core §3.1.3.6). */
  accessToken?: string | undefined;
  /** User claims released by the granted scopes (only with the `idTokenClaims` option). */
  claims?: Record<string, unknown> | undefined;
  /** The app's `idTokenSignedResponseAlg`, if it chose one. */
  alg?: SigningAlgorithm | undefined;
}

/**
 * True when a space-separated scope contains `openid` (as a whole value, not inside another). A scan, not a split:
 * every code exchange and refresh asks, and splitting allocated an array and a string per scope value to answer it.
 * @example hasOpenIDScope('openid offline_access') // true; hasOpenIDScope('openid:extra') // false
 */
export function hasOpenIDScope(scope: string | undefined): boolean {
  if (scope === undefined) return false;
  for (let at = scope.indexOf('openid'); at !== -1; at = scope.indexOf('openid', at + 1)) {
    const end = at + 6;
    if ((at === 0 || scope.charCodeAt(at - 1) === SPACE) && (end === scope.length || scope.charCodeAt(end) === SPACE)) return true;
  }
  return false;
}

const SPACE = 0x20;

/**
 * The key that signs an app's ID tokens: the one of the app's chosen algorithm, else RS256 when configured
 * (OpenID Connect Core §15.1: the algorithm every client supports), else the access-token signer.
 * @throws Error when the app asks for an algorithm no configured key has (a deployment mistake: server_error).
 * @example const key = idTokenKey(context, app.idTokenSignedResponseAlg);
 */
export function idTokenKey(context: SentinelContext, alg: SigningAlgorithm | undefined): SigningKey {
  const { byAlg, signer } = context.keys;
  if (alg === undefined) return byAlg.get('RS256') ?? signer;
  const key = byAlg.get(alg);
  if (key === undefined) throw new Error(`sentinel-idp: no ${alg} key is configured for idTokenSignedResponseAlg`);
  return key;
}

/** The hash of `alg` that `at_hash` uses: SHA-2 of the JWS algorithm's size; SHA-512 for Ed25519. */
const HALF_HASH: Record<SigningAlgorithm, string> = { ES256: 'sha256', RS256: 'sha256', PS256: 'sha256', ES384: 'sha384', EdDSA: 'sha512' };

/**
 * `at_hash`: base64url of the left half of the hash of the access token's ASCII octets (OpenID Connect Core
 * §3.1.3.6), with the hash of the ID token's algorithm.
 * @example atHash('eyJ…', 'RS256') // 22 base64url characters
 */
export function atHash(accessToken: string, alg: SigningAlgorithm): string {
  // The one-shot hash: an access token is a JWS, ASCII, so its UTF-8 octets are its ASCII octets.
  const digest = hash(HALF_HASH[alg], accessToken, 'buffer');
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/**
 * The algorithm an app's ID tokens ask for: its own `idTokenSignedResponseAlg`, else `undefined` (the service's
 * default, RS256 when configured). A fapi2 app without one takes an algorithm its profile allows, which RS256 is not:
 * the access tokens' signer's when allowed, else the first allowed one with a key.
 * @example issueIDToken(context, { …, alg: appIdTokenAlg(context, app) })
 */
export function appIdTokenAlg(
  context: SentinelContext,
  app: Pick<App, 'idTokenSignedResponseAlg' | 'profile'>,
): SigningAlgorithm | undefined {
  if (app.idTokenSignedResponseAlg !== undefined || !isFapi2(app)) return app.idTokenSignedResponseAlg;
  const { signer, byAlg } = context.keys;
  if (FAPI2_ALGORITHMS.includes(signer.alg)) return signer.alg;
  return (FAPI2_ALGORITHMS as readonly SigningAlgorithm[]).find((alg) => byAlg.has(alg));
}

/**
 * The ID token algorithm of an app, for the metadata and for checking apps at startup.
 * @example idTokenAlgorithm(context, app) // 'RS256'
 */
export function idTokenAlgorithm(context: SentinelContext, app: Pick<App, 'idTokenSignedResponseAlg' | 'profile'>): SigningAlgorithm {
  return idTokenKey(context, appIdTokenAlg(context, app)).alg;
}

/**
 * Signs an ID token: `iss` is the account's issuer, `aud` and `azp` the client id, lifetime `idTokenTtl`.
 * @example const idToken = await issueIDToken(context, { accountId, clientId, userId, authTime, nonce, accessToken });
 */
export function issueIDToken(context: SentinelContext, input: IDTokenInput): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const key = idTokenKey(context, input.alg);
  const iss = context.accountIssuer(input.accountId);
  const exp = iat + context.config.idTokenTtl;
  // One literal and assignments in the claims' order, not a literal of spreads: each spread of a conditional object
  // was an object copy per ID token. Released user claims come first and never override these.
  const claims: JWTClaims =
    input.claims === undefined
      ? { iss, sub: input.userId, aud: input.clientId, azp: input.clientId, iat, exp, auth_time: input.authTime }
      : { ...input.claims, iss, sub: input.userId, aud: input.clientId, azp: input.clientId, iat, exp, auth_time: input.authTime };
  const assurance = assuranceClaims(input.amr, input.acr);
  if (assurance !== undefined) {
    claims.acr = assurance.acr;
    claims.amr = assurance.amr;
  }
  if (input.nonce !== undefined) claims.nonce = input.nonce;
  if (input.sid !== undefined) claims.sid = input.sid;
  if (input.accessToken !== undefined) claims.at_hash = atHash(input.accessToken, key.alg);
  return signJWT(context.keys, 'JWT', claims, context.config.signing, key, context.traceContext);
}
