/**
 * Reading `grant_type` (RFC 6749 §4.1.3, §4.4.2, §6) once for every token endpoint, so that the request's span
 * names the grant from the moment it is known: a refused or failed request is then as easy to find by grant as a
 * successful one.
 */
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { noteRequestedGrantType } from '../http/requested-grant-type.js';

/**
 * The grant types a span or a `token.denied` event may name. Anything else a client sends stays out of telemetry and
 * the audit log: the value is the client's text, of any length, and both already carry `unsupported_grant_type`.
 */
const KNOWN_GRANT_TYPES: ReadonlySet<string> = new Set([
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
  // RFC 8693 token exchange, RFC 7523 JWT bearer
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
]);

/**
 * The request's `grant_type` (undefined when absent; a repeated one is `invalid_request`), noted on the request's
 * span, and for its `token.denied` event, when it is one of the grant types this service knows, whether or not this
 * endpoint serves it.
 *
 * @example
 * const grantType = readGrantType(context, request, params);
 * if (grantType === undefined) throw new OAuthError('invalid_request', 'parameter grant_type is required');
 */
export function readGrantType(context: SentinelContext, request: SentinelRequest, params: ParamMap): string | undefined {
  const grantType = single(params, 'grant_type');
  if (grantType !== undefined && KNOWN_GRANT_TYPES.has(grantType)) {
    context.observation?.noteGrantType(grantType);
    noteRequestedGrantType(request, grantType);
  }
  return grantType;
}
