/**
 * The user claims an authorization request asks for by name (OpenID Connect Core §5.5, the `claims` parameter's
 * `userinfo` and `id_token` members), beyond those its scopes release (§5.4). They travel with the code and the grant,
 * so the code exchange and every refresh release them where they were asked for: the ID token's in the ID token, the
 * UserInfo ones at UserInfo (the access token names those, `userinfo_claims`, so UserInfo needs no store read).
 *
 * Only the user claims the service can release (those of `SCOPE_CLAIMS`, listed in `claims_supported`) are kept, and
 * for UserInfo the sign-in's `auth_time`, `acr` and `amr`, which it answers from the access token; other names are
 * ignored, as Core §5.5 asks of claims an OP does not understand. What `sub` and `acr` ask of the sign-in has its own
 * readers (oidc-params.ts, assurance/requested-acr.ts); the other standard ID token claims are always there. A
 * claim's `value` or `values` is only a hint here (§5.5.1: it helps the user's choice, never a filter), and an
 * `essential` claim the user has not is simply absent: Core says an OP need not refuse for it.
 */
import type { App } from '../apps/app.js';
import { quotedValues } from '../errors.js';
import { SCOPE_CLAIMS } from '../userinfo/claims.js';

/** The releasable claims a request named, in the service's order (`SCOPE_CLAIMS`), for each place it asked. */
export interface RequestedClaims {
  /** Claims for UserInfo (`claims.userinfo`). */
  userinfo?: readonly string[] | undefined;
  /** Claims for the ID token (`claims.id_token`). */
  idToken?: readonly string[] | undefined;
}

/** Every user claim a request may ask for by name, in the order the answers list them. */
const RELEASABLE: readonly string[] = Object.values(SCOPE_CLAIMS).flat();

/**
 * Claims of the sign-in (`claims_supported`) that UserInfo answers from the access token when `claims.userinfo` names
 * them; every ID token carries them already (`acr` and `amr` when the sign-in recorded its methods). `sid`, also in
 * `claims_supported`, is deliberately not here: it names the session, not the user, and only ID tokens and logout
 * tokens carry it (as node-oidc-provider, whose UserInfo releases only the account's claims).
 */
export const SIGN_IN_CLAIMS: readonly string[] = ['auth_time', 'acr', 'amr'];

/** What each place may be asked for by name. */
const RELEASABLE_AT = { userinfo: [...RELEASABLE, ...SIGN_IN_CLAIMS], idToken: RELEASABLE } as const;

/** The place a list of names is for. */
export type ClaimsPlace = keyof typeof RELEASABLE_AT;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The releasable names of one `claims` target object, or a problem for a member that is neither null nor an object. */
function targetNames(target: unknown, name: string, place: ClaimsPlace): string[] | string {
  if (!isObject(target)) return [];
  for (const [claim, request] of Object.entries(target)) {
    // Core §5.5.1: each member is null (asked for, in the default manner) or an object of its request. The member's
    // name is the request's own text, of any length: quoted cut, as every refusal quotes a request's values.
    if (request !== null && !isObject(request)) return `claims.${name}.${quotedValues([claim])} must be null or a JSON object`;
  }
  return RELEASABLE_AT[place].filter((claim) => Object.hasOwn(target, claim));
}

/**
 * The claims the `claims` parameter asks for by name, `undefined` when it asks for none (no parameter, or only
 * `sub`, the ID token's `acr` and names the service cannot release), or a problem to answer as `invalid_request`. The parameter is
 * parsed once for all its readers (authorize/request/oidc-params.ts); readAcrRequest already checked its members.
 *
 * @example
 * readRequestedClaims({ userinfo: { email: { essential: true } }, id_token: { name: null, shoe_size: null } })
 * // { userinfo: ['email'], idToken: ['name'] }
 */
export function readRequestedClaims(parsed: Readonly<Record<string, unknown>> | undefined): RequestedClaims | undefined | string {
  if (parsed === undefined) return undefined;
  const userinfo = targetNames(parsed.userinfo, 'userinfo', 'userinfo');
  if (typeof userinfo === 'string') return userinfo;
  const idToken = targetNames(parsed.id_token, 'id_token', 'idToken');
  if (typeof idToken === 'string') return idToken;
  return requestedClaims(userinfo, idToken);
}

function requestedClaims(userinfo: readonly string[], idToken: readonly string[]): RequestedClaims | undefined {
  if (userinfo.length === 0 && idToken.length === 0) return undefined;
  const requested: RequestedClaims = {};
  if (userinfo.length > 0) requested.userinfo = userinfo;
  if (idToken.length > 0) requested.idToken = idToken;
  return requested;
}

/**
 * The names of a stored list for `place` (a code record, a grant, an access token's `userinfo_claims`): a stored
 * value is not trusted to name more than a request could, so anything else is dropped.
 *
 * @example storedClaimNames(['email', 'shoe_size', 3], 'userinfo') // ['email']
 */
export function storedClaimNames(value: unknown, place: ClaimsPlace): string[] {
  if (!Array.isArray(value)) return [];
  return RELEASABLE_AT[place].filter((claim) => value.includes(claim));
}

/**
 * The requested claims of a stored record (a code's `claims`, as {@link RequestedClaims} was written), checked.
 *
 * @example const requested = storedRequestedClaims(record.claims);
 */
export function storedRequestedClaims(value: unknown): RequestedClaims | undefined {
  if (!isObject(value)) return undefined;
  return requestedClaims(storedClaimNames(value.userinfo, 'userinfo'), storedClaimNames(value.idToken, 'idToken'));
}

/** The user claims the scopes of an app's registered `scope` release, built once per app object. */
const claimsOfApps = new WeakMap<Pick<App, 'scope'>, ReadonlySet<string>>();

function appClaims(app: Pick<App, 'scope'> & { scope: string }): ReadonlySet<string> {
  let allowed = claimsOfApps.get(app);
  if (allowed === undefined) {
    const scopes = app.scope.split(' ').filter((scope) => Object.hasOwn(SCOPE_CLAIMS, scope));
    allowed = new Set([...scopes.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []), ...SIGN_IN_CLAIMS]);
    claimsOfApps.set(app, allowed);
  }
  return allowed;
}

/**
 * The requested claims an app may be given: an app registered with a `scope` is given no user claim by name that
 * its scopes could not release (an app allowed `openid profile` does not get `email` by asking for it in `claims`,
 * as it would not by asking for the `email` scope); an app without one may ask for any, as for any scope. The
 * sign-in's own claims (`acr`, `amr`, `auth_time`) are no personal data a scope guards. Asked at the authorization
 * endpoint, and at every refresh (the app's scope may have been narrowed since, as the refresh narrows the grant's).
 *
 * @example claimsWithinAppScope({ userinfo: ['email', 'name'] }, { scope: 'profile' }) // { userinfo: ['name'] }
 */
export function claimsWithinAppScope(requested: RequestedClaims | undefined, app: Pick<App, 'scope'>): RequestedClaims | undefined {
  if (requested === undefined || app.scope === undefined) return requested;
  const allowed = appClaims(app as Pick<App, 'scope'> & { scope: string });
  const within = (names: readonly string[] | undefined) => (names ?? []).filter((name) => allowed.has(name));
  return requestedClaims(within(requested.userinfo), within(requested.idToken));
}
