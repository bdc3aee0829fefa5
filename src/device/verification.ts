/**
 * `GET|POST {basePath}/api/account/{accountId}/device` and `…/device/confirm` — the verification pages of RFC 8628
 * §3.3: the person enters the user code, signs in (or is already signed in), sees the app's name and the code, and
 * allows or denies.
 *
 * Code entry is throttled on the password throttle's counters and limits (`throttle.maxFailures` per address and
 * account for wrong codes, `maxFailuresPerIp` per address across codes and passwords): each attempt reserves its slot
 * with the store's atomic increment before the code is looked up, a wrong code keeps it, a right one gives it back
 * (only through the store's `decrement`: without it the slot is kept, never the counter cleared).
 * The code entry form carries a CSRF token bound to a cookie of its page (`entry-form-tie.ts`), checked with the
 * cross-site check before anything else: a forged entry spends no slot of the throttle it shares with passwords.
 * The decision is a single-use confirmation bound to the signed-in browser session (not merely its user), its form
 * protected by a CSRF token and the cross-site check of every POST of the browser flow.
 */
import type { App } from '../apps/app.js';
import { isOAuthError, OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import { addressBucket, clientIP } from '../http/client-ip.js';
import { readForm } from '../http/form-body.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { fromSearchParams, single } from '../http/params.js';
import { puttingBackOnFailure } from '../lib/put-back.js';
import { isThenable } from '../lib/thenable.js';
import { constantTimeEqual, digestsEqual } from '../lib/random-secrets.js';
import { isCrossSiteRequest } from '../authorize/endpoints/cross-site.js';
import { browserSessionDigest, readSessionCookie } from '../authorize/state/session-cookie.js';
import { readSession, sessionDigestOfKey } from '../authorize/state/session.js';
import { takeInteractionSlot } from '../authorize/state/interaction-bound.js';
import { refundAttempt, reserveAttempt, subjectThrottleKeys, type ThrottleKeys } from '../authorize/state/throttle.js';
import {
  confirmationURL,
  createConfirmation,
  type DeviceConfirmation,
  findConfirmation,
  restoreConfirmation,
  takeConfirmation,
} from './confirmation.js';
import { type DeviceRecord, decideDevice, findByUserCode, readDevice } from './device-records.js';
import { entryFormTokenMatches } from './entry-form-tie.js';
import { confirmPageResponse, entryPageResponse, outcomePageResponse, undecidedPageResponse } from './pages.js';
import { type DeviceApproval, endSessionsBeyondBound, indexDeviceApproval, withdrawDeviceApproval } from './device-session.js';
import { signInMaxAge, startDeviceSignIn } from './sign-in.js';
import { assertStillApprovable } from './still-approvable.js';
import { formatUserCode, normalizeUserCode } from './user-code.js';
import { en } from '../i18n/en.js';
import { requestUiLocales } from '../i18n/page-locale.js';
import { type AmrValue, readAmr } from '../assurance/levels.js';

// The handlers speak English (what error_description carries); the pages show the same message translated.
const DEVICE_CODE_WRONG = en.deviceCodeWrong;
const DEVICE_CODE_USED = en.deviceCodeUsed;
const DEVICE_CONFIRMATION_EXPIRED = en.deviceConfirmExpired;
const DEVICE_TOO_MANY_CODES = en.deviceTooManyCodes;

/** The counters of a code entry: per address within the account (on `maxFailures`), and per address. */
function codeEntryKeys(context: SentinelContext, accountId: string, ip: string | null): Promise<ThrottleKeys> {
  // IPv6 by its /64, as every per-address counter (client-ip.ts addressBucket).
  return subjectThrottleKeys(context, 'device-code', accountId, ip === null ? 'unknown' : addressBucket(ip), ip);
}

async function requireAccount(context: SentinelContext, accountId: string): Promise<void> {
  if (!(await context.apps.hasAccount(accountId))) throw new OAuthError('invalid_request', 'unknown account', { status: 404 });
  context.observation?.noteAccount(accountId);
}

function refuseCrossSite(context: SentinelContext, request: SentinelRequest): void {
  if (isCrossSiteRequest(context, request, [])) throw new OAuthError('invalid_request', en.postedFromAnotherSite, { status: 403 });
}

/** The signed-in user of the account and the digest of their session, from the session cookie, or `null`. */
async function signedInUser(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<{ userId: string; sessionDigest: string; authTime: number; amr?: AmrValue[] | undefined } | null> {
  const sessionId = readSessionCookie(context, request);
  const session = sessionId === null ? null : await readSession(context, sessionId, accountId);
  if (session === null) return null;
  const { userId, authTime, amr } = session.record;
  const sessionDigest = sessionDigestOfKey(session.key);
  return amr === undefined ? { userId, sessionDigest, authTime } : { userId, sessionDigest, authTime, amr };
}

/**
 * Whether a sign-in is too old for an app registered with `default_max_age` (OpenID Connect Registration §2: its user
 * must have authenticated no longer ago than that). A browser signed in before then signs in again, as /authorize
 * has it, with the same `>=`; otherwise the device's ID token would carry an `auth_time` the app said it does not take.
 */
function tooOldFor(app: App, authTime: number, nowSeconds: number): boolean {
  const maxAge = signInMaxAge(app);
  return maxAge !== undefined && nowSeconds - authTime >= maxAge;
}

async function enterCode(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  refuseCrossSite(context, request);
  const form = await readForm(request, context.config.bodyLimit);
  // Before the code is read: a post that is not the page's own spends no throttle slot and starts no sign-in.
  if (!entryFormTokenMatches(context, request, single(form, 'csrf_token'))) {
    throw new OAuthError('invalid_request', en.formOutOfDate, { status: 403 });
  }
  const typed = single(form, 'user_code');
  const userCode = normalizeUserCode(typed);
  const again = (error: string): SentinelResponse =>
    entryPageResponse(context, request, accountId, { userCode: typed, error, status: 400 });
  // Something that cannot be a user code is not a guess at one: it costs no slot.
  if (userCode === null) return again(DEVICE_CODE_WRONG);
  const ip = clientIP(context.config, request);
  const keys = await codeEntryKeys(context, accountId, ip);
  const reservation = await reserveAttempt(context, keys);
  if (!reservation.granted) {
    context.emit({ type: 'login.throttled', accountId, usernameDigest: keys.usernameDigest, scope: reservation.scope });
    throw new OAuthError('temporarily_unavailable', DEVICE_TOO_MANY_CODES, {
      status: 429,
      headers: { 'retry-after': String(context.config.throttle.windowSeconds) },
    });
  }
  const found = await findByUserCode(context, accountId, userCode);
  const now = Math.floor(Date.now() / 1000);
  if (found === null || found.record.expiresAt <= now) {
    context.emit({ type: 'login.failed', accountId, usernameDigest: keys.usernameDigest, reason: 'unknown or expired user code' });
    return again(DEVICE_CODE_WRONG);
  }
  // Not settleSuccess: a right code proves nothing (anyone can mint one), so on a store without decrement the slot is
  // kept rather than the counter cleared.
  await refundAttempt(context, keys);
  if (found.record.status !== 'pending') return again(DEVICE_CODE_USED);
  const app = context.apps.findApp(accountId, found.record.clientId);
  const resolved = isThenable(app) ? await app : app;
  if (resolved === null) return again(DEVICE_CODE_WRONG);
  const appName = resolved.name ?? resolved.clientId;
  // A right code stores a record for whoever posts it (the sign-in it starts, or a signed-in browser's confirmation)
  // and gave its slot back above: anyone can mint one with a public device app and post it again and again. So each
  // counts per client address as /authorize's sign-ins do (interaction-bound.ts), before anything is stored.
  await takeInteractionSlot(context, ip);
  const user = await signedInUser(context, request, accountId);
  if (user === null || tooOldFor(resolved, user.authTime, now)) {
    // The browser's session (of another account when `user` is null), which the new one's cookie replaces.
    const browserSession = user?.sessionDigest ?? browserSessionDigest(context, request);
    return redirect(303, await startDeviceSignIn(context, request, found, appName, browserSession, signInMaxAge(resolved)));
  }
  // Already signed in here: straight to the confirmation, which names the app and the code before anything is allowed.
  const id = await createConfirmation(context, {
    accountId,
    grantId: found.grantId,
    appName,
    userCode,
    userId: user.userId,
    sessionDigest: user.sessionDigest,
    authTime: user.authTime,
    ...(user.amr === undefined ? {} : { amr: user.amr }),
    mountPath: request.mountPath ?? '',
  });
  return redirect(303, confirmationURL(context, request.mountPath, accountId, id, requestUiLocales(request)));
}

/**
 * The code entry page: GET shows it (prefilled from `verification_uri_complete`), POST checks the code and goes on to
 * sign-in or confirmation.
 *
 * @example
 * { name: 'device', methods: ['GET', 'POST'], path: '/api/account/{accountId}/device', handler: (c, r, p) => handleDeviceVerification(c, r, p.accountId) }
 */
export async function handleDeviceVerification(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  await requireAccount(context, accountId);
  if (request.method === 'POST') return enterCode(context, request, accountId);
  const given = normalizeUserCode(single(fromSearchParams(request.query), 'user_code'));
  return entryPageResponse(context, request, accountId, { userCode: given === null ? undefined : formatUserCode(given) });
}

/** The confirmation, if it exists, belongs to this account and to the session this browser signed in with. */
async function ownConfirmation(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  id: string | undefined,
): Promise<DeviceConfirmation> {
  const confirmation = await findConfirmation(context, id);
  if (confirmation === null || confirmation.accountId !== accountId) throw confirmationExpired();
  // A leaked confirmation link is useless elsewhere: only the browser session that signed in may decide, not even
  // another browser signed in as the same user.
  const user = await signedInUser(context, request, accountId);
  if (user === null || user.userId !== confirmation.userId || !digestsEqual(user.sessionDigest, confirmation.sessionDigest)) {
    throw confirmationExpired();
  }
  return confirmation;
}

/** The 503 of {@link decideDevice} whose every write lost to the device's polls. */
function isBusy(error: unknown): boolean {
  return isOAuthError(error) && error.code === 'temporarily_unavailable';
}

function confirmationExpired(): OAuthError {
  return new OAuthError('invalid_request', DEVICE_CONFIRMATION_EXPIRED);
}

/**
 * Writes the person's decision on the device authorization. Before the record changes (`prepare` of decideDevice),
 * for an approval: the app's check, then the device's entry in the user's session index, so that signing out
 * everywhere or disconnecting the app before the device polls voids it (device-session.ts); an approval the index
 * refuses (its browser session ended first) or fails to take is never written. Once the record's change stood, and
 * only then, the decision's event (`announce` of decideDevice): a decision that lost to another (two browsers deciding
 * one code at once) is never announced, and an `onEvent` that throws vetoes it, the record put back. An approval that
 * did not apply, was vetoed or failed takes its entry back; one that stood ends the sessions past the bound.
 */
async function applyDecision(
  context: SentinelContext,
  accountId: string,
  confirmation: DeviceConfirmation,
  approve: boolean,
): Promise<{ applied: boolean; record: DeviceRecord | null }> {
  const { userId, authTime, grantId } = confirmation;
  // A stored record is not trusted to name a method the service does not know: such an amr is dropped.
  const amr = readAmr(confirmation.amr);
  const decision = approve
    ? ({ status: 'approved', userId, authTime, ...(amr === undefined ? {} : { amr }) } as const)
    : ({ status: 'denied', userId } as const);
  let approval: DeviceApproval | undefined;
  let beyond: string[] = [];
  let vetoed = false;
  const prepare = async (record: DeviceRecord): Promise<void> => {
    // A denial always stands; an approval only while the app can still use the flow (still-approvable.ts).
    if (!approve) return;
    await assertStillApprovable(context, record);
    approval = { grantId, userId, authTime, record, approvedFrom: confirmation.sessionDigest };
    beyond = await indexDeviceApproval(context, approval);
  };
  const announce = (record: DeviceRecord): void => {
    try {
      context.emit({ type: approve ? 'device.approved' : 'device.denied', accountId, clientId: record.clientId, userId });
    } catch (error) {
      vetoed = true;
      throw error;
    }
  };
  const outcome = await decideDevice(context, grantId, decision, { prepare, announce }).catch(async (error: unknown) => {
    // Every write lost to the device's polls, the decision was vetoed, or the store failed at the record's write: the
    // approval did not apply (a write that landed with its answer lost was put back by decideDevice; should even
    // that fail, the poll finds no entry and issues nothing), and its entry goes, or the user's sessions would list,
    // and count towards the bound, a device that was never connected.
    if (approval !== undefined) {
      const withdrawn = withdrawDeviceApproval(context, approval, null);
      // A store failing there as well leaves the entry (the poll attaches no grant to an approval never written);
      // the store's first failure is the answer already.
      await (isBusy(error) || vetoed ? withdrawn : withdrawn.catch(() => undefined));
    }
    throw error;
  });
  if (approval === undefined) return outcome;
  if (outcome.applied) await endSessionsBeyondBound(context, approval, beyond);
  else await withdrawDeviceApproval(context, approval, outcome.record);
  return outcome;
}

async function decide(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  refuseCrossSite(context, request);
  const form = await readForm(request, context.config.bodyLimit);
  const id = single(form, 'confirmation');
  const confirmation = await ownConfirmation(context, request, accountId, id);
  const csrfToken = single(form, 'csrf_token');
  if (csrfToken === undefined || !constantTimeEqual(csrfToken, confirmation.csrfToken)) {
    throw new OAuthError('invalid_request', en.formOutOfDate, { status: 403 });
  }
  if (single(form, 'switch') !== undefined) return switchUser(context, request, accountId, id, confirmation);
  const approve = single(form, 'approve') !== undefined && single(form, 'deny') === undefined;
  // The sign-in's age was checked at code entry, and the page may have stayed open until past the app's limit: an
  // approval from a sign-in now too old signs in again, as code entry does (a denial needs no recent sign-in).
  if (approve && (await signInNowTooOld(context, accountId, confirmation))) {
    return switchUser(context, request, accountId, id, confirmation);
  }
  // Single use: of two decisions posted at once, one takes the confirmation; the other finds it gone.
  if (id === undefined || (await takeConfirmation(context, id)) === null) throw confirmationExpired();
  const { applied, record } = await applyDecision(context, accountId, confirmation, approve).catch(async (error: unknown) => {
    // A decision that failed on the service's side (a store, an onEvent that vetoes: a 500) or lost every write to the
    // device's polls (the 503, which says so) decided nothing: the confirmation is put back, so the person's choice
    // posted again decides, as a cancelled sign-in's interaction is put back (sign-in.ts). Putting it back is safe even
    // should the write have stood: the next decision finds the authorization no longer pending and changes nothing. A
    // refusal (a 4xx: the app can no longer use the flow, the browser's session ended) is final.
    if (!isOAuthError(error) || error.code === 'server_error' || isBusy(error)) {
      // A store failing here as well leaves the confirmation taken; the decision's error is still the answer.
      await restoreConfirmation(context, id, confirmation).catch(() => undefined);
    }
    throw error;
  });
  if (!applied) return undecidedPageResponse(context, request, accountId, record);
  return outcomePageResponse(context, request, approve ? 'approved' : 'denied');
}

/** Whether the confirmation's sign-in is now older than its app's `defaultMaxAge` ({@link tooOldFor}). */
async function signInNowTooOld(context: SentinelContext, accountId: string, confirmation: DeviceConfirmation): Promise<boolean> {
  const found = await readDevice(context, confirmation.grantId);
  if (found === null || found.record.accountId !== accountId) return false;
  const app = context.apps.findApp(accountId, found.record.clientId);
  const resolved = isThenable(app) ? await app : app;
  // No app: the approval is refused further on (still-approvable.ts), with nothing to sign in for.
  return resolved !== null && tooOldFor(resolved, confirmation.authTime, Math.floor(Date.now() / 1000));
}

/**
 * "Not you?", and an Allow from a sign-in grown too old for the app: the confirmation is spent (this user decides
 * nothing) and the same device code goes to a new sign-in, whose login page asks for credentials whatever session the
 * browser holds; its end replaces the browser's session and leads to a confirmation of whoever signed in. A code
 * decided or expired meanwhile answers as a late decision does.
 */
async function switchUser(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  id: string | undefined,
  confirmation: DeviceConfirmation,
): Promise<SentinelResponse> {
  if (id === undefined || (await takeConfirmation(context, id)) === null) throw confirmationExpired();
  // Failed on the service's side (a store, the app store, while the new sign-in was being parked): nothing was
  // switched, so the confirmation is put back and the same form, posted again, switches (or decides).
  return puttingBackOnFailure(
    () => signInAgain(context, request, accountId, confirmation),
    () => restoreConfirmation(context, id, confirmation),
  );
}

/** The sign-in "Not you?" starts for the code of a confirmation it took, or the page of a code no longer pending. */
async function signInAgain(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  confirmation: DeviceConfirmation,
): Promise<SentinelResponse> {
  const found = await readDevice(context, confirmation.grantId);
  const now = Math.floor(Date.now() / 1000);
  if (found === null || found.record.accountId !== accountId || found.record.status !== 'pending' || found.record.expiresAt <= now) {
    return undecidedPageResponse(context, request, accountId, found?.record ?? null);
  }
  // The new sign-in must be as recent as the app asks (its default_max_age), as the first one had to be.
  const app = context.apps.findApp(accountId, found.record.clientId);
  const resolved = isThenable(app) ? await app : app;
  const maxAge = resolved === null ? undefined : signInMaxAge(resolved);
  return redirect(303, await startDeviceSignIn(context, request, found, confirmation.appName, confirmation.sessionDigest, maxAge));
}

/** The name the confirmation page shows: the `name` claim when the claims hook gives one (as the account page), else the user id. */
async function displayName(context: SentinelContext, accountId: string, userId: string): Promise<string> {
  const claims = context.config.users?.claims;
  if (claims === undefined) return userId;
  const found = await claims({ accountId, userId, scopes: ['openid', 'profile'] });
  const name = found?.name;
  return typeof name === 'string' && name.trim() !== '' ? name.slice(0, 200) : userId;
}

/**
 * The confirmation page: GET names the app, the code and the signed-in user, POST allows or denies (or signs in as
 * someone else).
 *
 * @example
 * { name: 'device-confirm', methods: ['GET', 'POST'], path: '/api/account/{accountId}/device/confirm', handler: (c, r, p) => handleDeviceConfirmation(c, r, p.accountId) }
 */
export async function handleDeviceConfirmation(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  if (request.method === 'POST') return decide(context, request, accountId);
  const id = single(fromSearchParams(request.query), 'confirmation');
  const confirmation = await ownConfirmation(context, request, accountId, id);
  const userName = await displayName(context, accountId, confirmation.userId);
  return confirmPageResponse(context, request, id ?? '', confirmation, userName);
}
