/**
 * The claims of an access token, on their own: the verifier's contract (`guard/verifier-contract.ts`), which the request
 * context names, needs this type and may not import the issuing module (`access-token.ts`, which imports the context).
 */
import type { JWTClaims } from '../keys/jws.js';

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
  /**
   * The grant the token comes from: `client_credentials` for app and consumer-bound tokens (JWT bearer ones too),
   * `authorization_code` for user tokens of the code flow and `urn:ietf:params:oauth:grant-type:device_code` for
   * those of a device (RFC 8628). A refreshed token keeps its grant's (a grant stored before the device grant's was
   * kept reads as `authorization_code`); a delegated one (token exchange) is `client_credentials` for a consumer's
   * token and `authorization_code` for a user's.
   */
  gty: string;
  scope?: string;
  auth_time?: number;
  /** Grant (refresh family) id of user tokens; revoking the grant revokes the token. */
  gid?: string;
  /** User tokens: the level the sign-in reached (`urn:sentinel:acr:…`), when the sign-in recorded its methods. */
  acr?: string;
  /** User tokens: how the user authenticated (RFC 8176: `pwd`, `otp`, `hwk`, `swk`, `user`, `mfa`). */
  amr?: string[];
  /** Who acts for `sub` in a delegated token (RFC 8693 §4.1): the client that exchanged it, nested for each earlier actor. */
  act?: ActorClaim;
  /** A delegated user token: the client of the grant it lives on (`client_id` is the actor). */
  grant_client_id?: string;
  /**
   * A delegated token: the `jti` of the token it was exchanged for, then that token's own `delegated_from` (nearest
   * first, at most three). Revoking any of them revokes this token too. A consumer's own token cannot be revoked, so
   * a consumer chain lists only its delegated tokens (none for a first delegation).
   */
  delegated_from?: string[];
  /**
   * User tokens of a request whose `claims` parameter named claims for UserInfo (OpenID Connect Core §5.5): their
   * names, which UserInfo releases beside the scopes' ones.
   */
  userinfo_claims?: string[];
}

/** The access token claim that names the claims asked of UserInfo ({@link AccessTokenClaims.userinfo_claims}). */
export const USERINFO_CLAIMS_CLAIM = 'userinfo_claims';

/**
 * The `act` claim of RFC 8693 §4.1: the current actor, with the one before it nested (at most three deep here).
 * @example const actors: string[] = []; for (let a = claims.act; a !== undefined; a = a.act) actors.push(a.sub);
 */
export interface ActorClaim {
  sub: string;
  act?: ActorClaim;
}

/**
 * The actors of an `act` chain, nearest first (the client that exchanged last, then each earlier one); empty for a
 * token that is no delegation. Every one of them must still exist for the token to pass (guard/token-liveness.ts).
 *
 * @example actorsOf({ sub: 'bot-2', act: { sub: 'bot-1' } }) // ['bot-2', 'bot-1']
 */
export function actorsOf(act: ActorClaim | undefined): string[] {
  const actors: string[] = [];
  for (let current = act; current !== undefined; current = current.act) actors.push(current.sub);
  return actors;
}

/**
 * Whether an access token was issued for a user (a code or a device grant, or a refresh of one) rather than for an
 * application or a consumer.
 *
 * @example if (!issuedForUser(claims)) throw challenge('invalid_token', 'the access token was not issued for a user', 401);
 */
export function issuedForUser(claims: Pick<AccessTokenClaims, 'gid' | 'gty'>): boolean {
  return (
    typeof claims.gid === 'string' && (claims.gty === 'authorization_code' || claims.gty === 'urn:ietf:params:oauth:grant-type:device_code')
  );
}

/**
 * The claims of an access token the service writes: `consumerClaim` copies the consumer id under its own name, so a
 * name among these would overwrite one (a `cnf` unbinding a DPoP token, an `aud` another audience).
 *
 * @example SERVICE_WRITTEN_CLAIMS.has('cnf') // true
 */
export const SERVICE_WRITTEN_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'azp',
  'gty',
  'scope',
  'auth_time',
  'gid',
  'acr',
  'amr',
  'act',
  'grant_client_id',
  'delegated_from',
  'userinfo_claims',
  'cnf',
  'token_use',
  'sid',
  'typ',
]);
