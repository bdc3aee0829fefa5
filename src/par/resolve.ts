/**
 * The authorization endpoint's side of PAR (RFC 9126 §4): a request carrying `request_uri` is replaced by the
 * parameters its client pushed. Only the pushed parameters count (anything else in the URL besides `client_id` is
 * ignored), the `request_uri` must belong to the `client_id` of the URL, and it is single-use.
 */
import { isFapi2 } from '../assurance/fapi2.js';
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import type { OAuthErrorCode } from '../errors.js';
import type { ParamMap } from '../http/params.js';
import { peekPushedRequest, REQUEST_URI_PREFIX, takePushedRequest } from './pushed-requests.js';

/** Builds the error to deliver when the pushed request cannot be used (a redirect once the redirect URI is known). */
export type PushedRequestFailure = (code: OAuthErrorCode, description: string) => Error;

/**
 * The parameters of the authorization request: the pushed ones when the URL names a `request_uri`, else the
 * URL's own (refused when the app must push its requests). A `request_uri` that is not a pushed request's URN is
 * left in place: the OpenID Connect checks answer it with `request_uri_not_supported` (authorize/request/oidc-params.ts), the one
 * place that refuses request URIs this service does not fetch.
 * @throws whatever `fail` builds: `invalid_request_uri` for an unknown, expired, used or foreign `request_uri`;
 * `invalid_request` for a repeated one, or a plain request of an app that must push.
 * @example const params = await resolvePushedRequest(context, app, fromSearchParams(request.query), fail);
 */
export async function resolvePushedRequest(
  context: SentinelContext,
  app: App,
  params: ParamMap,
  fail: PushedRequestFailure,
): Promise<ParamMap> {
  if (!isPushedRequestURI(params)) {
    if (app.requirePushedAuthorizationRequests === true || isFapi2(app)) {
      throw fail('invalid_request', 'this application must push its authorization requests first (request_uri from the PAR endpoint)');
    }
    return params;
  }
  // A request_uri given more than once (or unreadable) is the invalid_request of any repeated parameter (RFC 6749
  // §3.1, §4.1.2.1), not invalid_request_uri (RFC 9101 §6.2), which says the one named is not a usable pushed request.
  // A single one is a pushed request's URN here (isPushedRequestURI).
  const values = params.get('request_uri');
  if (values === null) throw fail('invalid_request', 'parameter request_uri is malformed');
  if (values === undefined || values.length !== 1) throw fail('invalid_request', 'parameter request_uri is given more than once');
  const requestUri = values[0] as string;
  const pushed = await peekPushedRequest(context, requestUri);
  if (pushed === null) throw fail('invalid_request_uri', 'the request_uri is unknown, expired or already used');
  // Checked before the take: a client that presents another client's request_uri must not spend it.
  if (pushed.accountId !== app.accountId || pushed.clientId !== app.clientId) {
    throw fail('invalid_request_uri', 'the request_uri was pushed by another client');
  }
  const taken = await takePushedRequest(context, requestUri);
  if (taken === null) throw fail('invalid_request_uri', 'the request_uri is unknown, expired or already used');
  const resolved: ParamMap = new Map();
  for (const [name, value] of taken.params) {
    const values = resolved.get(name);
    if (values) values.push(value);
    else resolved.set(name, [value]);
  }
  return resolved;
}

/** Whether the URL names a `request_uri` from the PAR endpoint (RFC 9126 §2.2 URN); a repeated one counts, to be refused. */
function isPushedRequestURI(params: ParamMap): boolean {
  const values = params.get('request_uri');
  if (values === undefined) return false;
  if (values === null || values.length !== 1) return true;
  return (values[0] as string).startsWith(REQUEST_URI_PREFIX);
}

/**
 * Whether {@link resolvePushedRequest} has anything to do for this request: it names a pushed request, or the app
 * accepts only pushed ones. The authorization endpoint skips the call (and its promise) otherwise.
 * @example const params = involvesPushedRequest(app, query) ? await resolvePushedRequest(context, app, query, fail) : query;
 */
export function involvesPushedRequest(app: App, params: ParamMap): boolean {
  return app.requirePushedAuthorizationRequests === true || isFapi2(app) || isPushedRequestURI(params);
}
