/**
 * Validation of an authorization request (platform-operations.md §4.2, RFC 6749 §4.1.1, RFC 7636 §4.3), in the order that
 * decides how errors are delivered:
 *
 * 1. account unknown → 401 page; `client_id` missing → 400 page; client unknown or of another account → 401 page;
 * 2. `redirect_uri` missing while several are registered, not registered (exact string match, but any port for a
 *    loopback IP URI, `loopback-redirect.ts`), or repeated → 400 page;
 * 3. from here on the redirect URI is trusted: every problem is an {@link AuthorizationError} (302 to the app).
 */
import { isFapi2 } from '../../assurance/fapi2.js';
import type { App } from '../../apps/app.js';
import { defaultMaxAgeProblem } from '../../apps/app-validation.js';
import type { SentinelContext } from '../../http/context.js';
import { isOAuthError, OAuthError, quotedValues } from '../../errors.js';
import type { SentinelRequest } from '../../http/messages.js';
import { single, type ParamMap } from '../../http/params.js';
import { readAuthorizationParams } from './request-params.js';
import { AuthorizationError } from './authorization-error.js';
import { isUsableRegisteredURI, registeredEntryOf } from './registered-uri.js';
import type { RedirectTarget } from './authorization-response.js';
import { readOIDCParams, type OIDCAuthorizationParams } from './oidc-params.js';
import { readDPoPJkt } from '../../dpop/authorize-binding.js';
import { involvesPushedRequest, resolvePushedRequest } from '../../par/resolve.js';
import { isThenable } from '../../lib/thenable.js';
import { noteRequestedLocales } from '../../i18n/page-locale.js';
import { readResources, resourceProblem } from '../../token/resource-indicators.js';
import { claimsWithinAppScope } from '../../token/requested-claims.js';

/** A validated authorization request, as kept in the interaction record while the user signs in. */
export interface AuthorizationRequest extends RedirectTarget, OIDCAuthorizationParams {
  /** Whether the request carried `redirect_uri` (the token request must then repeat it, RFC 6749 §4.1.3). */
  redirectUriInRequest: boolean;
  /**
   * The app's display name for the login page. A client named by its metadata document has its host in it already,
   * beside its self-chosen `client_name` (`apps/client-id-metadata.ts`), so no page can show the name alone.
   */
  clientName?: string | undefined;
  scope?: string | undefined;
  nonce?: string | undefined;
  /** PKCE S256 challenge (RFC 7636). */
  codeChallenge?: string | undefined;
  /** DPoP key thumbprint the code is bound to (RFC 9449 §10 `dpop_jkt`). */
  dpopJkt?: string | undefined;
  /** RFC 8707 resources the code is bound to (`resource`); the token request may name only these. */
  resources?: string[] | undefined;
  /** The app's profile (FAPI 2.0), for what the code of this request may be: at most 60 s of life. */
  profile?: 'fapi2' | undefined;
  /**
   * A public client redirecting to no https URI (a loopback port, a private-use scheme): a native app, whose identity
   * nothing assures, so a session alone does not answer it (RFC 8252 §8.6, prompt.ts `unconsentedClientReason`).
   */
  nativeClient?: true | undefined;
  /**
   * The parameters came from a pushed request (PAR, RFC 9126): its client was authenticated (or, public, counted per
   * address) and its length bounded when it pushed, so its sign-in may park it whole (interaction.ts).
   */
  pushed?: true | undefined;
}

/** RFC 7636 §4.2: BASE64URL(SHA-256(verifier)) is 43 characters without padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 6749 §3.3 scope-token characters. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** Versions of the authorize operation we serve (platform-operations.md §9): 1.0, written as 1, 1.0, 1.00, … */
const SUPPORTED_VERSION = /^1(\.0+)?$/;

/** The scopes an app may be given at the authorization endpoint (its own and `openid`), built once per app object. */
const allowedScopes = new WeakMap<App, ReadonlySet<string>>();

function scopesOf(app: App & { scope: string }): ReadonlySet<string> {
  let allowed = allowedScopes.get(app);
  if (allowed === undefined) {
    allowed = new Set([...app.scope.split(' '), 'openid']);
    allowedScopes.set(app, allowed);
  }
  return allowed;
}

async function findClient(context: SentinelContext, accountId: string, params: ParamMap): Promise<App> {
  const known = context.apps.hasAccount(accountId);
  if (!(isThenable(known) ? await known : known)) {
    throw new OAuthError('invalid_request', 'The account in this link is unknown.', { status: 401 });
  }
  context.observation?.noteAccount(accountId);
  const clientId = single(params, 'client_id');
  if (clientId === undefined) throw new OAuthError('invalid_request', 'The request has no client_id.');
  const found = context.apps.findApp(accountId, clientId);
  const app = isThenable(found) ? await found : found;
  if (app === null || app.accountId !== accountId) {
    throw new OAuthError('invalid_client', 'The application in this link is not registered for this account.', { status: 401 });
  }
  return app;
}

function chooseRedirectURI(app: App, params: ParamMap): { redirectUri: string; inRequest: boolean } {
  const { registered, ...chosen } = registeredRedirectURI(app, params);
  // Registered, but not as every registration path now checks (a host's own AppStore, an older registry row): no
  // browser is sent to a URI it may read as another host. The registered entry is checked (a loopback URI on
  // another port differs from it only by a port its match already checked), so the answers kept per app stay one
  // per registered URI, whatever ports requests name.
  if (!isUsableRegisteredURI(app.redirectUris, registered)) {
    throw new OAuthError('invalid_request', 'The redirect_uri registered for this application is not a valid redirect URI.');
  }
  return chosen;
}

/** The redirect URI of the request, the registered entry it matched, and whether the request named it. */
function registeredRedirectURI(app: App, params: ParamMap): { redirectUri: string; registered: string; inRequest: boolean } {
  const requested = single(params, 'redirect_uri');
  if (requested === undefined) {
    const only = app.redirectUris.length === 1 ? app.redirectUris[0] : undefined;
    if (only === undefined) {
      throw new OAuthError('invalid_request', 'The request must name a redirect_uri, because the application has several.');
    }
    return { redirectUri: only, registered: only, inRequest: false };
  }
  // A loopback URI on another port than registered: the code and the token request then carry the URI as requested,
  // port included (the token endpoint compares with it exactly).
  const registered = registeredEntryOf(app, requested);
  if (registered === undefined) throw new OAuthError('invalid_request', 'The redirect_uri is not registered for this application.');
  return { redirectUri: requested, registered, inRequest: true };
}

/** Reads one parameter after the target is known: repeated or malformed values are redirected errors. */
function readParam(params: ParamMap, name: string, target: RedirectTarget): string | undefined {
  const values = params.get(name);
  if (values === undefined) return undefined;
  if (values === null || values.length > 1) {
    throw new AuthorizationError('invalid_request', `parameter ${name} is given more than once`, target);
  }
  return values[0] === '' ? undefined : values[0];
}

/** The one non-empty `state` of the URL, for an error before the pushed parameters are known; else `undefined`. */
function singleState(params: ParamMap): string | undefined {
  const values = params.get('state');
  return values?.length === 1 && values[0] !== '' ? values[0] : undefined;
}

function checkScope(app: App, scope: string | undefined, target: RedirectTarget): void {
  if (scope === undefined) return;
  const requested = scope.split(' ');
  if (requested.some((token) => !SCOPE_TOKEN.test(token))) {
    throw new AuthorizationError('invalid_request', 'scope must be space-separated scope tokens', target);
  }
  if (app.scope === undefined) return;
  const allowed = scopesOf(app as App & { scope: string });
  const refused = requested.filter((token) => !allowed.has(token));
  if (refused.length > 0) {
    throw new AuthorizationError('invalid_scope', `scope not allowed for this application: ${quotedValues(refused)}`, target);
  }
}

function checkPKCE(context: SentinelContext, app: App, params: ParamMap, target: RedirectTarget): string | undefined {
  const challenge = readParam(params, 'code_challenge', target);
  const method = readParam(params, 'code_challenge_method', target);
  if (challenge === undefined) {
    if (method !== undefined) throw new AuthorizationError('invalid_request', 'code_challenge_method needs a code_challenge', target);
    // RFC 9700 §2.1.1: public clients must use PKCE; confidential ones when the operator requires it.
    if (context.config.pkce === 'required' || app.tokenEndpointAuthMethod === 'none' || isFapi2(app)) {
      throw new AuthorizationError('invalid_request', 'code_challenge (PKCE, S256) is required', target);
    }
    return undefined;
  }
  if (method !== 'S256') {
    throw new AuthorizationError('invalid_request', 'code_challenge_method must be S256 (plain is not supported)', target);
  }
  if (!S256_CHALLENGE.test(challenge)) {
    throw new AuthorizationError('invalid_request', 'code_challenge must be 43 base64url characters (RFC 7636 §4.2)', target);
  }
  return challenge;
}

/**
 * Whether a public client's redirect URI makes it a native app whose identity nothing assures (RFC 8252 §8.6): no
 * https URI (an http one is on a loopback host, where any program may listen; a private-use scheme, which any app may
 * claim), and not on the service's own origin, which only the service holds (the console's callback on an http
 * issuer in development).
 */
function isNativeRedirect(context: SentinelContext, redirectUri: string): boolean {
  if (redirectUri.startsWith('https://')) return false;
  return !redirectUri.startsWith(`${new URL(context.config.issuer).origin}/`);
}

/** RFC 8707 §2: the `resource` values, each one the app may ask for; `invalid_target` goes back to the app. */
function checkResources(context: SentinelContext, app: App, params: ParamMap, target: RedirectTarget): string[] {
  const resources = readResources(params);
  if (typeof resources === 'string') throw new AuthorizationError('invalid_target', resources, target);
  const problem = resourceProblem(context, app, resources);
  if (problem !== null) throw new AuthorizationError('invalid_target', problem, target);
  return resources;
}

/**
 * The parameters a request's `request_uri` stands for (par/resolve.ts). Its refusals go back to the redirect URI of
 * the URL (or the app's only one) with the URL's state; so does a failure of the store while the pushed request is
 * read or taken, as `server_error` with its cause (reported), as every store failure once the redirect URI is known.
 * Without a redirect URI to go back to, the failure is the 500 page it is before that point.
 */
async function pushedParams(context: SentinelContext, app: App, query: ParamMap): Promise<ParamMap> {
  const target = (): RedirectTarget => ({
    accountId: app.accountId,
    clientId: app.clientId,
    redirectUri: chooseRedirectURI(app, query).redirectUri,
    iss: context.accountIssuer(app.accountId),
    // The URL's own state (RFC 6749 §4.1.2.1: an error carries the request's state), unless repeated or empty.
    state: singleState(query),
  });
  try {
    return await resolvePushedRequest(context, app, query, (code, description) => new AuthorizationError(code, description, target()));
  } catch (error) {
    if (isOAuthError(error) && error.code !== 'server_error') throw error;
    let known: RedirectTarget;
    try {
      known = target();
    } catch {
      throw error;
    }
    throw new AuthorizationError('server_error', 'the server could not complete the request', known, error);
  }
}

/**
 * Validates an authorization request: the query of `GET …/authorize`, or the form (and query) of a POST. `shownTo` is
 * the request the edge renders this one's refusals for, when `request` is a copy of it (a parked post's parameters).
 *
 * @example
 * const authorization = await validateAuthorizationRequest(context, request, accountId);
 * @throws OAuthError (400/401, shown as a page) before the redirect URI is trusted; {@link AuthorizationError} after.
 */
export async function validateAuthorizationRequest(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  options: { pushed?: boolean; shownTo?: SentinelRequest } = {},
): Promise<AuthorizationRequest> {
  // The query of a GET, or a POST's form with its query (request-params.ts); an oversized one is refused first.
  const read = readAuthorizationParams(context, request);
  const query = read instanceof Map ? read : await read;
  // The error pages of the request (an unknown client, a redirect URI not registered) speak its ui_locales, posted too.
  const shownTo = options.shownTo ?? request;
  noteRequestedLocales(shownTo, query);
  const app = await findClient(context, accountId, query);
  // PAR (RFC 9126 §4): the pushed parameters replace the URL's; failures go to the app when its redirect URI is known.
  const params = options.pushed === true || !involvesPushedRequest(app, query) ? query : await pushedParams(context, app, query);
  if (params !== query) noteRequestedLocales(shownTo, params);
  const { redirectUri, inRequest } = chooseRedirectURI(app, params);
  const target: RedirectTarget = { accountId, clientId: app.clientId, redirectUri, iss: context.accountIssuer(accountId) };
  // `state` first, so every later error carries it; a repeated state cannot be echoed, so the error goes without one.
  target.state = readParam(params, 'state', target);
  const version = readParam(params, 'v', target);
  if (version !== undefined && !SUPPORTED_VERSION.test(version)) {
    throw new AuthorizationError('invalid_request', 'unsupported version v; this service supports v=1.0', target);
  }
  // An app from a host's own AppStore is not checked on its way in: a default_max_age that is no limit is none.
  const defaultMaxAge = defaultMaxAgeProblem(app.defaultMaxAge) === null ? app.defaultMaxAge : undefined;
  const oidcRead = readOIDCParams(context, (name) => readParam(params, name, target), target, defaultMaxAge);
  const oidc = isThenable(oidcRead) ? await oidcRead : oidcRead;
  const responseType = readParam(params, 'response_type', target);
  if (responseType === undefined) throw new AuthorizationError('invalid_request', 'parameter response_type is required', target);
  if (responseType !== 'code') {
    throw new AuthorizationError('unsupported_response_type', 'response_type must be code', target);
  }
  if (!app.grantTypes.includes('authorization_code')) {
    throw new AuthorizationError('unauthorized_client', 'this application is not registered for the authorization_code grant', target);
  }
  const codeChallenge = checkPKCE(context, app, params, target);
  const scope = readParam(params, 'scope', target);
  checkScope(app, scope, target);
  const nonce = readParam(params, 'nonce', target);
  const dpopJkt = readDPoPJkt(readParam(params, 'dpop_jkt', target), target);
  const resources = checkResources(context, app, params, target);
  // Written out rather than spread from `target` and `oidc`: one object of one shape for every request (the fields
  // and their order are those the spreads gave; an absent `dpopJkt` is left out, as before).
  const authorization: AuthorizationRequest = {
    accountId: target.accountId,
    clientId: target.clientId,
    redirectUri: target.redirectUri,
    iss: target.iss,
    state: target.state,
    prompt: oidc.prompt,
    maxAge: oidc.maxAge,
    idTokenHintSubject: oidc.idTokenHintSubject,
    claimsSubject: oidc.claimsSubject,
    loginHint: oidc.loginHint,
    uiLocales: oidc.uiLocales,
    acr: oidc.acr,
    essentialAcr: oidc.essentialAcr,
    // Only what the app's registered scope could release: the claims parameter is no way around it.
    requestedClaims: claimsWithinAppScope(oidc.requestedClaims, app),
    redirectUriInRequest: inRequest,
    clientName: app.name,
    scope,
    nonce,
    codeChallenge,
  };
  if (dpopJkt !== undefined) authorization.dpopJkt = dpopJkt;
  if (isFapi2(app)) authorization.profile = 'fapi2';
  if (resources.length > 0) authorization.resources = resources;
  if (app.tokenEndpointAuthMethod === 'none' && isNativeRedirect(context, redirectUri)) authorization.nativeClient = true;
  if (params !== query) authorization.pushed = true;
  return authorization;
}
