/**
 * Whether a confirmed sign-out still goes back to the app. The "Sign out?" page of RP-initiated logout can wait up to
 * `interactionTtl` for the user, and the app may change meanwhile: disabled or deleted (an operator cutting off an
 * app that misbehaves), or no longer registering the address. What was checked when the page was shown is checked
 * again when the user confirms, as a sign-in is not delivered to an address gone since /authorize
 * (still-deliverable.ts); the sign-out itself goes on, only without the way back.
 */
import { type App, postLogoutTargets } from '../../apps/app.js';
import { OAuthError } from '../../errors.js';
import type { SentinelContext } from '../../http/context.js';
import { isUsableRegisteredURI } from './registered-uri.js';

/**
 * Whether the app `clientId` of `accountId` is still enabled and still registers `returnTo` for after a logout
 * (exactly, as at the request). A client named by its metadata document that cannot be fetched now is not returned
 * to; a failure of the service's own registry rejects (a 500, nothing spent).
 *
 * @example const back = await stillReturnable(context, accountId, record.clientId, record.returnTo);
 */
export async function stillReturnable(
  context: SentinelContext,
  accountId: string,
  clientId: string | undefined,
  returnTo: string | undefined,
): Promise<boolean> {
  if (clientId === undefined || returnTo === undefined) return false;
  const app = await returnableApp(context, accountId, clientId);
  if (app === null) return false;
  const allowed = postLogoutTargets(app);
  return allowed.includes(returnTo) && isUsableRegisteredURI(allowed, returnTo);
}

/**
 * The app a sign-out may return to, or `null`: a metadata document refused or unreachable (`invalid_client`) means
 * no return, and the sign-out goes on without one; a failure of the service's own registry rejects.
 *
 * @example const app = await returnableApp(context, accountId, clientId);
 */
export async function returnableApp(context: SentinelContext, accountId: string, clientId: string): Promise<App | null> {
  let app: App | null;
  try {
    app = await context.apps.findApp(accountId, clientId);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return null;
  }
  return app !== null && app.accountId === accountId ? app : null;
}
