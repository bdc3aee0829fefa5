/**
 * Errors of the authorization endpoint that go back to the application (RFC 6749 §4.1.2.1): once the account,
 * client and redirect URI are validated, every problem is a redirect carrying `error`, `error_description`,
 * `state` and `iss` (RFC 9207). Errors without a target are shown to the user and never redirected, and so are
 * those of a client no operator registered (RFC 9700 §4.11.2, below).
 */
import type { SentinelContext } from '../../http/context.js';
import { isOAuthError, OAuthError, type OAuthErrorCode, wireDescription } from '../../errors.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { authorizationResponseURL, type RedirectTarget } from './authorization-response.js';
import { errorPageResponse } from '../pages/error-response.js';
import { namesMetadataDocument } from '../../apps/client-id-metadata.js';

const REDIRECTABLE = Symbol.for('sentinel-idp.AuthorizationError');

/**
 * An {@link OAuthError} that is delivered to the application's validated redirect URI.
 *
 * @example
 * throw new AuthorizationError('unsupported_response_type', 'response_type must be code', target);
 */
export class AuthorizationError extends OAuthError {
  readonly target: RedirectTarget;

  constructor(code: OAuthErrorCode, description: string, target: RedirectTarget, cause?: unknown) {
    super(code, description, { status: 302, cause });
    this.name = 'AuthorizationError';
    this.target = target;
    Object.defineProperty(this, REDIRECTABLE, { value: true });
  }
}

/** True for an {@link AuthorizationError} from any copy of this package. */
export function isAuthorizationError(value: unknown): value is AuthorizationError {
  return isOAuthError(value) && (value as unknown as Record<symbol, unknown>)[REDIRECTABLE] === true;
}

/**
 * Runs a step that may fail for internal reasons (store, hook) after the target is known, and turns such a
 * failure into a `server_error` redirect; the original goes to `onError` through the error's cause. Not async: it
 * hands back the step's own `catch`, where an async wrapper would add a promise and, for the promise it returns, two
 * more microtasks to every signed-in authorize request, which passes here twice.
 */
export function redirectOnFailure<T>(target: RedirectTarget, step: Promise<T>): Promise<T> {
  return step.catch((cause: unknown) => {
    if (isOAuthError(cause) && cause.code !== 'server_error') throw cause;
    throw new AuthorizationError('server_error', 'the server could not complete the request', target, cause);
  });
}

/** The host of an absolute URL, or the text itself should it not parse (a registered URI always does). */
function hostOf(uri: string): string {
  try {
    return new URL(uri).host;
  } catch {
    return uri;
  }
}

/**
 * The status of a redirect answering `request` at the authorization endpoint: 302 for a GET, as RFC 6749 §4.1.2
 * shows it, and 303 for a POST (a same-site form that carried the session cookie). A user agent may keep the method
 * of a 302 (RFC 9110 §15.4.3) and post the form again to wherever it leads; only a 303 makes it a GET
 * (RFC 9700 §4.12).
 *
 * @example redirect(redirectStatus(request), location)
 */
export function redirectStatus(request: SentinelRequest | undefined): 302 | 303 {
  return request?.method === 'POST' ? 303 : 302;
}

/**
 * The route `renderError` of the authorization endpoint: a redirect to the app for errors with a target (302, or 303
 * answering a POST), the error page otherwise.
 *
 * A client named by its metadata document is the exception: anyone can publish one whose redirect URIs go anywhere,
 * so a redirect straight from this endpoint (which the browser reaches from a link, before the user has seen any
 * page of the service) would make the service an open redirector that lends its own address to a phishing link
 * (RFC 9700 §4.11.2: redirect by itself only to a URI it trusts, otherwise inform the user). Its errors here are the
 * error page instead, naming the app's host and the error, with the redirect as a plain link the user may follow.
 * Errors after the user signed in or cancelled on the login page, which names that host, still go back (login.ts,
 * signed-in-response.ts), as do every error of an app an operator registered (dynamic registration takes the
 * operator's initial access token).
 *
 * @example
 * { name: 'authorize', renderError: renderAuthorizationError, ... }
 */
export function renderAuthorizationError(
  context: SentinelContext,
  request: SentinelRequest | undefined,
  error: OAuthError,
): SentinelResponse {
  if (!isAuthorizationError(error)) return errorPageResponse(context, request, error);
  const { target } = error;
  const location = authorizationResponseURL(target, { error: error.code, error_description: wireDescription(error.description) });
  if (namesMetadataDocument(context.config, target.clientId)) {
    // Answered with the status of the error itself (400, 500, 503), not the redirect's 302.
    const shown = new OAuthError(error.code, error.description);
    const returnTo = { href: location, host: hostOf(target.redirectUri) };
    return errorPageResponse(context, request, shown, { host: hostOf(target.clientId), returnTo });
  }
  return redirect(redirectStatus(request), location);
}
