/**
 * Audit events for refused requests: each route says which event its refusals produce (`RouteDefinition.deniedEvent`),
 * so the edge (edge.ts) stays free of per-route knowledge.
 */
import { isAuthorizationError } from '../authorize/request/authorization-error.js';
import type { DeniedEventBuilder } from '../http/router.js';
import { requestedGrantType } from '../http/requested-grant-type.js';

/**
 * `token.denied` for the token endpoints (RFC 6749 §5.2 errors), with the grant the request asked for once it was
 * read, when the service knows that grant type.
 * @example { name: 'token', …, deniedEvent: tokenDenied }
 */
export const tokenDenied: DeniedEventBuilder = (_context, request, params, error) => ({
  type: 'token.denied',
  accountId: params.accountId,
  grantType: requestedGrantType(request),
  error: error.code,
  reason: error.description,
});

/**
 * `authorize.denied` for the authorization endpoint (RFC 6749 §4.1.2.1 errors); the client is named once it was
 * validated.
 * @example { name: 'authorize', …, deniedEvent: authorizeDenied }
 */
export const authorizeDenied: DeniedEventBuilder = (_context, _request, params, error) => ({
  type: 'authorize.denied',
  accountId: params.accountId,
  clientId: isAuthorizationError(error) ? error.target.clientId : undefined,
  error: error.code,
  reason: error.description,
});
