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
 * authorizationResponseURL(target, { code }) // 'https://app.example.com/cb?code=…&state=…&iss=…'
 */
export function authorizationResponseURL(target: RedirectTarget, parameters: Record<string, string | undefined>): string {
  // Appended in one string as they come (every signed-in authorize request builds one): no entry arrays.
  let query = '';
  for (const name in parameters) query = appendParameter(query, name, parameters[name]);
  query = appendParameter(appendParameter(query, 'state', target.state), 'iss', target.iss);
  const uri = target.redirectUri;
  const separator = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${separator}${query}`;
}

function appendParameter(query: string, name: string, value: string | undefined): string {
  if (value === undefined) return query;
  const pair = `${name}=${encodeURIComponent(value)}`;
  return query === '' ? pair : `${query}&${pair}`;
}
