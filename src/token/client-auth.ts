/**
 * Client authentication at the token endpoints (RFC 6749 §2.3): client_secret_basic, client_secret_post, or none
 * for public clients. One method per request; credentials never in the URL.
 */
import { assertFapi2Servable, isFapi2 } from '../assurance/fapi2.js';
import { appIdTokenAlg, idTokenKey } from './id-token.js';
import { verifyAppSecret, verifyClientSecret } from '../apps/client-secrets.js';
import type { App } from '../apps/app.js';
import { authenticateWithAssertion, hasClientAssertion } from '../client-assertion/authenticate.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError, unauthorizedClient } from '../errors.js';
import type { SentinelRequest } from '../http/messages.js';
import { single, type ParamMap } from '../http/params.js';
import { isThenable } from '../lib/thenable.js';
import { usesBasicScheme } from '../http/authorization-scheme.js';
import { authorizationField, joinsSeveralCredentials, SEVERAL_CREDENTIALS } from '../http/authorization-field.js';

/** Credentials as the client presented them. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string | undefined;
  method: 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';
}

/** Refuses credentials sent in the query string: a URL ends up in logs, histories and Referer headers. */
export function refuseSecretsInQuery(query: URLSearchParams): void {
  if (query.has('client_secret')) {
    throw new OAuthError(
      'invalid_request',
      'client_secret must not be sent in the URL; send it in the form body or an Authorization: Basic header',
    );
  }
}

/**
 * The answer to a Basic header whose credentials do not read as `id:secret`: the client tried to authenticate through
 * the header and failed, so RFC 6749 §5.2 asks for 401 with the Basic challenge, as for an empty or a wrong one.
 */
function malformedBasic(): OAuthError {
  return unauthorizedClient('the Authorization: Basic header is malformed');
}

function decodeFormComponent(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw malformedBasic();
  }
}

/** RFC 7235 §2.1 `token68`, the form Basic credentials take (RFC 7617 §2): base64 text and nothing else. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Refuses an `Authorization` field that carries a Basic credential beside another (two header lines, or one line
 * with a comma, which no credential contains): RFC 6749 §5.2's `invalid_request` for multiple credentials. Reading
 * only the first would authenticate the client by whichever line a proxy or framework happened to put first.
 */
function refuseSeveralCredentials(authorization: string): void {
  if (joinsSeveralCredentials(authorization, usesBasicScheme)) {
    throw new OAuthError('invalid_request', SEVERAL_CREDENTIALS);
  }
}

/** Reads client credentials from the Authorization header or the form body. */
export function readClientCredentials(request: SentinelRequest, params: ParamMap): ClientCredentials | null {
  const authorization = authorizationField(request);
  const bodyClientId = single(params, 'client_id');
  const bodySecret = single(params, 'client_secret');
  if (authorization !== undefined) refuseSeveralCredentials(authorization);
  if (authorization !== undefined && usesBasicScheme(authorization)) {
    if (bodySecret !== undefined) {
      throw new OAuthError('invalid_request', 'use one client authentication method: HTTP Basic or client_secret in the body, not both');
    }
    const encoded = authorization.slice(5).trim();
    // RFC 6749 §5.2: the client tried to authenticate through the header, so no credentials in it is a failed
    // authentication (401 with the Basic challenge), not a request without any that a body client_id could carry.
    if (encoded === '') throw unauthorizedClient('the Authorization: Basic header carries no credentials');
    // Buffer's base64 decoder skips what is not base64 and stops at padding: text after the credentials would be
    // ignored, or decoded into the secret, instead of refused.
    if (!TOKEN68.test(encoded)) throw malformedBasic();
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw malformedBasic();
    // RFC 6749 §2.3.1: id and secret are form-encoded before Basic encoding.
    const clientId = decodeFormComponent(decoded.slice(0, colon));
    const clientSecret = decodeFormComponent(decoded.slice(colon + 1));
    if (bodyClientId !== undefined && bodyClientId !== clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body differs from the one in the Authorization header');
    }
    return { clientId, clientSecret, method: 'client_secret_basic' };
  }
  if (bodyClientId === undefined) return null;
  return {
    clientId: bodyClientId,
    clientSecret: bodySecret,
    method: bodySecret === undefined ? 'none' : 'client_secret_post',
  };
}

/** The `invalid_client` error for a failed authentication, shaped by the method the client tried (RFC 6749 §5.2). */
export function invalidClient(method: ClientCredentials['method'] | undefined): OAuthError {
  return method === 'client_secret_basic'
    ? unauthorizedClient('client authentication failed')
    : new OAuthError('invalid_client', 'client authentication failed');
}

/**
 * Authenticates the client of a token request in `accountId`. Unknown client, wrong secret and an app of another
 * account all fail the same way, after the same digest comparison.
 */
export async function authenticateClient(
  context: SentinelContext,
  accountId: string,
  request: SentinelRequest,
  params: ParamMap,
  options: { allowPublic: boolean },
): Promise<{ app: App; credentials: ClientCredentials }> {
  if (hasClientAssertion(params)) {
    const app = await authenticateWithAssertion(context, accountId, request, params);
    // The only way a fapi2 app authenticates: the profile's signatures are checked once it is known.
    if (isFapi2(app)) {
      assertFapi2Servable(app, context.keys.signer, idTokenKey(context, appIdTokenAlg(context, app)), context.config.dpop.algorithms);
    }
    return { app, credentials: { clientId: app.clientId, clientSecret: undefined, method: 'private_key_jwt' } };
  }
  const credentials = readClientCredentials(request, params);
  if (credentials === null) {
    throw new OAuthError('invalid_client', 'client authentication is required (client_id and client_secret)');
  }
  const found = context.apps.findApp(accountId, credentials.clientId);
  const app = isThenable(found) ? await found : found;
  if (app !== null) context.observation?.noteAccount(app.accountId);
  if (credentials.method === 'none') {
    // The account is checked here as on the secret path: a host's findApp that answered by client id alone would
    // otherwise let a public client of one account redeem at another's token endpoint.
    if (app !== null && app.accountId === accountId && app.tokenEndpointAuthMethod === 'none' && !isFapi2(app) && options.allowPublic) {
      return { app, credentials };
    }
    // A confidential client that forgot its secret, or an unknown client: same answer.
    verifyClientSecret('', undefined);
    throw invalidClient(credentials.method);
  }
  // Retiring secrets count until they expire (secret rotation); a private_key_jwt app has no secret to present.
  const ok = verifyAppSecret(credentials.clientSecret ?? '', app);
  if (
    app === null ||
    !ok ||
    app.accountId !== accountId ||
    app.tokenEndpointAuthMethod === 'none' ||
    app.tokenEndpointAuthMethod === 'private_key_jwt' ||
    // FAPI 2.0: private_key_jwt only, whatever the registry says of the method.
    isFapi2(app)
  ) {
    throw invalidClient(credentials.method);
  }
  return { app, credentials };
}
