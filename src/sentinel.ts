/**
 * `createSentinel()`: resolves the options, wires the collaborators, and exposes the service's entry points.
 * `handle()` and `completeLogin()` run inside the one edge of the core (`edge.ts`): handlers throw OAuthErrors,
 * anything else becomes `500 server_error` with no detail and goes to `onError`.
 */
import type { VerifyAccessTokenOptions } from './guard/access-token-jwt.js';
import type { AccessTokenClaims } from './token/access-token.js';
import { ClientIdMetadataResolver } from './apps/client-id-metadata.js';
import { withClientIdMetadataDocuments } from './apps/resolving-app-store.js';
import { completeExternalLogin, type CompleteLoginInput } from './authorize/endpoints/external-login.js';
import { interactionView, type InteractionView } from './authorize/state/interaction-view.js';
import { createBearerCheck, type BearerResult } from './guard/bearer-check.js';
import { resolveConfig, type ResolvedConfig, type SentinelOptions } from './config.js';
import {
  appRegistry,
  assertAppLogoutTargets,
  assertAppsOrAppStore,
  checkFapi2ProofAlgorithms,
  checkFapi2Signing,
  checkIDTokenAlgorithms,
  checkRegistrationStore,
  warnShortClientSecrets,
  warnIpRelyingParty,
} from './config/startup-checks.js';
import { attachContext, createContext } from './http/context.js';
import type { ResourceRequest } from './dpop/resource.js';
import { createEdge, failureReport } from './http/edge.js';
import { ConfigurationError, OAuthError } from './errors.js';
import type { SentinelRequest, SentinelResponse } from './http/messages.js';
import type { JWK } from './keys/signing-keys.js';
import type { RingKeyInfo } from './keys/keyring/describe.js';
import type { KeyRing } from './keys/keyring/ring.js';
import { keyReloadingVerify, setUpKeys } from './keys/keyring/service-keys.js';
import { registerApp, type RegisterAppInput, type RegisterAppResult } from './apps/register-app.js';
import { createRouter } from './http/router.js';
import { COMPLETE_LOGIN, ROUTES } from './http/routes.js';
import { MemoryStore } from './stores/memory.js';
import { telemetryActive } from './telemetry/instruments.js';
import { observeRequest } from './telemetry/request-span.js';
import { traceStore } from './telemetry/traced-store.js';
import { createAccessTokenVerifier } from './guard/access-token-verifier.js';
import { withKnownBearerOptions, withKnownVerifyOptions } from './guard/verify-options.js';
import { sessionMethods } from './sessions/session-methods.js';
import { assertLogoutTarget } from './sessions/logout-target.js';
import type { SessionInfo, UserAppGrants } from './sessions/session-views.js';
import { LogoutDeliveryWorker } from './logout/delivery-worker.js';
import { witnessReplayEpoch } from './stores/replay-epoch.js';
import {
  createProtectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataOptions,
} from './guard/protected-resource-metadata.js';

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
  /**
   * Verifies an access token issued by this service; throws an `invalid_token` `OAuthError` otherwise.
   *
   * Unlike `checkBearer`, it answers with an error, not a response, and most `invalid_token` errors (expired,
   * malformed, revoked, foreign) carry no `WWW-Authenticate`: the verifier does not know the scheme the token came
   * in. Only the errors of a DPoP presentation (`invalid_dpop_proof`, `use_dpop_nonce`, a bound token sent as Bearer
   * or an unbound one as DPoP), the RFC 9470 step-up refusals (`insufficient_user_authentication`) and the `scopes`
   * refusal (`insufficient_scope`, status 403) carry their challenge in `error.headers`. A host that builds its own 401 from the others must write the challenge itself,
   * in the scheme the request used (RFC 6750 §3, RFC 9449 §7.1); `checkBearer` does all of this.
   *
   * @example
   * try {
   *   claims = await sentinel.verifyAccessToken(token, { accountId, consumerId });
   * } catch (error) {
   *   if (!isOAuthError(error)) throw error;
   *   const params = `error="${error.code}", error_description="${error.toJSON().error_description}"`;
   *   const challenge = error.headers['www-authenticate'] ?? `Bearer realm="api", ${params}`;
   *   response.status(error.status).set({ ...error.headers, 'WWW-Authenticate': challenge }).json(error.toJSON());
   * }
   */
  verifyAccessToken(token: string, options?: VerifyAccessTokenOptions): Promise<AccessTokenClaims>;
  /**
   * Checks an `Authorization` header value for a valid Bearer or DPoP-bound token (RFC 6750, RFC 9449); adapters'
   * `requireAccessToken` use it, passing the `resource` request (method, URL, headers) so a DPoP proof can be checked.
   * When the store cannot be read to check a user token's grant or a proof's `jti`, the result is a `503` (never a
   * thrown error) and the cause goes to `onError` with route `bearer`. It rejects only for a setup error (a
   * `ConfigurationError`: an unknown option, malformed `scopes`, or a `resource` whose metadata was never built and
   * whose account nothing else names). A valid token lacking one of `scopes` is answered 403 `insufficient_scope`.
   */
  checkBearer(authorization: string | undefined, options?: VerifyAccessTokenOptions, resource?: ResourceRequest): Promise<BearerResult>;
  /**
   * The protected resource metadata (RFC 9728) of a resource this service issues tokens for, e.g. an MCP server:
   * the document, its well-known URL and path, and the response to serve there. The adapters'
   * `protectedResourceMetadata(sentinel, options)` serve it. From then on a check with the same `resource` accepts
   * only the tokens of the account the document names (RFC 9068 §4).
   */
  protectedResourceMetadata(options: ProtectedResourceMetadataOptions): ProtectedResourceMetadata;
  /** Registers an application at runtime; the returned secret is shown once. */
  registerApp(input: RegisterAppInput): Promise<RegisterAppResult>;
  /**
   * The public JWKS (RFC 7517), as the service's own `jwks_uri` serves it. With `keyRotation`, it answers from the
   * ring this instance holds and, when that is older than half of `refreshSeconds`, starts reloading it in the
   * background (a failure goes to `onError`, route `key-ring`): a host that calls it now and then sees a revoked
   * key leave, or a pre-published key appear, from its next call on. {@link Sentinel.jwksAsync} waits for the
   * reload instead, so its answer is never older than `refreshSeconds`. With `keysPerAccount` this is the shared
   * ring's set, which signs no account's tokens: an account's is `jwksAsync({ accountId })`.
   * @example app.get('/keys', (req, res) => res.json(sentinel.jwks()));
   */
  jwks(): { keys: JWK[] };
  /**
   * The public JWKS (RFC 7517), from a key ring never older than `refreshSeconds` (`keyRotation`; reloaded first
   * when it is): the same answer the service's own `jwks_uri` gives. Prefer it to {@link Sentinel.jwks} to serve
   * the JWKS from a route of your own. Rejects when the ring cannot be read from the store (answer 500 then).
   * `{ accountId }`: what that account's `jwks_uri` serves (its own ring with `keysPerAccount`); rejects with a 404
   * `OAuthError` for an account the registry does not know, and makes no ring for it.
   * @example app.get('/keys', async (req, res) => res.json(await sentinel.jwksAsync()));
   * @example app.get('/:account/keys', async (req, res) => res.json(await sentinel.jwksAsync({ accountId: req.params.account })));
   */
  jwksAsync(options?: { accountId?: string | undefined }): Promise<{ keys: JWK[] }>;
  /**
   * Resolves once the signing keys are loaded: with `keyRotation`, the shared ring is read from the store (and
   * created when empty). Await it before listening, so that a wrong `encryptionKey` stops the start. The store is
   * checked too (a RedisStore whose Redis may evict keys is reported to `logger.warn`), and its replay epoch read, so
   * that this instance sees the store lose its replay markers from the start (docs/store-design.md).
   * @example await sentinel.ready(); app.listen(3000);
   */
  ready(): Promise<void>;
  /**
   * Starts a key rotation now (`keyRotation` only): a new key is published at once and signs after
   * `prePublishSeconds`, on every instance. A rotation already under way is not doubled.
   * With `keysPerAccount`, `{ accountId }` rotates that account's own ring instead of the shared one.
   * @example const ring = await sentinel.rotateKeys();
   */
  rotateKeys(options?: { accountId?: string | undefined }): Promise<RingKeyInfo[]>;
  /**
   * Emergency revocation (`keyRotation` only): the key leaves the JWKS at once and every instance refuses its
   * tokens within `refreshSeconds`; if it was signing, its successor signs from now on. `false` for an unknown kid.
   * With `keysPerAccount`, `{ accountId }` revokes in that account's own ring instead of the shared one.
   * @example await sentinel.revokeKey('Tq1y…');
   */
  revokeKey(kid: string, options?: { accountId?: string | undefined }): Promise<boolean>;
  /**
   * Ends an external login (`login.url`): the host has signed the user in its own way; the answer is the 303 that
   * sends the browser back to the application with a code (or an error page for an unknown or expired interaction).
   * @example sendSentinelResponse(res, await sentinel.completeLogin(req.query.interaction, { userId: user.id }))
   */
  completeLogin(interactionId: string, user: CompleteLoginInput): Promise<SentinelResponse>;
  /**
   * What an open interaction asks of the sign-in, for a host's own login page (`login.url`): `prompt`, `maxAge`,
   * `acr`, `loginHint`, `uiLocales` and when the request arrived. `null` when the interaction is unknown, expired or
   * completed. `completeLogin()` answers `login_required` for a sign-in older than the request under `prompt=login`,
   * or `maxAge` seconds old or older, so sign the user in again first.
   * @example
   * const view = await sentinel.interaction(String(req.query.interaction));
   * if (view?.prompt?.includes('login') || (view?.maxAge !== undefined && now - user.authTime >= view.maxAge)) return askPasswordAgain(req, res);
   */
  interaction(interactionId: string): Promise<InteractionView | null>;
  // Sessions and back-channel logout (docs/guides/sessions-and-logout.md).
  /**
   * The device sessions of a user, oldest first: each with the `sid` its ID tokens carry, when the user
   * authenticated, and the apps that got tokens through it. A session is listed while it or any grant issued
   * through it may still live.
   * @example const sessions = await sentinel.listSessions({ accountId: '123456', userId: 'u-1' });
   */
  listSessions(input: { accountId: string; userId: string }): Promise<SessionInfo[]>;
  /**
   * Ends one device session on every instance: the session, every grant issued through it (its access tokens are
   * refused by every guard and by introspection, its refresh tokens are `invalid_grant`), and a logout token to each
   * app that got tokens through it and registered a `backchannelLogoutUri`. Resolves `false` for an unknown `sid`.
   * The `sid` of an earlier sign-in of a browser whose user signed in again there names that browser's session as
   * a whole, as at RP-initiated logout.
   * @example await sentinel.endSession({ accountId: '123456', sid });
   */
  endSession(input: { accountId: string; sid: string }): Promise<boolean>;
  /**
   * "Sign out everywhere": ends every device session of a user as {@link Sentinel.endSession} does, and resolves to
   * the number ended.
   * @example const ended = await sentinel.endUserSessions({ accountId: '123456', userId: 'u-1' });
   */
  endUserSessions(input: { accountId: string; userId: string }): Promise<number>;
  /**
   * The apps holding live grants of a user (a "connected apps" page), with the sessions they got them through.
   * @example const apps = await sentinel.listUserGrants({ accountId: '123456', userId: 'u-1' });
   */
  listUserGrants(input: { accountId: string; userId: string }): Promise<UserAppGrants[]>;
  /**
   * Ends every grant of a user with one app, in every session ("disconnect this app"); the app gets a logout token
   * per session it leaves, the sessions stay. Resolves to the number of grants ended.
   * @example await sentinel.revokeUserGrants({ accountId: '123456', userId: 'u-1', clientId: 'client-a' });
   */
  revokeUserGrants(input: { accountId: string; userId: string; clientId: string }): Promise<number>;
  /**
   * Stops this instance's background work: the back-channel logout delivery loop. Deliveries in flight are cut off
   * and put back in the store's queue, due at once, for another instance (or this one, restarted) to deliver. The
   * loop's timer never keeps a process alive, so calling it is for a clean shutdown, not a required step.
   * @example process.on('SIGTERM', async () => { await sentinel.close(); server.close(); });
   */
  close(): Promise<void>;
}

/** The answer for a request outside the service's paths: shared, it is settled and never changes. */
const NOT_OURS: Promise<null> = Promise.resolve(null);

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
  // Whatever store is configured is observed through a decorator (spans and store metrics), never changed.
  const store = traceStore(config.store ?? new MemoryStore());
  const serviceKeys = setUpKeys(config, store, warn);
  const { keys, ring } = serviceKeys;
  // The checks of the resolved options, which `sentinel-idp config check` makes too (config/startup-checks.ts).
  checkIDTokenAlgorithms(config, keys, warn);
  checkFapi2Signing(config, keys);
  checkFapi2ProofAlgorithms(config);
  const registry = appRegistry(config);
  // Client ID metadata documents (MCP): https client ids are resolved behind the one lookup every path uses.
  const apps = config.clientIdMetadataDocuments.enabled
    ? withClientIdMetadataDocuments(registry, new ClientIdMetadataResolver(config))
    : registry;
  assertAppsOrAppStore(config);
  checkRegistrationStore(config, apps);
  assertAppLogoutTargets(config);
  // The plain secrets are dropped once hashed (resolveConfig): their lengths are read from the options.
  warnShortClientSecrets(options.apps, warn);
  warnIpRelyingParty(config, warn);
  // The one access-token verifier of the service: the bearer guard, verifyAccessToken() and (through the context)
  // UserInfo all use it.
  const context = createContext({
    config,
    keys,
    verifyWithKeyReload: keyReloadingVerify(serviceKeys),
    store,
    apps,
    verifier: (built) => createAccessTokenVerifier(built, serviceKeys),
  });
  const match = createRouter(ROUTES, config.basePath);
  const report = failureReport(config);
  const edge = createEdge(context, serviceKeys, report);
  const { dispatch } = edge;
  const identifiers = config.telemetry.identifiersInMetrics;
  const documents = config.clientIdMetadataDocuments.enabled;

  // Not async: the answer is the edge's own promise, returned as is (an async wrapper around it would add a promise
  // and two microtasks to every request).
  function handle(request: SentinelRequest): Promise<SentinelResponse | null> {
    let found: ReturnType<typeof match>;
    try {
      found = match(request);
    } catch (error) {
      return Promise.reject(error);
    }
    if (found === null) return NOT_OURS;
    if (found.route.observed === false || !telemetryActive()) return dispatch(found, request);
    return observeRequest(found.route, found.params, request, identifiers, documents, (observation) =>
      dispatch(found, request, observation),
    );
  }

  // Not an HTTP route, but it answers the browser like one: the same edge, renderer and audit events.
  const completeLogin = (interactionId: string, user: CompleteLoginInput): Promise<SentinelResponse> =>
    edge.run({ entry: COMPLETE_LOGIN, request: undefined, params: undefined }, (scoped) =>
      completeExternalLogin(scoped, interactionId, user),
    );

  function requireRing(method: string, accountId?: string): KeyRing {
    if (ring === undefined) throw new ConfigurationError('keyRotation', `${method} needs the keyRotation option`);
    if (accountId === undefined) return ring;
    // With keysPerAccount an account signs with its own ring: an account's key is rotated or revoked there.
    const rings = serviceKeys.accountRings;
    if (rings === undefined) throw new ConfigurationError('keysPerAccount', `${method} with an accountId needs keysPerAccount`);
    return rings.ring(accountId);
  }

  /**
   * The ring whose JWKS `accountId`'s `jwks_uri` serves (account-jwks.ts): the account's own with `keysPerAccount`,
   * else the shared one (`undefined` with configured keys). Asked for an account only once the registry knows it, so
   * that a host passing a request's account id on cannot make rings in the store for made-up ones.
   */
  async function jwksRing(accountId: string | undefined): Promise<KeyRing | undefined> {
    if (accountId === undefined) return ring;
    if (!(await apps.hasAccount(accountId))) throw new OAuthError('invalid_request', 'unknown account', { status: 404 });
    return serviceKeys.accountRings?.ring(accountId) ?? ring;
  }

  // Back-channel logout: this instance's share of the deliveries waiting in the store (src/logout/).
  const deliveries = new LogoutDeliveryWorker(context, serviceKeys, report);
  deliveries.start();

  const { verifyAccessToken } = context;
  const sentinel: Sentinel = {
    config,
    handle,
    verifyAccessToken: withKnownVerifyOptions(verifyAccessToken),
    checkBearer: withKnownBearerOptions(createBearerCheck(context, serviceKeys, verifyAccessToken, report)),
    protectedResourceMetadata: (metadataOptions) => createProtectedResourceMetadata(context, metadataOptions),
    registerApp: async (input) => {
      await assertLogoutTarget(config, input?.backchannelLogoutUri, 'app.backchannelLogoutUri');
      return registerApp(apps, input, context.emit);
    },
    completeLogin,
    interaction: (interactionId) => interactionView(context, interactionId),
    jwks: () => {
      // Not awaited (this method is synchronous): a host serving the JWKS from here, whose traffic never passes
      // through the service's routes, would otherwise publish a revoked key (or miss a new one) indefinitely.
      ring?.refreshIfStale();
      return structuredClone(keys.jwks);
    },
    jwksAsync: async (options) => {
      const target = await jwksRing(options?.accountId);
      await target?.fresh();
      return structuredClone((target?.keys ?? keys).jwks);
    },
    ready: async () => {
      // The user's store itself, not its traced proxy: a startup check is no store operation to measure. The replay
      // epoch is read from it too, once its own check has waited for a connecting client, so that this instance sees
      // the store lose its markers before its first spend.
      const checked = Promise.resolve(config.store?.ready?.(warn)).then(() => witnessReplayEpoch(config.store ?? store, config, warn));
      await Promise.all([ring?.ready(), checked]);
    },
    rotateKeys: (options) => requireRing('rotateKeys()', options?.accountId).rotate(),
    revokeKey: (kid, options) => requireRing('revokeKey()', options?.accountId).revoke(kid),
    ...sessionMethods(context),
    close: () => deliveries.close(),
  };
  attachContext(sentinel, context);
  return sentinel;
}
