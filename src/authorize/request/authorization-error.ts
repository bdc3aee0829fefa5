/**
 * Errors of the authorization endpoint that go back to the application (RFC 6749 §4.1.2.1): once the account,
 * client and redirect URI are validated, every problem is a redirect carrying `error`, `error_description`,
 * `state` and `iss` (RFC 9207). Errors without a target are shown to the user and never redirected.
 */
import type { SentinelContext } from '../../http/context.js';
import { isOAuthError, OAuthError, type OAuthErrorCode, wireDescription } from '../../errors.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { authorizationResponseURL, type RedirectTarget } from './authorization-response.js';
import { errorPageResponse } from '../pages/error-response.js';

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

/**
 * The route `renderError` of the authorization endpoint: a 302 to the app for errors with a target, the error
 * page otherwise.
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
  return redirect(
    302,
    authorizationResponseURL(error.target, { error: error.code, error_description: wireDescription(error.description) }),
  );
}
