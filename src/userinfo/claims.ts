/**
 * User claims (OpenID Connect Core §5.1) and which scopes release them (§5.4). The host's `users.claims` hook
 * describes the user; only the claims the granted scopes cover leave the service, so an app that asked for
 * `openid email` never sees the user's address even when the hook returns it.
 */
import type { UserClaims, UserClaimsInput } from '../config.js';
import type { SentinelContext } from '../http/context.js';

/** OpenID Connect Core §5.4: the claims each scope value requests. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  profile: [
    'name',
    'family_name',
    'given_name',
    'middle_name',
    'nickname',
    'preferred_username',
    'profile',
    'picture',
    'website',
    'gender',
    'birthdate',
    'zoneinfo',
    'locale',
    'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
});

/** Every claim the service can release (`claims_supported` of the metadata). */
export const SUPPORTED_CLAIMS: readonly string[] = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'azp',
  'at_hash',
  ...Object.values(SCOPE_CLAIMS).flat(),
];

/** The space-separated scope as a list. */
export function scopeList(scope: string | undefined): string[] {
  return (scope ?? '').split(' ').filter((token) => token !== '');
}

/**
 * The claims one scope value releases. Own names only: a scope is whatever the app asked for (an app without a
 * registered `scope` may ask for any), and `constructor` or `__proto__` must not find what every object inherits.
 */
function claimsOfScope(scope: string): readonly string[] {
  return Object.hasOwn(SCOPE_CLAIMS, scope) ? (SCOPE_CLAIMS[scope] ?? []) : [];
}

/**
 * The claims of `claims` that `scopes` release, plus those `requested` by name (the `claims` parameter, OpenID Connect
 * Core §5.5; only names the service can release, token/requested-claims.ts), `sub` excluded. Values of the wrong JSON
 * type are dropped rather than passed on: a client that parses `email_verified` as a boolean must not be handed a
 * string.
 *
 * @example
 * releasedClaims({ email: 'a@example.com', address: { country: 'NL' } }, ['openid', 'email']) // { email: 'a@example.com' }
 * releasedClaims({ email: 'a@example.com', name: 'A' }, ['openid'], ['name']) // { name: 'A' }
 */
export function releasedClaims(claims: UserClaims, scopes: readonly string[], requested?: readonly string[]): Record<string, unknown> {
  const released: Record<string, unknown> = {};
  for (const scope of scopes) {
    for (const name of claimsOfScope(scope)) release(released, claims, name);
  }
  if (requested !== undefined) for (const name of requested) release(released, claims, name);
  return released;
}

function release(released: Record<string, unknown>, claims: UserClaims, name: string): void {
  const value = claims[name];
  if (value === undefined || value === null) return;
  if (!hasExpectedType(name, value)) return;
  released[name] = value;
}

function hasExpectedType(name: string, value: unknown): boolean {
  if (name === 'email_verified' || name === 'phone_number_verified') return typeof value === 'boolean';
  if (name === 'updated_at') return typeof value === 'number' && Number.isFinite(value);
  if (name === 'address') return typeof value === 'object' && !Array.isArray(value);
  return typeof value === 'string';
}

/**
 * Asks the host for a user's claims and filters them by scope and by the names the request asked for (`claims`, the
 * `claims` parameter's for this place: UserInfo's or the ID token's). `null` when the hook says the user no longer
 * exists; `{}` when no hook is configured. The hook is asked even when the scopes release no claims (`openid`
 * alone): what it says about the user is whether there still is one, and a deleted user must not keep getting
 * `{ sub }` where the same user with `email` gets `invalid_token`. The scopes tell it that only existence counts.
 * Only UserInfo and the ID tokens of `idTokenClaims` or of a `claims` parameter's `id_token` ask; a throwing hook
 * propagates (the caller's request ends in `server_error` and `onError` hears the cause). `byScope: false` releases
 * only the named claims (an ID token without `idTokenClaims`); the hook is still told the scopes.
 *
 * @example
 * const claims = await loadUserClaims(context, { accountId, userId: claims.sub, scopes: scopeList(claims.scope) });
 */
export async function loadUserClaims(
  context: SentinelContext,
  input: UserClaimsInput,
  byScope = true,
): Promise<Record<string, unknown> | null> {
  const hook = context.config.users?.claims;
  if (hook === undefined) return {};
  // `claims` only when the request named some: a hook that compares its input keeps seeing what it always saw.
  const asked: UserClaimsInput =
    input.claims === undefined
      ? { accountId: input.accountId, userId: input.userId, scopes: [...input.scopes] }
      : { accountId: input.accountId, userId: input.userId, scopes: [...input.scopes], claims: [...input.claims] };
  const claims = await hook.call(context.config.users, asked);
  if (claims === null || claims === undefined) return null;
  if (typeof claims !== 'object') throw new TypeError('sentinel-idp: users.claims() must return an object or null');
  return releasedClaims(claims, byScope ? input.scopes : [], input.claims);
}
