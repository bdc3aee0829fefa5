/**
 * Building the redirect back to the application (RFC 6749 §4.1.2, §4.1.2.1, RFC 9207).
 *
 * Parameters are appended to the registered URI as it is written, never re-serialised: re-encoding through
 * `URL.searchParams` would rewrite the app's own query (`%20` ↔ `+`, reordering) and break exact-match checks
 * on the app's side. Values go through `encodeURIComponent`, so `state` round-trips byte for byte.
 */

/** Where an authorization response goes, known once the client and redirect URI are validated. */
export interface RedirectTarget {
  accountId: string;
  clientId: string;
  redirectUri: string;
  /** The `state` of the request, exactly as sent, when it was sent. */
  state?: string | undefined;
  /** RFC 9207 issuer identifier of the account. */
  iss: string;
}

/**
 * `redirectUri` with the parameters appended (absent values skipped), `state` and `iss` last.
 *
 * @example
 * authorizationResponseURL(target, { error: 'access_denied' }) // 'https://app.example.com/cb?error=access_denied&state=…&iss=…'
 */
export function authorizationResponseURL(target: RedirectTarget, parameters: Record<string, string | undefined>): string {
  // Appended in one string as they come: no entry arrays.
  let query = '';
  for (const name of Object.keys(parameters)) query = appendParameter(query, name, parameters[name]);
  return withStateAndIssuer(target, query);
}

/**
 * The redirect that delivers a code (RFC 6749 §4.1.2): `code`, then `state` and `iss`. Every signed-in authorize
 * request builds one. The code is written as it is: it is a `randomSecret()`, base64url, whose characters
 * encodeURIComponent gives back unchanged, so encoding it was a call into V8's runtime that changed nothing.
 *
 * @example
 * codeResponseURL(target, code) // 'https://app.example.com/cb?code=…&state=…&iss=…'
 */
export function codeResponseURL(target: RedirectTarget, code: string): string {
  return withStateAndIssuer(target, `code=${code}`);
}

function withStateAndIssuer(target: RedirectTarget, parameters: string): string {
  let query = appendParameter(parameters, 'state', target.state);
  if (target.iss !== undefined) query = `${query === '' ? '' : `${query}&`}iss=${encodedIssuer(target.iss)}`;
  const uri = target.redirectUri;
  const separator = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${separator}${query}`;
}

/**
 * The last issuer encoded, and its encoding. An instance's requests are mostly for one account (or a few in turn),
 * whose issuer is the same text on every request: encoded once, not once per redirect.
 */
let lastIssuer = '';
let lastEncodedIssuer = '';

function encodedIssuer(iss: string): string {
  if (iss !== lastIssuer) {
    lastEncodedIssuer = encodeURIComponent(iss);
    lastIssuer = iss;
  }
  return lastEncodedIssuer;
}

function appendParameter(query: string, name: string, value: string | undefined): string {
  if (value === undefined) return query;
  const pair = `${name}=${encodeURIComponent(value)}`;
  return query === '' ? pair : `${query}&${pair}`;
}
