/**
 * The end of a successful sign-in, shared by the built-in login form and `sentinel.completeLogin()`: a new
 * device session (fresh id, the previous one ended once the new one and its code are in place: no fixation), an authorization code, and a 303 back to the
 * application (RFC 9700 §4.12: 303 so the browser does not re-post the credentials to the app).
 */
import { OAuthError, wireDescription } from '../../errors.js';
import { FAPI2_CODE_TTL_SECONDS } from '../../assurance/fapi2.js';
import { issueCode } from '../../token/code-records.js';
import type { SentinelContext } from '../../http/context.js';
import { redirect, type SentinelResponse } from '../../http/messages.js';
import { authorizationResponseURL, codeResponseURL } from '../request/authorization-response.js';
import { sessionCookie } from '../state/session-cookie.js';
import type { InteractionRecord } from '../state/interaction.js';
import { createSession } from '../state/new-session.js';
import { parseSessionRecord, type SessionRecord, sessionDigestOfKey, sessionKey, sessionKeyOfDigest } from '../state/session.js';
import { retireIndexedSession, withdrawUnsentSession } from '../../sessions/end-sessions.js';
import { sessionSid } from '../../sessions/session-index.js';
import type { AuthorizationRequest } from '../request/validate-request.js';
import { type AmrValue, assuranceClaims } from '../../assurance/levels.js';
import { meetsAcrRequirement, reportedAcr } from '../../assurance/reported-acr.js';
import { deviceConfirmationLocation } from '../../device/confirmation.js';
import { staleSignInReason } from '../request/prompt.js';
import { assertStillDeliverable } from '../request/still-deliverable.js';

/** Who signed in, and what the browser had before. */
export interface SignedInInput {
  userId: string;
  /** Seconds since the epoch; now when omitted. */
  authTime?: number | undefined;
  /** How the user authenticated (RFC 8176); the session, the code and the tokens carry it. */
  amr?: AmrValue[] | undefined;
  /** The session id the browser presented, ended so that no earlier id survives the login. */
  previousSessionId?: string | null | undefined;
  /** The digest of that session when there is no cookie to read (`completeLogin()`: what /authorize saw). */
  previousSessionDigest?: string | undefined;
  ip?: string | undefined;
}

/**
 * Issues a code for a validated request and returns the redirect that delivers it (`code`, `state`, `iss`).
 * `announce` runs once the code is written, before its `code.issued` ({@link issueCode}).
 *
 * @example
 * return redirect(302, await codeRedirectURL(context, authorization, { userId, authTime, amr, sid }));
 */
export async function codeRedirectURL(
  context: SentinelContext,
  authorization: AuthorizationRequest,
  user: { userId: string; authTime: number; amr?: AmrValue[] | undefined; sid: string },
  announce?: () => void | Promise<void>,
): Promise<string> {
  const code = await issueCode(
    context,
    {
      accountId: authorization.accountId,
      clientId: authorization.clientId,
      redirectUri: authorization.redirectUri,
      redirectUriInRequest: authorization.redirectUriInRequest,
      userId: user.userId,
      authTime: user.authTime,
      sid: user.sid,
      scope: authorization.scope,
      codeChallenge: authorization.codeChallenge,
      nonce: authorization.nonce,
      dpopJkt: authorization.dpopJkt,
      amr: user.amr,
      // Essential acr values (OpenID Connect Core §5.5.1.1): the tokens must report one of them, not the sign-in's
      // own level; the sign-in was checked to reach one (meetsAcrRequirement).
      acr: authorization.essentialAcr === undefined ? undefined : reportedAcr(authorization.essentialAcr, user.amr),
      resources: authorization.resources,
      claims: authorization.requestedClaims,
      issuedAt: Math.floor(Date.now() / 1000),
    },
    authorization.profile === 'fapi2' ? FAPI2_CODE_TTL_SECONDS : undefined,
    announce,
  );
  return codeResponseURL(authorization, code);
}

/**
 * The answer to a sign-in that does not meet its request: `error` back to the application with `state` and `iss`,
 * an `authorize.denied` event, and nothing issued (no session, no code).
 */
function refusedSignInResponse(
  context: SentinelContext,
  authorization: AuthorizationRequest,
  error: string,
  description: string,
): SentinelResponse {
  context.emit({
    type: 'authorize.denied',
    accountId: authorization.accountId,
    clientId: authorization.clientId,
    error,
    reason: description,
  });
  return redirect(303, authorizationResponseURL(authorization, { error, error_description: wireDescription(description) }));
}

/**
 * Refuses a device sign-in older than its app's `default_max_age` (the only way one is stale: a device sign-in has
 * no `prompt`). It has no redirect URI to answer to, and the host's `completeLogin()` no request for the device
 * pages: a 400 page, the same `authorize.denied` event, nothing issued, and the device still waiting (the person
 * did not refuse; entering the code again signs in anew).
 */
function refuseStaleDeviceSignIn(context: SentinelContext, authorization: AuthorizationRequest, reason: string): never {
  const { accountId, clientId } = authorization;
  context.emit({ type: 'authorize.denied', accountId, clientId, error: 'login_required', reason });
  throw new OAuthError('login_required', `${reason}. Enter the code from your device again and sign in anew.`, { status: 400 });
}

/**
 * The answer to a sign-in that cannot reach the level its request asked for (`acr_values`, an essential `acr`):
 * `unmet_authentication_requirements` back to the application, with `state` and `iss`; nothing is issued. Only while
 * the app still takes it there ({@link assertStillDeliverable}). A sign-in for the service's own page (the account
 * page's step-up) has no app to look up, as in {@link signedInResponse}: it goes back to that page.
 *
 * @example
 * return await unmetRequirementsResponse(context, interaction.record, 'no passkey or TOTP secret for this user');
 */
export async function unmetRequirementsResponse(
  context: SentinelContext,
  interaction: InteractionRecord,
  reason: string,
): Promise<SentinelResponse> {
  const authorization = interaction.request;
  if (interaction.returnTo === undefined && interaction.device === undefined) await assertStillDeliverable(context, authorization);
  return unmetResponse(context, authorization, reason);
}

function unmetResponse(context: SentinelContext, authorization: AuthorizationRequest, reason: string): SentinelResponse {
  const description = `the sign-in cannot reach the requested acr (${authorization.acr ?? ''}): ${reason}`;
  return refusedSignInResponse(context, authorization, 'unmet_authentication_requirements', description);
}

/**
 * Removes the browser's earlier session record once the new session is in place: carried over by it (`carried`, the
 * same user), or then retired in its user's index (another user's). The record goes first: retiring the entry can
 * drop it from the index (one that lists no live grant), and a record left alive by a failure in between was a
 * session the browser still held that no ending of its user's sessions could find. A failure of the retirement
 * leaves the entry listed for a session already over, which every ending passes over.
 */
async function endPreviousSession(
  context: SentinelContext,
  previous: SessionRecord,
  previousDigest: string,
  carried: boolean,
): Promise<void> {
  const { accountId, userId } = previous;
  // Taken, not deleted: of concurrent sign-ins in the one browser, only one reports its ending.
  const taken = parseSessionRecord(await context.store.take(sessionKeyOfDigest(previousDigest)));
  // Ended already: committed, so a throwing onEvent cannot fail a sign-in whose session is in place.
  if (taken !== null) context.emit({ type: 'session.ended', accountId, userId, reason: 'replaced' }, 'committed');
  // Also when another sign-in took the record first: retiring twice changes nothing.
  if (!carried) await retireIndexedSession(context, accountId, userId, previousDigest);
}

/**
 * Creates the session and the code of a completed interaction and answers 303 to the application.
 *
 * @example
 * return signedInResponse(context, interaction, { userId: user.id, previousSessionId, ip });
 */
export async function signedInResponse(
  context: SentinelContext,
  interaction: InteractionRecord,
  input: SignedInInput,
): Promise<SentinelResponse> {
  const authorization = interaction.request;
  const { accountId } = authorization;
  const authTime = input.authTime ?? Math.floor(Date.now() / 1000);
  // The app or its redirect URI may be gone since /authorize (disabled, deleted, the URI removed): neither a code nor
  // a refusal goes there then. A sign-in for the service's own page or a device has no redirect URI.
  if (interaction.returnTo === undefined && interaction.device === undefined) await assertStillDeliverable(context, authorization);
  // Every way in (the login form and its steps, a passkey, `completeLogin()`) ends here: a sign-in below the level
  // the request asked for (or that none of its essential acr values can report) gets no session and no code,
  // whatever led to it.
  if (!meetsAcrRequirement(authorization, input.amr)) {
    return unmetResponse(context, authorization, 'the methods used do not reach it');
  }
  // Likewise a sign-in older than the request allows (prompt=login, max_age): only a host's page can hand one over,
  // and the tokens would carry its old auth_time. The user must sign in again, as prompt=none's answer says.
  const stale = staleSignInReason(authorization, authTime, interaction.createdAt, Math.floor(Date.now() / 1000));
  if (stale !== null && interaction.device !== undefined) refuseStaleDeviceSignIn(context, authorization, stale);
  if (stale !== null) return refusedSignInResponse(context, authorization, 'login_required', stale);
  // The request named its user (id_token_hint): a sign-in by anyone else answers it no more than their session would
  // (OpenID Connect Core §3.1.2.1), or the app, re-confirming a known user, would get another person's tokens.
  if (authorization.idTokenHintSubject !== undefined && authorization.idTokenHintSubject !== input.userId) {
    return refusedSignInResponse(context, authorization, 'login_required', 'the user who signed in is not the one named by id_token_hint');
  }
  // Likewise the claims parameter's sub (§3.1.2.2: the OP MUST NOT reply with tokens for a different user).
  if (authorization.claimsSubject !== undefined && authorization.claimsSubject !== input.userId) {
    return refusedSignInResponse(
      context,
      authorization,
      'login_required',
      'the user who signed in is not the one the claims parameter asks for (sub)',
    );
  }
  const previousDigest =
    input.previousSessionId === undefined || input.previousSessionId === null
      ? input.previousSessionDigest
      : sessionDigestOfKey(sessionKey(input.previousSessionId));
  const previous = previousDigest === undefined ? null : parseSessionRecord(await context.store.get(sessionKeyOfDigest(previousDigest)));
  // The same user signing in again (prompt=login, max_age, a step-up): the new session carries the earlier one over,
  // in the write that indexes it, so signing out of this browser ends the earlier sign-in's grants too. Another
  // user's session is only retired: its grants are that user's, not to be ended by this one's logout.
  const replaces = previous !== null && previous.accountId === accountId && previous.userId === input.userId ? previousDigest : undefined;
  // The new session (carrying the earlier one) first, the earlier record removed only last, once this sign-in's
  // event and code are written: a store failing at any write up to that one, or an onEvent vetoing the sign-in, leaves
  // the browser with its earlier cookie (no new one is sent) and that session's record, so it stays signed in as
  // before and its logout still ends every grant issued through it. Removed before the code, a failure there signed
  // the browser out and left the earlier sign-in's grants carried by a session no browser holds.
  const sessionId = await createSession(context, { accountId, userId: input.userId, authTime, amr: input.amr, replaces });
  try {
    const location = await signedInLocation(context, interaction, { ...input, authTime }, sessionId);
    if (previous !== null && previousDigest !== undefined) {
      await endPreviousSession(context, previous, previousDigest, replaces !== undefined);
    }
    return redirect(303, location, { 'set-cookie': sessionCookie(context, interaction.mountPath, sessionId) });
  } catch (error) {
    // No cookie is sent for the new session: it goes too, record and index entry, so the user's sessions are listed
    // as they were (left behind, its id is known to no one, but its entry hid the browser's earlier session).
    const sessionDigest = sessionDigestOfKey(sessionKey(sessionId));
    // The earlier session of the same user, whose entry the new one's write may have dropped, is indexed again.
    const earlier =
      replaces === undefined || previous === null
        ? undefined
        : { sessionDigest: replaces, authTime: previous.authTime, sessionEnd: Math.ceil(previous.expiresAt / 1000), grants: [] };
    await withdrawUnsentSession(context, accountId, input.userId, sessionDigest, earlier).catch(() => undefined);
    throw error;
  }
}

/**
 * Where a sign-in whose session `sessionId` was just created goes, with its `session.created` event: back to the
 * service's own page, or on with a code (an application) or to the device confirmation page (a device).
 */
async function signedInLocation(
  context: SentinelContext,
  interaction: InteractionRecord,
  input: SignedInInput & { authTime: number },
  sessionId: string,
): Promise<string> {
  const authorization = interaction.request;
  const { accountId, clientId } = authorization;
  if (interaction.returnTo !== undefined) {
    // A sign-in to the service's own page (the account page): the session is all it wanted, no app gets a code.
    context.emit({ type: 'session.created', accountId, userId: input.userId, ...assuranceClaims(input.amr) });
    return interaction.returnTo;
  }
  const announce = (): void =>
    context.emit({ type: 'session.created', accountId, clientId, userId: input.userId, ...assuranceClaims(input.amr) });
  const sessionDigest = sessionDigestOfKey(sessionKey(sessionId));
  const sid = sessionSid(accountId, input.userId, sessionDigest);
  const user = { userId: input.userId, authTime: input.authTime, amr: input.amr, sid };
  // An application's sign-in announces its session once the code is written too (a code write that fails takes the
  // session back, and no event may say it was created), and a veto deletes that code as well.
  if (interaction.device === undefined) return codeRedirectURL(context, authorization, user, announce);
  // A device sign-in (RFC 8628) goes on to the confirmation page, which names the app before anything is allowed,
  // and only to this browser's new session (the digest, never the id, is kept with the confirmation); announced once
  // the confirmation is written, as a code is.
  return deviceConfirmationLocation(context, interaction, interaction.device, { ...user, sessionDigest }, announce);
}
