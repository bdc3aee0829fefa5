/**
 * `GET|POST {basePath}/api/account/{accountId}/login?interaction=…` — the built-in login page (platform-operations.md §5.2:
 * the end user authenticates on the login page of the identity service).
 *
 * GET ties the interaction to the browser (`login-browser.ts`). POST order: cross-site refusal, CSRF token and that
 * tie first (nothing else runs for a forged post), then Cancel, then the throttle reservation (a throttled attempt
 * never reaches the user store, however many arrive at once), then `users.authenticate`.
 */
import { readForm } from '../../http/form-body.js';
import { clientIP } from '../../http/client-ip.js';
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import type { AuthenticatedUser } from '../../hooks.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { fromSearchParams, single } from '../../http/params.js';
import { constantTimeEqual } from '../../lib/random-secrets.js';
import { assertStillDeliverable } from '../request/still-deliverable.js';
import { authorizationResponseURL } from '../request/authorization-response.js';
import { afterPassword } from '../../second-factor/continue-sign-in.js';
import { findInteraction, restoringInteraction, takeInteraction, type InteractionRecord } from '../state/interaction.js';
import { loginPageResponse } from '../pages/login-response.js';
import { noteSignInLocales } from '../../i18n/page-locale.js';
import { isCrossSiteRequest } from './cross-site.js';
import { assertLoginBrowser, tieLoginPage, withLoginCookie } from '../state/login-browser.js';
import { reserveOrRefuse, settleSuccess, throttleKeys } from '../state/throttle.js';
import { cancelDeviceSignIn } from '../../device/sign-in.js';
import { withStepTieRemoved } from '../../second-factor/step-cookie.js';

/** The one message for every credential failure, so the page never tells which part was wrong. */
export const WRONG_CREDENTIALS = 'Incorrect username or password.';

const MAX_USERNAME = 256;
const MAX_PASSWORD = 1024;

function expired(): OAuthError {
  return new OAuthError('invalid_request', 'This sign-in link is invalid or has expired. Go back to the application and start again.');
}

async function loadInteraction(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<{ id: string; record: InteractionRecord }> {
  const id = single(fromSearchParams(request.query), 'interaction');
  const record = await findInteraction(context, id);
  if (id === undefined || record === null || record.request.accountId !== accountId) throw expired();
  // Whatever the post ends in, an out-of-date form or a 429 included, is shown in the sign-in's language.
  noteSignInLocales(request, record.request.uiLocales);
  return { id, record };
}

async function cancel(context: SentinelContext, _request: SentinelRequest, interactionId: string): Promise<SentinelResponse> {
  const interaction = await takeInteraction(context, interactionId);
  if (interaction === null) throw expired();
  // The account page's own sign-in goes back to it, saying it was cancelled (it then offers to sign in again). Its
  // address may carry the page's ui_locales already.
  if (interaction.returnTo !== undefined) {
    const { returnTo } = interaction;
    return redirect(303, `${returnTo}${returnTo.includes('?') ? '&' : '?'}signin=cancelled`);
  }
  const target = interaction.request;
  // Taken before its answer is made: a failure on the way there (the app store, an onEvent that vetoes) puts it back,
  // so the user's Cancel again goes back to the app, instead of a "link expired" page that strands the app's request.
  return restoringInteraction(context, interactionId, interaction, async () => {
    // Not to a redirect URI the app no longer has (or an app disabled since /authorize): the user sees a page instead.
    await assertStillDeliverable(context, target);
    context.emit({
      type: 'authorize.denied',
      accountId: target.accountId,
      clientId: target.clientId,
      error: 'access_denied',
      reason: 'the user cancelled the sign-in',
    });
    return redirect(303, authorizationResponseURL(target, { error: 'access_denied', error_description: 'the user cancelled the sign-in' }));
  });
}

async function signIn(
  context: SentinelContext,
  request: SentinelRequest,
  interaction: { id: string; record: InteractionRecord },
  credentials: { username: string; password: string },
): Promise<SentinelResponse> {
  const { accountId, clientId } = interaction.record.request;
  const { username, password } = credentials;
  const ip = clientIP(context.config, request);
  const keys = await throttleKeys(context, accountId, username, ip);
  // The slot is taken before the user store runs, so concurrent guesses cannot all slip past the limit.
  await reserveOrRefuse(context, keys, { accountId, clientId });
  const users = context.config.users;
  if (users === undefined) throw new Error('sentinel-idp: the built-in login page needs the users option (or set login.url)');
  const user =
    username.length > MAX_USERNAME || password.length > MAX_PASSWORD
      ? null
      : authenticatedUser(await users.authenticate({ accountId, username, password, request }));
  if (user === null) {
    context.emit({
      type: 'login.failed',
      accountId,
      clientId,
      usernameDigest: keys.usernameDigest,
      reason: 'wrong credentials',
    });
    return loginPageResponse(context, interaction.id, interaction.record, { username, error: WRONG_CREDENTIALS, request });
  }
  await settleSuccess(context, keys);
  // The TOTP step and the passkey offer, when they apply; the interaction is taken (single use) when all are done.
  return afterPassword(context, request, interaction, { user, username, ip });
}

/** The longest user id a sign-in takes, as `completeLogin()` (it becomes `sub` and part of store keys). */
const MAX_USER_ID = 256;

/**
 * The user `users.authenticate` answered, or `null` for wrong credentials (`null`, or `undefined` from a lookup that
 * found no one). Anything else (`true`, a bare id, `{ id: 42 }`, `{}`) is a bug of the hook, not a wrong password:
 * taken as one, it refused every sign-in as "Incorrect username or password", counted each against the user's
 * throttle and recorded `login.failed`, with nothing for the operator. It throws instead (500 server_error, the
 * TypeError to `onError`).
 */
function authenticatedUser(answer: unknown): AuthenticatedUser | null {
  if (answer === null || answer === undefined) return null;
  const id = typeof answer === 'object' ? (answer as { id?: unknown }).id : undefined;
  if (typeof id !== 'string' || id === '' || id.length > MAX_USER_ID) {
    throw new TypeError('sentinel-idp: users.authenticate() must return null or a user { id } with a non-empty string id');
  }
  return answer as AuthenticatedUser;
}

/**
 * Handles the login page: GET shows the form, POST signs in (303 to the app) or cancels (303 with access_denied).
 *
 * @example
 * { name: 'login', methods: ['GET', 'POST'], path: '/api/account/{accountId}/login', handler: (c, r, p) => handleLogin(c, r, p.accountId) }
 */
export async function handleLogin(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const interaction = await loadInteraction(context, request, accountId);
  if (request.method !== 'POST') {
    // Served tied to this browser, with the CSRF token of that tie (login CSRF: login-browser.ts).
    const tie = await tieLoginPage(context, request, interaction.id, interaction.record.mountPath);
    if (tie === null) throw expired();
    return withLoginCookie(await loginPageResponse(context, interaction.id, tie.record, { request }), tie.cookie);
  }
  if (isCrossSiteRequest(context, request, [])) {
    throw new OAuthError('invalid_request', 'The sign-in form was posted from another site.', { status: 403 });
  }
  const form = await readForm(request, context.config.bodyLimit);
  const csrfToken = single(form, 'csrf_token');
  if (csrfToken === undefined || !constantTimeEqual(csrfToken, interaction.record.csrfToken)) {
    throw new OAuthError('invalid_request', 'The sign-in form is out of date. Go back to the application and start again.', {
      status: 403,
    });
  }
  assertLoginBrowser(context, request, interaction.record);
  if (single(form, 'cancel') !== undefined) {
    const { device } = interaction.record;
    const cancelled =
      device === undefined
        ? await cancel(context, request, interaction.id)
        : await cancelDeviceSignIn(context, request, interaction.id, device);
    // Back at the login page from a step (the TOTP code, the passkey offer): that step's cookie ends with the sign-in.
    return withStepTieRemoved(context, request, interaction.id, interaction.record.mountPath, cancelled);
  }
  const username = single(form, 'username')?.trim();
  const password = single(form, 'password');
  if (username === undefined || username === '' || password === undefined) {
    return loginPageResponse(context, interaction.id, interaction.record, {
      username,
      error: 'Enter your username and password.',
      status: 400,
      request,
    });
  }
  return signIn(context, request, interaction, { username, password });
}
