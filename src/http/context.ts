/**
 * What every handler needs: the resolved configuration, keys, stores and the hooks, built once by
 * `createSentinel()`.
 */
import type { Context as TraceContext } from '@opentelemetry/api';
import type { AppStore } from '../apps/app.js';
import type { ResolvedConfig } from '../config.js';
import { createEmitter, type EventStanding, eventsWanted } from '../events/emitter.js';
import type { AccessTokenVerifier } from '../guard/verifier-contract.js';
import type { EventInput } from '../events/sentinel-event.js';
import type { SentinelRequest } from './messages.js';
import type { KeySet } from '../keys/signing-keys.js';
import type { KeyReloadingVerify } from '../keys/keyring/unknown-kid.js';
import { LogoutQueue } from '../logout/logout-queue.js';
import type { Store } from '../stores/store.js';
import type { RequestObservation } from '../telemetry/request-observation.js';
import { traceStore, untraced } from '../telemetry/traced-store.js';
import { accountIssuerUrl } from './route-paths.js';

/** The service's collaborators, shared by all handlers. */
export interface SentinelContext {
  readonly config: ResolvedConfig;
  readonly keys: KeySet;
  readonly store: Store;
  readonly apps: AppStore;
  /**
   * Completes an audit event (time, client address, request id, outcome), counts it in the metrics and sends it to
   * `onEvent`. A throwing hook fails the request with server_error, unless the event is `'committed'` (see
   * {@link EventStanding}): then it goes to `onError` and the request carries on.
   */
  emit(event: EventInput, standing?: EventStanding): void;
  /** The issuer identifier of one account: `{issuer}{basePath}/api/account/{accountId}` (RFC 8414, RFC 9207). */
  accountIssuer(accountId: string): string;
  /**
   * The service's access-token verifier (`sentinel.verifyAccessToken()`, the bearer guard's): every handler that
   * accepts an access token as a presentation (UserInfo) verifies with it, so the key ring it picks (shared or the
   * account's own), its one reload for an unknown `kid` and the liveness check are the same everywhere.
   */
  readonly verifyAccessToken: AccessTokenVerifier;
  /**
   * Runs a check of a token signed with `keys` (an `id_token_hint`) and, when it fails for a `kid` the request's key
   * ring has not loaded, reloads that ring once (rate-limited) and runs it again: the reload the access-token verifier
   * does, so a token signed with a key another instance created in an emergency is accepted here too.
   */
  readonly verifyWithKeyReload: KeyReloadingVerify;
  /** Where back-channel logout deliveries wait (the store's queue, else one in process): src/logout/. */
  readonly logoutQueue: LogoutQueue;
  /** The OpenTelemetry context of the request being handled: the parent of its store and signing spans. */
  readonly traceContext?: TraceContext | undefined;
  /** The span and metrics of the request being handled, when telemetry observes it (what handlers learn goes here). */
  readonly observation?: RequestObservation | undefined;
}

// Kept off the public `Sentinel` type: the context holds private keys and the stores, which are not part of the API.
const CONTEXTS = new WeakMap<object, SentinelContext>();

/** Records the context of a service built by `createSentinel()`, for {@link contextOf}. */
export function attachContext(sentinel: object, context: SentinelContext): void {
  CONTEXTS.set(sentinel, context);
}

/** The collaborators of a service built by `createSentinel()`: for the service's own modules and tests. */
export function contextOf(sentinel: object): SentinelContext {
  const context = CONTEXTS.get(sentinel);
  if (context === undefined) throw new TypeError('not a service built by createSentinel()');
  return context;
}

/** What {@link createContext} is built from: the collaborators, and how to make the verifier over the context. */
export interface ContextInput {
  config: ResolvedConfig;
  keys: KeySet;
  /** Runs a token check with one reload of the key ring behind `keys` for an unknown `kid` (`keyReloadingVerify`). */
  verifyWithKeyReload: KeyReloadingVerify;
  store: Store;
  apps: AppStore;
  /** Builds the service's access-token verifier over the finished context (it reads the context's stores and keys). */
  verifier: (context: SentinelContext) => AccessTokenVerifier;
}

/** Stands in for the verifier while the context is being built; never reachable once createContext returns. */
const notYetBuilt: AccessTokenVerifier = () => Promise.reject(new Error('the context is still being built'));

/**
 * Builds the context; its `emit` has no request (see {@link requestContext} for a handled request's).
 *
 * @example
 * const context = createContext({
 *   config, keys, verifyWithKeyReload: keyReloadingVerify(serviceKeys), store, apps,
 *   verifier: (built) => createAccessTokenVerifier(built, serviceKeys),
 * });
 */
export function createContext(input: ContextInput): SentinelContext {
  const { config, keys, verifyWithKeyReload, store, apps, verifier } = input;
  // Every field present from the start (one object shape); the verifier is set once the rest exists, since it is
  // built over the context itself.
  const context: { -readonly [K in keyof SentinelContext]: SentinelContext[K] } = {
    config,
    keys,
    store,
    apps,
    emit: createEmitter(config),
    accountIssuer: (accountId) => accountIssuerUrl(config, accountId),
    verifyAccessToken: notYetBuilt,
    verifyWithKeyReload,
    // Its polls and settles are no request's work: untraced, or an idle instance would start a root span a second.
    logoutQueue: new LogoutQueue(untraced(store)),
  };
  context.verifyAccessToken = verifier(context);
  return context;
}

/**
 * The context of one handled request: the same collaborators, with an `emit` whose events carry the request's client
 * address and id and annotate its span.
 */
export function requestContext(context: SentinelContext, request: SentinelRequest, observation?: RequestObservation): SentinelContext {
  // Nobody listening: the shared context (whose events are never built) saves an object per request.
  if (!eventsWanted(context.config, observation)) return context;
  const emit = createEmitter(context.config, request, observation);
  // Store and signing spans name their parent explicitly: correct even where no async context manager is registered.
  const traceContext = observation?.traceContext;
  const store = traceContext === undefined ? context.store : traceStore(untraced(context.store), traceContext);
  // Listed rather than spread: `{ ...context, traceContext }` adds a property the original lacks, which takes V8 off
  // its fast object-clone path (about a microsecond per request; bench/RESULTS.md, findings); the mapped type makes a
  // field added to the interface fail to compile here until it is listed.
  const scoped: { [K in keyof Required<SentinelContext>]: SentinelContext[K] } = {
    config: context.config,
    keys: context.keys,
    store,
    apps: context.apps,
    emit,
    accountIssuer: context.accountIssuer,
    verifyAccessToken: context.verifyAccessToken,
    verifyWithKeyReload: context.verifyWithKeyReload,
    logoutQueue: context.logoutQueue,
    traceContext,
    observation,
  };
  return scoped;
}
