/**
 * The `private_key_jwt` branch of client authentication (RFC 7523 §2.2): `client_assertion_type` +
 * `client_assertion` in the form body, instead of a secret. One method per request (RFC 6749 §2.3).
 */
import type { App } from '../apps/app.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError, unauthorizedClient } from '../errors.js';
import type { SentinelRequest } from '../http/messages.js';
import { authorizationField, joinsSeveralCredentials } from '../http/authorization-field.js';
import { usesBasicScheme } from '../http/authorization-scheme.js';
import { single, type ParamMap } from '../http/params.js';
import { assertionSubject, JWT_BEARER_ASSERTION, verifyClientAssertion } from './verify-assertion.js';

/**
 * True when the request authenticates with a client assertion (either parameter given a value). RFC 6749 §3.1: a
 * parameter without a value is treated as omitted, so an empty `client_assertion=` beside a secret does not make the
 * request one of two methods; a malformed (repeated or unreadable) one still counts, and is refused as such.
 */
export function hasClientAssertion(params: ParamMap): boolean {
  return hasValue(params, 'client_assertion') || hasValue(params, 'client_assertion_type');
}

function hasValue(params: ParamMap, name: string): boolean {
  const values = params.get(name);
  return values === null || (values !== undefined && (values.length > 1 || values[0] !== ''));
}

/**
 * Authenticates the client of a request carrying a client assertion, for `accountId`.
 * @throws OAuthError invalid_request when another method is mixed in; invalid_client (401) otherwise.
 * @example const app = await authenticateWithAssertion(context, accountId, request, params);
 */
export async function authenticateWithAssertion(
  context: SentinelContext,
  accountId: string,
  request: SentinelRequest,
  params: ParamMap,
): Promise<App> {
  // Every line and every credential of the field: a Basic one after a Bearer one is a second method all the same.
  const authorization = authorizationField(request);
  const basic = authorization !== undefined && (usesBasicScheme(authorization) || joinsSeveralCredentials(authorization, usesBasicScheme));
  // A client_secret sent without a value is omitted (RFC 6749 §3.1), as an empty assertion beside a secret is.
  if (basic || hasValue(params, 'client_secret')) {
    throw new OAuthError('invalid_request', 'use one client authentication method: a client assertion, not a secret as well');
  }
  const type = single(params, 'client_assertion_type');
  const assertion = single(params, 'client_assertion');
  if (type !== JWT_BEARER_ASSERTION) {
    throw unauthorizedClient(`client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
  }
  if (assertion === undefined) throw unauthorizedClient('client_assertion is required');
  const clientId = assertionSubject(assertion);
  const bodyClientId = single(params, 'client_id');
  if (bodyClientId !== undefined && bodyClientId !== clientId) {
    throw unauthorizedClient('client_id differs from the subject of the client assertion');
  }
  const app = await context.apps.findApp(accountId, clientId);
  if (app !== null) context.observation?.noteAccount(app.accountId);
  if (app === null || app.accountId !== accountId || app.tokenEndpointAuthMethod !== 'private_key_jwt') {
    throw unauthorizedClient('client authentication failed');
  }
  // The query as the client sent it (what its `aud` copies), and as re-serialised, as accepted before adapters
  // passed the raw one; both name the same parameters.
  const serialised = request.query.toString();
  const queries = request.rawQuery === undefined || request.rawQuery === serialised ? [serialised] : [request.rawQuery, serialised];
  await verifyClientAssertion(context, app, assertion, `${context.config.issuer}${request.path}`, queries);
  return app;
}
