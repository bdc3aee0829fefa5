/**
 * The parameters of an authorization request. OpenID Connect Core §3.1.2.1: the authorization endpoint MUST support
 * GET (the query) and POST (an `application/x-www-form-urlencoded` body). Both give one {@link ParamMap}, validated
 * by the same code with the same rules, the one-value-per-parameter rule included (RFC 6749 §3.1).
 *
 * A POST's query is not ignored: its parameters join the body's, and a name in both counts as given twice, which is
 * `invalid_request` wherever a repeated parameter is (RFC 6749 §3.1: a parameter must not be included more than
 * once). Neither place silently wins, so a query appended to an app's form cannot override what the form says,
 * and `?v=1.0` on the action URL still works.
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError, quotedValues } from '../../errors.js';
import { readForm } from '../../http/form-body.js';
import type { SentinelRequest } from '../../http/messages.js';
import { fromSearchParamsWithin, type ParamMap } from '../../http/params.js';

/**
 * Longest authorization request accepted, in characters of names and values (plus two per parameter), whether in
 * the URL or in a body. Browsers and proxies cut URLs near 8 KiB anyway; without a cap a single request with a
 * megabyte `state` would be parked in the store for the interaction's lifetime (and echoed in the Location
 * header), so a flood could exhaust memory. A POST gets the same cap, so it parks no more than a GET.
 */
export const MAX_AUTHORIZATION_REQUEST_LENGTH = 8192;

function tooLong(status: 413 | 414): OAuthError {
  return new OAuthError('invalid_request', 'The request is too long.', { status });
}

function lengthOf(params: ParamMap): number {
  let length = 0;
  for (const [name, values] of params) for (const value of values ?? ['']) length += name.length + value.length + 2;
  return length;
}

/**
 * The request's parameters: the query of a GET (or HEAD) at once, the form body and the query of a POST as a promise.
 *
 * @example
 * const params = await readAuthorizationParams(context, request);
 * @throws OAuthError 414 for a query, 413 for a body, over {@link MAX_AUTHORIZATION_REQUEST_LENGTH}; the form
 * reader's 400/408/413 for a POST whose body is not a form, arrives late or exceeds `bodyLimit`.
 */
export function readAuthorizationParams(context: SentinelContext, request: SentinelRequest): ParamMap | Promise<ParamMap> {
  // Checked first: an oversized request is refused before it is looked at, stored or echoed (RFC 9110 §15.5.15).
  const query = fromSearchParamsWithin(request.query, MAX_AUTHORIZATION_REQUEST_LENGTH);
  if (query === null) throw tooLong(414);
  // A GET's parameters are at hand: answered as they are, not through a promise and a microtask of its own.
  if (request.method !== 'POST') return query;
  return withPostedForm(context, request, query);
}

/** A POST's form, with the query's parameters joined to it. */
async function withPostedForm(context: SentinelContext, request: SentinelRequest, query: ParamMap): Promise<ParamMap> {
  const params = await readForm(request, context.config.bodyLimit);
  for (const [name, values] of query) {
    const posted = params.get(name);
    // A host parser's non-string value (`null`) stays malformed; otherwise both places' values count together.
    params.set(name, posted === undefined ? values : posted === null || values === null ? null : [...posted, ...values]);
  }
  if (lengthOf(params) > MAX_AUTHORIZATION_REQUEST_LENGTH) throw tooLong(413);
  return params;
}

/**
 * Client credentials a misconfigured app may post along with its authorization request. They are no parameter of it
 * (RFC 6749 §3.1: ignored), and must not be moved from the body into a URL, which browsers keep in their history and
 * send to every log on the way (RFC 6749 §2.3.1: never in the request URI).
 */
const CLIENT_CREDENTIALS: ReadonlySet<string> = new Set(['client_secret', 'client_assertion', 'client_assertion_type']);

/**
 * The query of the GET that carries the same parameters as `params`, for answering a POST with a redirect to it;
 * client credentials posted with them are left out ({@link CLIENT_CREDENTIALS}).
 *
 * @example
 * redirect(303, `${authorizePath}?${authorizationQuery(params)}`)
 * @throws OAuthError invalid_request when a parameter is not text (a host parser's nested object).
 */
export function authorizationQuery(params: ParamMap): string {
  const query = new URLSearchParams();
  for (const [name, values] of params) {
    if (CLIENT_CREDENTIALS.has(name)) continue;
    // The name is the request's own (a host parser's body has any), quoted cut as any value the request sent.
    if (values === null) throw new OAuthError('invalid_request', `parameter ${quotedValues([name])} is malformed`);
    for (const value of values) query.append(name, value);
  }
  return query.toString();
}
