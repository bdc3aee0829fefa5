/**
 * The check made when an interaction ends and its answer (a code, or an error such as `access_denied`) is about to
 * go to the redirect URI validated at /authorize. The interaction lived up to `interactionTtl` meanwhile, and the
 * app may have been disabled or deleted, or the URI removed from its registration (a compromised or mistyped one,
 * say): delivering to it anyway would hand a code to an address the operator has just withdrawn. So the app is
 * looked up again and the URI matched against its current registration, as /authorize does; when either is gone
 * the browser gets an error page and nothing is delivered.
 */
import { OAuthError } from '../../errors.js';
import type { SentinelContext } from '../../http/context.js';
import { isUsableRegisteredURI, registeredEntryOf } from './registered-uri.js';
import type { AuthorizationRequest } from './validate-request.js';

/**
 * Throws a 400 page (never a redirect) unless the request's app is still enabled and its redirect URI still
 * registered. A failing app store throws as it does (the edge's `500 server_error`): nothing is delivered either way.
 *
 * @example
 * await assertStillDeliverable(context, interaction.request);
 * return redirect(303, authorizationResponseURL(interaction.request, { code }));
 */
export async function assertStillDeliverable(context: SentinelContext, authorization: AuthorizationRequest): Promise<void> {
  const app = await context.apps.findApp(authorization.accountId, authorization.clientId);
  const registered =
    app === null || app.accountId !== authorization.accountId ? undefined : registeredEntryOf(app, authorization.redirectUri);
  if (app === null || registered === undefined || !isUsableRegisteredURI(app.redirectUris, registered)) {
    throw new OAuthError(
      'invalid_request',
      'This application no longer accepts sign-ins at the address it asked for. Start again from the application.',
    );
  }
}
