/**
 * Where the login flow meets the device flow. A person who entered a right user code signs in through the very
 * login page of the code flow (password, passkeys, the TOTP step, or the host's own page): the interaction carries
 * the device authorization instead of a redirect URI, and the end of the sign-in leads to the confirmation page
 * instead of back to an application (`deviceConfirmationLocation` in `confirmation.ts`).
 */
import type { App } from '../apps/app.js';
import { defaultMaxAgeProblem } from '../apps/app-validation.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import type { AuthorizationRequest } from '../authorize/request/validate-request.js';
import {
  createInteraction,
  type DeviceInteraction,
  type InteractionRecord,
  loginPageURL,
  MAX_INTERACTION_CHARS,
  restoreInteraction,
  takeInteraction,
} from '../authorize/state/interaction.js';
import { isOAuthError, OAuthError } from '../errors.js';
import { randomSecret } from '../lib/random-secrets.js';
import { en } from '../i18n/en.js';
import { requestUiLocales } from '../i18n/page-locale.js';
import { decideDevice, type DeviceRecord, type StoredDevice } from './device-records.js';
import { outcomePageResponse, undecidedPageResponse } from './pages.js';

/**
 * The app's `default_max_age` (OpenID Connect Registration §2: its user must have authenticated no longer ago than
 * that), or `undefined`. An app from a host's own AppStore is not checked on its way in: a value that is no limit is
 * none, as /authorize reads it.
 *
 * @example signInMaxAge({ defaultMaxAge: 300 }) // 300
 */
export function signInMaxAge(app: Pick<App, 'defaultMaxAge'>): number | undefined {
  return defaultMaxAgeProblem(app.defaultMaxAge) === null ? app.defaultMaxAge : undefined;
}

/**
 * Parks a device sign-in as an interaction and returns the login page to send the browser to. The request has no
 * redirect URI: nothing of the sign-in ever redirects to an application. `browserSession`, the digest of the session
 * the browser holds ("Not you?", a sign-in too old for the app), is kept with it as /authorize keeps its own: the
 * host's page ends the sign-in with `completeLogin()`, which has no cookie, and its new session must replace that
 * one (carry it over, or retire another user's) as the login form's does. `maxAge`, the app's
 * {@link signInMaxAge}, is the request's as /authorize makes `default_max_age` the `max_age` of a request without
 * one: the host's page is told (`sentinel.interaction()`), and `completeLogin()` refuses a sign-in that old.
 *
 * @example return redirect(303, await startDeviceSignIn(context, request, found, appName, user?.sessionDigest, signInMaxAge(app)));
 */
export async function startDeviceSignIn(
  context: SentinelContext,
  request: SentinelRequest,
  found: StoredDevice,
  appName: string,
  browserSession?: string,
  maxAge?: number,
): Promise<string> {
  const { accountId, userCode } = found.record;
  // The verification page's ui_locales, as an app's authorization request carries its own: the sign-in speaks them.
  const authorization = signInRequest(context, found.record, appName, requestUiLocales(request), maxAge);
  const device = { grantId: found.grantId, userCode };
  const id = await createInteraction(context, authorization, request.mountPath, device, undefined, browserSession);
  return loginPageURL(context, request.mountPath, accountId, id);
}

/** The request a device sign-in parks: an app's authorization request without a redirect URI. */
function signInRequest(
  context: SentinelContext,
  record: Pick<DeviceRecord, 'accountId' | 'clientId' | 'scope'>,
  appName: string,
  uiLocales: readonly string[],
  maxAge: number | undefined,
): AuthorizationRequest {
  const { accountId, clientId, scope } = record;
  return {
    accountId,
    clientId,
    redirectUri: '',
    redirectUriInRequest: false,
    iss: context.accountIssuer(accountId),
    clientName: appName,
    scope,
    ...(uiLocales.length === 0 ? {} : { uiLocales: [...uiLocales] }),
    ...(maxAge === undefined ? {} : { maxAge }),
  };
}

/**
 * Room a device sign-in's interaction keeps for what only the verification page adds to it: up to 20 `ui_locales`
 * tags of 35 characters (774 characters as JSON), the digest of the session the browser holds, `max_age`, and slack
 * for a mount path a little longer than the device's.
 */
const VERIFICATION_PAGE_RESERVE = 1024;

/**
 * Whether the sign-in of a device authorization can be parked ({@link MAX_INTERACTION_CHARS}) with the `scope` the
 * device asked for, whatever the verification page adds to it. Checked at the device authorization request: a scope
 * too long is refused there, to the device (`invalid_scope`), instead of at code entry, where the person would get an
 * error page while the device polled until its code expired.
 *
 * @example if (!deviceSignInFits(context, { accountId, clientId, scope, userCode }, grantId, appName, request.mountPath)) throw tooLong();
 */
export function deviceSignInFits(
  context: SentinelContext,
  record: Pick<DeviceRecord, 'accountId' | 'clientId' | 'scope' | 'userCode'>,
  grantId: string,
  appName: string,
  mountPath: string | undefined,
): boolean {
  const interaction: InteractionRecord = {
    request: signInRequest(context, record, appName, [], undefined),
    csrfToken: randomSecret(),
    mountPath: mountPath ?? '',
    createdAt: Date.now(),
    device: { grantId, userCode: record.userCode },
  };
  return JSON.stringify(interaction).length + VERIFICATION_PAGE_RESERVE <= MAX_INTERACTION_CHARS;
}

/**
 * Cancel on the login page of a device sign-in: the person refused, so the device hears `access_denied`, as an app
 * hears it from a cancelled code flow. A login page left open while the code was decided elsewhere (approved in
 * another browser) or expired denies nothing: its Cancel answers as a late decision on the confirmation page does,
 * never with the "Access denied" page, which would tell the person the device was refused while it gets its tokens.
 *
 * A denial that fails on the service's side (a store, an `onEvent` that vetoes) or whose every write lost to the
 * device's polls (the 503 that asks the person to choose again) denied nothing: the interaction it took is put back,
 * as the end of a sign-in puts it back, so the same Cancel posted again decides instead of finding the link expired.
 *
 * @example if (interaction.record.device !== undefined) return cancelDeviceSignIn(context, request, interaction.id, interaction.record.device);
 */
export async function cancelDeviceSignIn(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  device: DeviceInteraction,
): Promise<SentinelResponse> {
  const taken = await takeInteraction(context, interactionId);
  if (taken === null) throw new OAuthError('invalid_request', en.linkExpired);
  const { accountId, clientId } = taken.request;
  // Announced once the denial stood (decideDevice): an onEvent that throws vetoes it, the record is put back, and the
  // device still waits; a denial that lost to another decision is never announced.
  const announce = (): void => context.emit({ type: 'device.denied', accountId, clientId });
  const { applied, record } = await decideDevice(context, device.grantId, { status: 'denied' }, { announce }).catch(
    async (error: unknown) => {
      if (!isOAuthError(error) || error.code === 'server_error' || error.code === 'temporarily_unavailable') {
        await restoreInteraction(context, interactionId, taken).catch(() => false);
      }
      throw error;
    },
  );
  if (!applied) return undecidedPageResponse(context, request, accountId, record);
  return outcomePageResponse(context, request, 'denied');
}
