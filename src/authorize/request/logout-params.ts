/**
 * The parameters of a logout request (RP-initiated logout at `end_session`): the query of a GET, the form of a POST,
 * each bounded as an authorization request is.
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { readForm } from '../../http/form-body.js';
import { headerValue, type SentinelRequest } from '../../http/messages.js';
import { fromSearchParams, type ParamMap } from '../../http/params.js';

/**
 * Longest logout request accepted, in the query of a GET or the form of a POST, as for authorization requests:
 * `state` is kept with a pending confirmation (and a cookieless POST is parked for the GET it is forwarded to), so without
 * a cap one request could park a megabyte in the store.
 */
const MAX_REQUEST_LENGTH = 8192;

function tooLong(status: 413 | 414): OAuthError {
  return new OAuthError('invalid_request', 'The request is too long.', { status });
}

/**
 * The request's parameters; a POST without a body has none.
 * @throws OAuthError invalid_request, 414 for a query and 413 for a form over {@link MAX_REQUEST_LENGTH}.
 * @example const params = await readLogoutParams(context, request);
 */
export async function readLogoutParams(context: SentinelContext, request: SentinelRequest): Promise<ParamMap> {
  if (request.method !== 'POST') {
    let length = 0;
    for (const [name, value] of request.query) length += name.length + value.length + 2;
    if (length > MAX_REQUEST_LENGTH) throw tooLong(414);
    return fromSearchParams(request.query);
  }
  if (headerValue(request, 'content-type') === undefined) return new Map();
  const params = await readForm(request, context.config.bodyLimit);
  // The same measure as the query's; a body, so 413 as the authorization endpoint answers a long POST.
  let length = 0;
  for (const [name, values] of params) for (const value of values ?? ['']) length += name.length + value.length + 2;
  if (length > MAX_REQUEST_LENGTH) throw tooLong(413);
  return params;
}
