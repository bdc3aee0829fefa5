/**
 * The one syntax of an account id, wherever one is taken in: the CLI's `--account`, the `apps` and `trustedIssuers`
 * options, and the `{accountId}` segment of every account route. An account id becomes one path segment of the
 * account's issuer and endpoint URLs (`/sentinel/api/account/{accountId}/…`), so it must survive as one.
 */

const SEGMENT = /^[^\u0000-\u001f\u007f/?#]{1,256}$/;

/** What {@link isAccountId} requires, in words, for error messages. */
export const ACCOUNT_ID_RULE = '1-256 characters without control characters, "/", "?" or "#", and not "." or ".."';

/**
 * Whether `value` can be an account id: 1–256 characters, no control character, `/`, `?` or `#`, and not a dot
 * segment. `encodeURIComponent` leaves `.` and `..` as they are, and every URL parser resolves them away
 * (RFC 3986 §5.2.4): an issuer `…/account/..` and its `registration_client_uri` would name paths that are no
 * route, so an app of such an account could be created but never managed, and tokens would carry an issuer that no
 * discovery document answers for.
 *
 * @example isAccountId('le81823118') // true
 * @example isAccountId('..') // false
 */
export function isAccountId(value: string): boolean {
  return SEGMENT.test(value) && !isDotSegment(value);
}

/**
 * Whether `value` is `.` or `..`, the part of {@link isAccountId} that no registry may hold an account under: its
 * URLs resolve to other paths whatever the account. The other characters it refuses encode into a URL intact, so an
 * account route meets them as an unknown account (or a host registry's own id), as before.
 *
 * @example isDotSegment('..') // true
 */
export function isDotSegment(value: string): boolean {
  return value === '.' || value === '..';
}
