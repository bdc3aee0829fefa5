/**
 * `createSentinel()`: resolves the options, wires the collaborators, and exposes the service's entry points.
 * `handle()` is the single try/catch at the edge of the core: handlers throw {@link OAuthError}s, anything else
 * becomes `500 server_error` with no detail and goes to `onError`.
 */
import {
  type AccessTokenClaims,
  type KnownLive,
  verifyAccessToken as verifyToken,
  verifyCachedAccessToken,
  type VerifyAccessTokenOptions,
} from './access-token.js';
import { bearerCandidate, parseAuthorization, PLAIN_BEARER, withoutProof } from './bearer.js';
import {
  generateClientId,
  generateClientSecret,
  hashClientSecret,
  MemoryAppStore,
  type App,
  type GrantType,
  type TokenEndpointAuthMethod,
} from './apps.js';
import { withBodyDeadline } from './body-read.js';
import { appFromInput, resolveConfig, type ResolvedConfig, type SentinelOptions } from './config.js';
import { attachContext, createContext, requestContext } from './context.js';
import { isAuthorizationError } from './authorize/authorization-error.js';
import { completeLogin as completeInteraction, type CompleteLoginInput } from './authorize/complete-login.js';
import { renderErrorPage } from './authorize/error-page.js';
import { ConfigurationError, isOAuthError, OAuthError } from './errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from './http.js';
import { loadKeys, type JWK } from './keys.js';
import { AccountRings, accountOfToken } from './keyring/per-account.js';
import { KeyRing, kidOf, ringTimings, type RingKeyInfo } from './keyring/ring.js';
import { checkIDTokenKeys } from './token/id-token-keys.js';
import { presentationOf, type ResourceRequest } from './dpop/resource.js';
import { createRouter, type Match, type Route } from './router.js';
import { ROUTES } from './routes.js';
import { MemoryStore } from './stores/memory.js';
import { telemetryActive } from './telemetry/instruments.js';
import type { RequestObservation } from './telemetry/request-observation.js';
import { observeRequest } from './telemetry/request-span.js';
import { traceStore } from './telemetry/traced-store.js';
import { createRevocationCheck } from './token/grants.js';
import { appPresence } from './app-presence.js';
import { assertRegistrationStore } from './registration/options.js';

/**
 * Input of `sentinel.registerApp()`: the client metadata of RFC 7591 §2 the service keeps (redirect URIs, grant
 * types, token endpoint auth method, name, scope); the client id and secret are generated. Validated and defaulted
 * exactly as an `apps` entry: `grantTypes` defaults to all three (`authorization_code` and `refresh_token` for a
 * public client).
 *
 * @example
 * const input: RegisterAppInput = { accountId: '123456', redirectUris: ['https://app.example.com/cb'], grantTypes: ['authorization_code'] };
 */
export interface RegisterAppInput {
  accountId: string;
  redirectUris?: readonly string[];
  grantTypes?: readonly GrantType[];
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  name?: string;
  scope?: string;
}

/**
 * Result of `sentinel.registerApp()` (the RFC 7591 §3.2.1 information response): the secret is shown once and
 * stored only as its hash.
 *
 * @example
 * const { clientId, clientSecret } = await sentinel.registerApp({ accountId: '123456' });
 * deliverToApplication(clientId, clientSecret); // it cannot be shown again
 */
export interface RegisterAppResult {
  clientId: string;
  /** Absent for public clients. */
  clientSecret?: string | undefined;
  clientSecretHash?: string | undefined;
  app: App;
}

/**
 * Outcome of a bearer check: the verified claims, or the 401 with `WWW-Authenticate: Bearer` to send (RFC 6750 §3).
 *
 * @example
 * const result = await sentinel.checkBearer(req.headers.authorization, { accountId, consumerId });
 * if (!result.ok) return send(result.response);
 * use(result.claims.sub);
 */
export type BearerResult = { ok: true; claims: AccessTokenClaims } | { ok: false; response: SentinelResponse };

/**
 * The service: the authorization server of RFC 6749 (authorization and token endpoints, §3) with the platform's
 * consumer-bound token (§4.1), and the checks a resource server makes on its tokens (RFC 6750, RFC 9068 §4).
 *
 * @example
 * const sentinel: Sentinel = createSentinel(options);
 * const claims = await sentinel.verifyAccessToken(token, { accountId: '123456', consumerId });
 */
export interface Sentinel {
  /** The validated configuration. */
  readonly config: ResolvedConfig;
  /** Handles one request; `null` when the path is not the service's (call the host's next handler). */
  handle(request: SentinelRequest): Promise<SentinelResponse | null>;
  /** Verifies an access token issued by this service; throws an `invalid_token` {@link OAuthError} otherwise. */
  verifyAccessToken(token: string, options?: VerifyAccessTokenOptions): Promise<AccessTokenClaims>;
  /**
   * Checks an `Authorization` header value for a valid Bearer or DPoP-bound token (RFC 6750, RFC 9449); adapters'
   * `requireAccessToken` use it, passing the `resource` request (method, URL, headers) so a DPoP proof can be checked.
   * When the store cannot be read to check a user token's grant or a proof's `jti`, the result is a `503` (never a
   * thrown error) and the cause goes to `onError` with route `bearer`.
   */
  checkBearer(authorization: string | undefined, options?: VerifyAccessTokenOptions, resource?: ResourceRequest): Promise<BearerResult>;
  /** Registers an application at runtime; the returned secret is shown once. */
  registerApp(input: RegisterAppInput): Promise<RegisterAppResult>;
  /** The public JWKS. */
  jwks(): { keys: JWK[] };
  /**
   * Resolves once the signing keys are loaded: with `keyRotation`, the shared ring is read from the store (and
   * created when empty). Await it before listening, so that a wrong `encryptionKey` stops the start.
   * @example await sentinel.ready(); app.listen(3000);
   */
  ready(): Promise<void>;
  /**
   * Starts a key rotation now (`keyRotation` only): a new key is published at once and signs after
   * `prePublishSeconds`, on every instance. A rotation already under way is not doubled.
   * @example const ring = await sentinel.rotateKeys();
   */
  rotateKeys(): Promise<RingKeyInfo[]>;
  /**
   * Emergency revocation (`keyRotation` only): the key leaves the JWKS at once and every instance refuses its
   * tokens within `refreshSeconds`; if it was signing, its successor signs from now on. `false` for an unknown kid.
   * @example await sentinel.revokeKey('Tq1y…');
   */
  revokeKey(kid: string): Promise<boolean>;
  /**
   * Ends an external login (`login.url`): the host has signed the user in its own way; the answer is the 303 that
   * sends the browser back to the application with a code (or an error page for an unknown or expired interaction).
   * @example sendSentinelResponse(res, await sentinel.completeLogin(req.query.interaction, { userId: user.id }))
   */
  completeLogin(interactionId: string, user: CompleteLoginInput): Promise<SentinelResponse>;
}

/** Errors a protected resource answers with 401 (RFC 6750 §3.1, RFC 9449 §7.1). */
const RESOURCE_ERRORS = new Set(['invalid_token', 'invalid_dpop_proof', 'use_dpop_nonce']);

function serverError(): SentinelResponse {
  return noStoreJSON(500, { error: 'server_error', error_description: 'the server could not complete the request' });
}

/** What a bearer guard answers when the token cannot be checked right now (the store failed). */
function bearerUnavailable(): SentinelResponse {
  return noStoreJSON(503, { error: 'server_error', error_description: 'the access token could not be checked' }, { 'retry-after': '1' });
}

function renderJSONError(error: OAuthError): SentinelResponse {
  return noStoreJSON(error.status, error.toJSON(), { ...error.headers });
}

function bearerChallenge(error: OAuthError | undefined): SentinelResponse {
  // DPoP failures carry their own `WWW-Authenticate: DPoP` challenge (and maybe a DPoP-Nonce).
  if (error?.headers['www-authenticate'] !== undefined) return noStoreJSON(401, error.toJSON(), { ...error.headers });
  const challenge =
    error === undefined
      ? 'Bearer realm="sentinel"'
      : `Bearer realm="sentinel", error="${error.code}", error_description="${error.description.replace(/["\\]/g, '')}"`;
  const body = error === undefined ? { error: 'invalid_token', error_description: 'a Bearer access token is required' } : error.toJSON();
  return noStoreJSON(401, body, { 'www-authenticate': challenge });
}

/**
 * Creates the identity and token service: the endpoints of RFC 6749 §3 (authorization code §4.1, refresh §6), the
 * platform-operations.md §4.1 consumer-bound client credentials, RFC 7009 revocation, RFC 7662 introspection and RFC 8414 metadata.
 *
 * @example
 * const sentinel = createSentinel({
 *   issuer: 'https://id.example.com',
 *   apps: [{ accountId: '123456', clientId, clientSecret, redirectUris: ['https://app.example.com/cb'] }],
 *   users: { authenticate: async ({ username, password }) => (await check(username, password)) ? { id: username } : null },
 *   keys: [privateJwk],
 * });
 * app.use(toExpress(sentinel));
 * @throws ConfigurationError naming the wrong option.
 */
export function createSentinel(options: SentinelOptions): Sentinel {
  const config = resolveConfig(options);
  const warn = config.logger?.warn.bind(config.logger) ?? ((message: string) => console.warn(message));
  if (config.keyRotation !== undefined && config.keys !== undefined) {
    throw new ConfigurationError('keys', 'give keys or keyRotation, not both (the ring generates its own keys)');
  }
  // Whatever store is configured is observed through a decorator (spans and store metrics), never changed.
  const store = traceStore(config.store ?? new MemoryStore());
  const reportRing = (error: unknown): void => {
    try {
      config.onError?.(error, { route: 'key-ring' });
    } catch {
      // A throwing onError must not turn a background refresh into an unhandled rejection.
    }
  };
  const timings = config.keyRotation === undefined ? undefined : ringTimings(config.keyRotation, config);
  const ring =
    config.keyRotation === undefined || timings === undefined ? undefined : new KeyRing(config.keyRotation, store, timings, reportRing);
  if (config.keysPerAccount && ring === undefined) {
    throw new ConfigurationError('keysPerAccount', 'needs keyRotation: each account gets its own key ring');
  }
  const accountRings =
    config.keysPerAccount && ring !== undefined && config.keyRotation !== undefined && timings !== undefined
      ? new AccountRings(config.keyRotation, store, timings, reportRing, ring)
      : undefined;
  const keys = ring === undefined ? loadKeys(config.keys, warn) : (accountRings?.keys ?? ring.keys);
  // Load the ring as the service starts; a failure here is reported by ready() and retried by the first request.
  ring?.ready().catch(() => {});
  checkIDTokenKeys(config, config.keyRotation?.algorithms ?? [keys.signer.alg, ...keys.byAlg.keys()], warn);
  const apps = config.appStore ?? new MemoryAppStore(config.apps);
  if (config.appStore !== undefined && config.apps.length > 0) {
    throw new ConfigurationError('apps', 'give apps or appStore, not both (add the apps to your AppStore)');
  }
  if (config.registration !== undefined) assertRegistrationStore(apps);
  const context = createContext({ config, keys, store, apps });
  const match = createRouter(ROUTES, config.basePath);
  const bodyTimeoutMs = Math.ceil(config.bodyTimeout * 1000);

  function report(error: unknown, route: Route, accountId: string | undefined): void {
    try {
      config.onError?.(error, { route: route.name, accountId });
    } catch {
      // A throwing onError must not turn a clean 500 into a crash of the host.
    }
  }

  const identifiers = config.telemetry.identifiersInMetrics;

  async function handle(request: SentinelRequest): Promise<SentinelResponse | null> {
    const found = match(request);
    if (found === null) return null;
    if (found.route.observed === false || !telemetryActive()) return dispatch(found, request);
    return observeRequest(found.route, found.params, request, identifiers, (observation) => dispatch(found, request, observation));
  }

  async function dispatch(found: Match, request: SentinelRequest, observation?: RequestObservation): Promise<SentinelResponse> {
    const { route, params } = found;
    // The request's own context: its events carry this request's client address and id.
    const scoped = requestContext(context, request, observation);
    const render = (error: OAuthError): SentinelResponse => {
      observation?.fail(error.code);
      return route.renderError === undefined ? renderJSONError(error) : route.renderError(scoped, request, error);
    };
    if (!found.allowed) {
      const error = new OAuthError('invalid_request', `method ${request.method} is not allowed here`, {
        status: 405,
        headers: { allow: found.allow },
      });
      return render(error);
    }
    // A lazy body gets its own deadline, so a trickled body is answered 408 instead of held for the host's timeout.
    const body = request.body;
    const timed = typeof body === 'function' ? { ...request, body: withBodyDeadline(body, bodyTimeoutMs) } : request;
    try {
      const keysLoaded = ring?.fresh();
      if (keysLoaded !== undefined) await keysLoaded;
      // Per-account keys only for accounts that exist: a request naming a made-up account must not create a ring.
      const accountId = params.accountId;
      if (accountRings !== undefined && accountId !== undefined && (await apps.hasAccount(accountId))) {
        return await accountRings.run(accountRings.ring(accountId), () => route.handler(scoped, timed, params));
      }
      return await route.handler(scoped, timed, params);
    } catch (error) {
      if (isOAuthError(error) && error.code !== 'server_error') {
        if (route.deniedEvent !== undefined) {
          try {
            scoped.emit(route.deniedEvent(scoped, request, params, error));
          } catch (hookError) {
            report(hookError, route, params.accountId);
            observation?.fail('server_error');
            return serverError();
          }
        }
        return render(error);
      }
      report(isOAuthError(error) && error.cause !== undefined ? error.cause : error, route, params.accountId);
      try {
        // After the redirect URI is validated, internal failures too go back to the app (RFC 6749 §4.1.2.1).
        const failure = isAuthorizationError(error) ? error : new OAuthError('server_error', 'the server could not complete the request');
        return render(failure);
      } catch (renderError) {
        report(renderError, route, params.accountId);
        observation?.fail('server_error');
        return serverError();
      }
    }
  }

  async function completeLogin(interactionId: string, user: CompleteLoginInput): Promise<SentinelResponse> {
    const loginRoute = { name: 'complete-login' } as Route;
    // No browser request here: the error page renders as HTML, which is what the host forwards to the browser.
    const browser: SentinelRequest = { method: 'GET', path: '', query: new URLSearchParams(), headers: {} };
    try {
      return await completeInteraction(context, interactionId, user);
    } catch (error) {
      if (isOAuthError(error) && error.code !== 'server_error') return renderErrorPage(context, browser, error);
      report(isOAuthError(error) && error.cause !== undefined ? error.cause : error, loginRoute, undefined);
      return renderErrorPage(context, browser, new OAuthError('server_error', 'the server could not complete the request'));
    }
  }

  // User tokens (with a grant id) are checked against revocations; consumer-bound tokens stay store-free.
  // Tokens of a deleted app fail the guard too (within the presence cache's TTL, at once on this instance).
  const isGrantRevoked = createRevocationCheck(context);
  const presence = appPresence(context);
  const issuerPrefix = context.accountIssuer('');
  const isRevoked = async (claims: AccessTokenClaims): Promise<boolean> =>
    (await isGrantRevoked(claims)) || (await presence.isGone(decodeURIComponent(claims.iss.slice(issuerPrefix.length)), claims.client_id));

  async function verifyWithRing(target: KeyRing, token: string, verifyOptions: VerifyAccessTokenOptions): Promise<AccessTokenClaims> {
    const keysLoaded = target.fresh();
    if (keysLoaded !== undefined) await keysLoaded;
    try {
      return await verifyToken(context, token, verifyOptions, isRevoked);
    } catch (error) {
      // A kid this instance does not know may be a key another instance just created (after a revocation): reload
      // once, rate-limited, and decide again.
      const kid = isOAuthError(error) && error.code === 'invalid_token' ? kidOf(token) : undefined;
      if (kid === undefined || keys.byKid.has(kid) || !(await target.refreshForUnknownKid())) throw error;
      return verifyToken(context, token, verifyOptions, isRevoked);
    }
  }

  async function verifyAccessToken(token: string, verifyOptions: VerifyAccessTokenOptions = {}): Promise<AccessTokenClaims> {
    if (ring === undefined) return verifyToken(context, token, verifyOptions, isRevoked);
    if (accountRings !== undefined) {
      const accountId = verifyOptions.accountId ?? accountOfToken(token, context.accountIssuer(''));
      if (accountId !== undefined && (await apps.hasAccount(accountId))) {
        const target = accountRings.ring(accountId);
        return accountRings.run(target, () => verifyWithRing(target, token, verifyOptions));
      }
    }
    return verifyWithRing(ring, token, verifyOptions);
  }

  function requireRing(method: string): KeyRing {
    if (ring === undefined) throw new ConfigurationError('keyRotation', `${method} needs the keyRotation option`);
    return ring;
  }

  // The guard's synchronous hit path asks the presence cache only; an app it does not know takes the full path.
  const isKnownLive: KnownLive = (accountId, clientId) => presence.isKnownPresent(accountId, clientId);

  async function checkBearer(
    authorization: string | undefined,
    verifyOptions: VerifyAccessTokenOptions = {},
    resource?: ResourceRequest,
  ): Promise<BearerResult> {
    try {
      // A token verified before, presented as Bearer without a proof, with no key reload due: answered from the
      // verified-token cache without a promise (every check that can change still runs, src/access-token.ts).
      const candidate = bearerCandidate(authorization);
      if (candidate !== undefined && withoutProof(resource) && verifyOptions.dpop === undefined && keysSettled()) {
        const claims = verifyCachedAccessToken(context, candidate, { ...verifyOptions, dpop: PLAIN_BEARER }, isKnownLive);
        if (claims !== undefined) return { ok: true, claims };
      }
    } catch (error) {
      return refusal(error, verifyOptions);
    }
    const found = authorization === undefined ? null : parseAuthorization(authorization);
    if (found === null) {
      return {
        ok: false,
        response:
          authorization === undefined
            ? bearerChallenge(undefined)
            : bearerChallenge(new OAuthError('invalid_token', 'the Authorization header must be "Bearer <token>"', { status: 401 })),
      };
    }
    try {
      const { scheme, token } = found;
      // Without the resource request a DPoP presentation has no proof to check, and a bound token is refused; a
      // Bearer presentation without a DPoP header needs nothing of the request.
      const dpop =
        resource === undefined
          ? { scheme, method: '', url: '' }
          : scheme === 'Bearer' && withoutProof(resource)
            ? PLAIN_BEARER
            : presentationOf(context, scheme, resource);
      return { ok: true, claims: await verifyAccessToken(token, { ...verifyOptions, dpop: verifyOptions.dpop ?? dpop }) };
    } catch (error) {
      return refusal(error, verifyOptions);
    }
  }

  function refusal(error: unknown, verifyOptions: VerifyAccessTokenOptions): BearerResult {
    if (isOAuthError(error) && RESOURCE_ERRORS.has(error.code)) return { ok: false, response: bearerChallenge(error) };
    // The grant could not be read (store down): the token is neither accepted nor called invalid. The cause goes
    // to onError like every other store failure, and every adapter sends the same stack-free 503.
    report(error, { name: 'bearer' } as Route, verifyOptions.accountId);
    return { ok: false, response: bearerUnavailable() };
  }

  /** True when the keys in use need no (re)load first: no ring, or a single ring loaded recently. */
  function keysSettled(): boolean {
    return ring === undefined || (accountRings === undefined && ring.fresh() === undefined);
  }

  async function registerApp(input: RegisterAppInput): Promise<RegisterAppResult> {
    if (apps.saveApp === undefined) {
      throw new ConfigurationError('appStore', 'registerApp() needs an AppStore with saveApp()');
    }
    const isPublic = input.tokenEndpointAuthMethod === 'none';
    const clientSecret = isPublic ? undefined : generateClientSecret();
    const clientSecretHash = clientSecret === undefined ? undefined : hashClientSecret(clientSecret);
    // The same validation and defaults as an `apps` entry (README, options table): grant types default to all three.
    const app = appFromInput(
      {
        accountId: input.accountId,
        clientId: generateClientId(),
        clientSecretHash,
        redirectUris: input.redirectUris,
        grantTypes: input.grantTypes,
        tokenEndpointAuthMethod: input.tokenEndpointAuthMethod,
        name: input.name,
        scope: input.scope,
      },
      'app',
    );
    await apps.saveApp(app);
    return { clientId: app.clientId, clientSecret, clientSecretHash, app };
  }

  const sentinel: Sentinel = {
    config,
    handle,
    verifyAccessToken,
    checkBearer,
    registerApp,
    completeLogin,
    jwks: () => structuredClone(keys.jwks),
    ready: async () => {
      await ring?.ready();
    },
    rotateKeys: () => requireRing('rotateKeys()').rotate(),
    revokeKey: (kid) => requireRing('revokeKey()').revoke(kid),
  };
  attachContext(sentinel, context);
  return sentinel;
}
