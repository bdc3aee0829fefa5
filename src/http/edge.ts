/**
 * The edge of the core: the one try/catch around every handler. Handlers throw {@link OAuthError}s for refusals,
 * which the route's renderer turns into the response (after its denied event); anything else goes to `onError` and
 * becomes `500 server_error` with no detail. The error path is described in docs/ARCHITECTURE.md.
 */
import type { AppStore } from '../apps/app.js';
import { isAuthorizationError } from '../authorize/request/authorization-error.js';
import { withBodyDeadline } from './body-failures.js';
import type { ResolvedConfig } from '../config.js';
import { corsPreflight, withCors } from './cors.js';
import { deniedAccountCheckOf } from './denied-accounts.js';
import { requestContext, type SentinelContext } from './context.js';
import { isCommittedRefusal, isOAuthError, OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from './messages.js';
import type { ServiceKeys } from '../keys/keyring/service-keys.js';
import { isDotSegment } from '../lib/account-id.js';
import { mountPathRefusal } from './mount-path.js';
import { catchRejection } from '../lib/thenable.js';
import type { EdgeEntry, Match, RouteParams } from './router.js';
import type { RequestObservation } from '../telemetry/request-observation.js';

/** Reports an unexpected failure to `onError`; never throws. */
export type FailureReport = (error: unknown, route: string, accountId: string | undefined) => void;

/** The bare answer when even the renderer or the denied event failed. */
export function serverError(): SentinelResponse {
  return noStoreJSON(500, { error: 'server_error', error_description: 'the server could not complete the request' });
}

/** The RFC 6749 §5.2 JSON error, the renderer of routes that name none. */
export function renderJSONError(error: OAuthError): SentinelResponse {
  return noStoreJSON(error.status, error.toJSON(), { ...error.headers });
}

/**
 * The reporter of unexpected failures: `onError(error, { route, accountId })`, swallowing a throwing or rejecting
 * hook so that a clean 500 never turns into a crash of the host.
 */
export function failureReport(config: Pick<ResolvedConfig, 'onError'>): FailureReport {
  return (error, route, accountId) => {
    try {
      catchRejection(config.onError?.(error, { route, accountId }));
    } catch {
      // A throwing onError must not turn a clean 500 into a crash of the host.
    }
  };
}

/**
 * Where one piece of work runs: the entry (route or `completeLogin`), the request when there is one, the route's
 * parameters and the request's span.
 */
export interface EdgeCall {
  entry: EdgeEntry;
  request: SentinelRequest | undefined;
  params: RouteParams | undefined;
  observation?: RequestObservation | undefined;
}

/** The work run at the edge, given the context it must use (the request's own when there is a request). */
export type EdgeWork = (scoped: SentinelContext) => Promise<SentinelResponse>;

/** The service's edge: route dispatch, and the same try/catch for entry points that are not routes. */
export interface Edge {
  /** Runs one matched request through its route's handler. */
  dispatch(found: Match, request: SentinelRequest, observation?: RequestObservation): Promise<SentinelResponse>;
  /** Runs `work` for an entry point that is not an HTTP route (`completeLogin()`), exactly as a route's handler. */
  run(call: EdgeCall, work: EdgeWork): Promise<SentinelResponse>;
}

/** Builds the edge of a service: its context, keys and failure reporter. */
export function createEdge(context: SentinelContext, serviceKeys: ServiceKeys, report: FailureReport): Edge {
  const { ring, accountRings } = serviceKeys;
  const apps: AppStore = context.apps;
  const bodyTimeoutMs = Math.ceil(context.config.bodyTimeout * 1000);
  // Refusals naming a made-up account are answered but not audited (src/http/denied-accounts.ts).
  const audited = deniedAccountCheckOf(apps);

  /**
   * The one try/catch: every route and every other entry point answer failures through it. It never rejects, and it
   * ends the request's observation with the status it answers.
   */
  async function run(call: EdgeCall, work: EdgeWork): Promise<SentinelResponse> {
    const { request, observation } = call;
    // The request's own context: its events carry this request's client address and id.
    const scoped = request === undefined ? context : requestContext(context, request, observation);
    let response: SentinelResponse;
    try {
      response = await work(scoped);
    } catch (error) {
      response = await recover(call, scoped, error);
    }
    // Errors too: a browser app may read why it was refused (src/http/cors.ts).
    if (call.entry.cors !== undefined) response = withCors(response, call.entry.cors);
    observation?.end(response.status);
    return response;
  }

  /**
   * The answer to a failed request: its OAuth error, or server_error (reported) for anything else. Never rejects: the
   * audit check reports its own failures.
   */
  async function recover(call: EdgeCall, scoped: SentinelContext, error: unknown): Promise<SentinelResponse> {
    const { entry, request, params, observation } = call;
    const render = (failure: OAuthError): SentinelResponse => {
      observation?.fail(failure.code);
      return entry.renderError === undefined ? renderJSONError(failure) : entry.renderError(scoped, request, failure);
    };
    const accountId = params?.accountId;
    if (isOAuthError(error) && error.code !== 'server_error') {
      // Only refusals of accounts that exist are audited; the others are counted only. The answer is the same.
      const onFailure = (storeError: unknown): void => report(storeError, entry.name, accountId);
      if (entry.deniedEvent !== undefined && params !== undefined) {
        // A refusal after a change already made (a grant revoked for a replay) keeps its answer whatever the hook says.
        const committed = isCommittedRefusal(error) ? 'committed' : undefined;
        const standing = (await audited(params.accountId, onFailure)) ? committed : 'counted';
        try {
          scoped.emit(entry.deniedEvent(scoped, request, params, error), standing);
        } catch (hookError) {
          report(hookError, entry.name, accountId);
          observation?.fail('server_error');
          return serverError();
        }
      }
      return render(error);
    }
    report(isOAuthError(error) && error.cause !== undefined ? error.cause : error, entry.name, accountId);
    try {
      // After the redirect URI is validated, internal failures too go back to the app (RFC 6749 §4.1.2.1).
      const failure = isAuthorizationError(error) ? error : new OAuthError('server_error', 'the server could not complete the request');
      return render(failure);
    } catch (renderError) {
      report(renderError, entry.name, accountId);
      observation?.fail('server_error');
      return serverError();
    }
  }

  // Not async: it only hands over to `run`, and an async wrapper around a returned promise costs a promise and two
  // microtasks per request. Nothing here throws before `run`'s try/catch takes over.
  function dispatch(found: Match, request: SentinelRequest, observation?: RequestObservation): Promise<SentinelResponse> {
    const { route, params } = found;
    const { cors } = route;
    // The CORS preflight, before the method check: a browser sends it ahead of a POST with an Authorization or DPoP
    // header, and of any GET with such a header.
    if (cors !== undefined && request.method === 'OPTIONS') {
      return run({ entry: route, request, params, observation }, () => Promise.resolve(corsPreflight(cors)));
    }
    if (!found.allowed) {
      // The method as the caller wrote it, within bounds: a fetch host passes any token of any length (RFC 9110 §9.1).
      const method = request.method.length <= 16 ? request.method : `${request.method.slice(0, 16)}...`;
      const error = new OAuthError('invalid_request', `method ${method} is not allowed here`, {
        status: 405,
        headers: { allow: found.allow },
      });
      // Thrown through the edge like any refusal, so a 405 is rendered (and observed) the way every error is.
      return run({ entry: { name: route.name, renderError: route.renderError, cors }, request, params, observation }, () =>
        Promise.reject(error),
      );
    }
    // Every account route refuses a dot segment before its handler runs: `..` (`%2E%2E` in the path) would otherwise
    // register apps and mint tokens whose issuer URL resolves to another path (src/lib/account-id.ts).
    if (route.hasAccountId === true && isDotSegment(params.accountId)) {
      const error = new OAuthError('invalid_request', 'the account id in the path is malformed');
      return run({ entry: route, request, params, observation }, () => Promise.reject(error));
    }
    // The mount path heads every URL and cookie path the handlers hand out, and a host mounted under a route
    // parameter lets the client choose it: one that could redirect elsewhere or break a cookie is refused here, before
    // any handler stores it or writes it out (src/http/mount-path.ts).
    const mountRefusal = mountPathRefusal(request);
    if (mountRefusal !== undefined) return run({ entry: route, request, params, observation }, () => Promise.reject(mountRefusal));
    // A lazy body gets its own deadline, so a trickled body is answered 408 instead of held for the host's timeout.
    const body = request.body;
    const timed = typeof body === 'function' ? { ...request, body: withBodyDeadline(body, bodyTimeoutMs) } : request;
    // The handler and renderError see the one request object: what a handler notes on it (the sign-in's language,
    // noteSignInLocales) reaches the error page.
    return run({ entry: route, request: timed, params, observation }, (scoped) => {
      const keysLoaded = ring?.fresh();
      // The common case (keys loaded, one key set for all accounts) calls the handler without a promise of its own.
      if (keysLoaded === undefined && accountRings === undefined) return route.handler(scoped, timed, params);
      return withKeys(keysLoaded, route, scoped, timed, params);
    });
  }

  /** Waits for a key ring still loading, and runs the handler under its account's own keys when accounts have them. */
  async function withKeys(
    keysLoaded: Promise<unknown> | undefined,
    route: Match['route'],
    scoped: SentinelContext,
    request: SentinelRequest,
    params: Match['params'],
  ): Promise<SentinelResponse> {
    if (keysLoaded !== undefined) await keysLoaded;
    // Per-account keys only for accounts that exist: a request naming a made-up account must not create a ring.
    const accountId = params.accountId;
    if (accountRings !== undefined && accountId !== undefined && (await apps.hasAccount(accountId))) {
      return accountRings.run(accountRings.ring(accountId), () => route.handler(scoped, request, params));
    }
    return route.handler(scoped, request, params);
  }

  return { dispatch, run };
}
