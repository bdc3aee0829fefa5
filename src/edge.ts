/**
 * The edge of the core: the one try/catch around every handler. Handlers throw {@link OAuthError}s for refusals,
 * which the route's renderer turns into the response (after its denied event); anything else goes to `onError` and
 * becomes `500 server_error` with no detail. The error path is described in docs/ARCHITECTURE.md.
 */
import type { AppStore } from './apps.js';
import { isAuthorizationError } from './authorize/request/authorization-error.js';
import { withBodyDeadline } from './body-read.js';
import type { ResolvedConfig } from './config.js';
import { requestContext, type SentinelContext } from './context.js';
import { isOAuthError, OAuthError } from './errors.js';
import { noStoreJSON, type SentinelRequest, type SentinelResponse } from './http.js';
import type { ServiceKeys } from './keyring/service-keys.js';
import type { Match } from './router.js';
import type { RequestObservation } from './telemetry/request-observation.js';

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
 * The reporter of unexpected failures: `onError(error, { route, accountId })`, swallowing a throwing hook so that
 * a clean 500 never turns into a crash of the host.
 */
export function failureReport(config: Pick<ResolvedConfig, 'onError'>): FailureReport {
  return (error, route, accountId) => {
    try {
      config.onError?.(error, { route, accountId });
    } catch {
      // A throwing onError must not turn a clean 500 into a crash of the host.
    }
  };
}

/** Runs one matched request through its route's handler, inside the edge. */
export type Dispatch = (found: Match, request: SentinelRequest, observation?: RequestObservation) => Promise<SentinelResponse>;

/** Builds the dispatcher of a service: its context, keys and failure reporter. */
export function createDispatch(context: SentinelContext, serviceKeys: ServiceKeys, report: FailureReport): Dispatch {
  const { ring, accountRings } = serviceKeys;
  const apps: AppStore = context.apps;
  const bodyTimeoutMs = Math.ceil(context.config.bodyTimeout * 1000);

  return async (found, request, observation) => {
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
            report(hookError, route.name, params.accountId);
            observation?.fail('server_error');
            return serverError();
          }
        }
        return render(error);
      }
      report(isOAuthError(error) && error.cause !== undefined ? error.cause : error, route.name, params.accountId);
      try {
        // After the redirect URI is validated, internal failures too go back to the app (RFC 6749 §4.1.2.1).
        const failure = isAuthorizationError(error) ? error : new OAuthError('server_error', 'the server could not complete the request');
        return render(failure);
      } catch (renderError) {
        report(renderError, route.name, params.accountId);
        observation?.fail('server_error');
        return serverError();
      }
    }
  };
}
