/**
 * What happens after a right password: a TOTP step when the user store asks for one, then (when the host enables
 * it) the offer to add a passkey, then the end of the sign-in. Each step parks the sign-in in a
 * {@link PendingSignIn}; the interaction itself is taken only at the very end, so it stays single-use (a recovery
 * code's step holds it while the code is spent, see totp-step.ts, and puts it back for the passkey offer).
 */
import type { AuthenticatedUser } from '../config.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { readSessionCookie } from '../authorize/state/session-cookie.js';
import { signedInResponse, unmetRequirementsResponse } from '../authorize/endpoints/signed-in-response.js';
import { loginPageResponse } from '../authorize/pages/login-response.js';
import { mayEnrolPasskey, stepUpMethod } from './step-up-method.js';
import { restoreInteraction, restoringInteraction, takeInteraction, type InteractionRecord } from '../authorize/state/interaction.js';
import { loginStepURL } from '../authorize/endpoints/login-step-url.js';
import { webAuthnUserID } from '../passkeys/user-handle.js';
import { startPending } from './pending-sign-in.js';
import { browserTie, withStepTieRemoved } from './step-cookie.js';
import { type AmrValue, assuranceClaims, PASSWORD_AMR } from '../assurance/levels.js';

/** Who is signing in, as the steps carry it. */
export interface SignInSubject {
  userId: string;
  username?: string | undefined;
  authTime: number;
  /** The methods the user passed (RFC 8176 `amr`). */
  amr?: AmrValue[] | undefined;
}

/** The login page's message when only a passkey reaches the level the application asked for. */
export const PASSKEY_NEEDED = 'This application asks for a stronger sign-in. Sign in with your passkey.';

/**
 * The one answer for a link that is gone (expired, completed, or never existed); `removeCookie` is the `Set-Cookie`
 * that removes the step cookie of a sign-in found gone (step-cookie.ts `stepTieRemoval`).
 */
export function expiredSignIn(removeCookie?: string): OAuthError {
  return new OAuthError('invalid_request', 'This sign-in link is invalid or has expired. Go back to the application and start again.', {
    ...(removeCookie === undefined ? {} : { headers: { 'set-cookie': removeCookie } }),
  });
}

/**
 * Ends the sign-in: takes the interaction (of concurrent completions exactly one gets it), then the session, the
 * code and the 303 to the application.
 *
 * @example
 * return completeSignIn(context, request, interactionId, subject, ip);
 */
export async function completeSignIn(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  subject: SignInSubject,
  ip: string | null,
): Promise<SentinelResponse> {
  const taken = await takeInteraction(context, interactionId);
  if (taken === null) throw expiredSignIn();
  return finishSignIn(context, request, { id: interactionId, record: taken }, subject, ip);
}

/**
 * The end of a sign-in whose interaction the caller has taken: the event, the session, the code, the 303. A failure
 * on the way puts the interaction back, so that the 500 can be retried.
 */
function finishSignIn(
  context: SentinelContext,
  request: SentinelRequest,
  held: { id: string; record: InteractionRecord },
  subject: SignInSubject,
  ip: string | null,
): Promise<SentinelResponse> {
  return restoringInteraction(context, held.id, held.record, async () =>
    // The sign-in is over: its step cookie (if it had a step) goes with it.
    withStepTieRemoved(context, request, held.id, held.record.mountPath, await signInEnd(context, request, held.record, subject, ip)),
  );
}

async function signInEnd(
  context: SentinelContext,
  request: SentinelRequest,
  taken: InteractionRecord,
  subject: SignInSubject,
  ip: string | null,
): Promise<SentinelResponse> {
  const { accountId, clientId } = taken.request;
  context.emit({
    type: 'login.succeeded',
    accountId,
    clientId,
    userId: subject.userId,
    username: subject.username,
    ...assuranceClaims(subject.amr),
  });
  return signedInResponse(context, taken, {
    userId: subject.userId,
    authTime: subject.authTime,
    amr: subject.amr,
    previousSessionId: readSessionCookie(context, request),
    ip: ip ?? undefined,
  });
}

/**
 * Whether the sign-in of `subject` goes on to the offer to add a passkey rather than straight to its end.
 *
 * @example
 * const offer = await offersPasskey(context, accountId, subject);
 */
export async function offersPasskey(context: SentinelContext, accountId: string, subject: SignInSubject): Promise<boolean> {
  const passkeys = context.config.users?.passkeys;
  const { userId, amr } = subject;
  if (!context.config.passkeys.offerRegistration || passkeys === undefined || webAuthnUserID(userId) === null) return false;
  // Offered to a user without a passkey, on a sign-in as strong as any the user has: a password alone never adds the
  // passkey that would skip the user's TOTP step.
  return (await passkeys.list({ accountId, userId })).length === 0 && (await mayEnrolPasskey(context, { accountId, userId, amr }));
}

/**
 * After the second factor (or when there is none): the passkey offer, or the end of the sign-in. `offer` is
 * {@link offersPasskey}'s answer when the caller asked it already (before taking its step, so that a failing hook
 * leaves the step in place); without it, it is asked here.
 *
 * @example
 * return afterSecondFactor(context, request, interaction, subject, ip);
 */
export async function afterSecondFactor(
  context: SentinelContext,
  request: SentinelRequest,
  interaction: { id: string; record: InteractionRecord },
  subject: SignInSubject,
  ip: string | null,
  offer?: boolean,
): Promise<SentinelResponse> {
  const { accountId } = interaction.record.request;
  if (offer ?? (await offersPasskey(context, accountId, subject))) return parkAtPasskeyOffer(context, request, interaction, subject);
  return completeSignIn(context, request, interaction.id, subject, ip);
}

/**
 * {@link afterSecondFactor} for a step that took and held the interaction before its answer had a cost (a recovery
 * code, spent by `users.recover`), with the passkey offer (`offer`, {@link offersPasskey}) decided before that cost:
 * the held interaction is put back for the offer, or ends the sign-in, without being looked up again. An interaction
 * whose lifetime ended while it was held cannot go back: it ends the sign-in, without the offer.
 *
 * @example
 * return afterHeldSecondFactor(context, request, { id, record: taken }, subject, offer, ip);
 */
export async function afterHeldSecondFactor(
  context: SentinelContext,
  request: SentinelRequest,
  held: { id: string; record: InteractionRecord },
  subject: SignInSubject,
  offer: boolean,
  ip: string | null,
): Promise<SentinelResponse> {
  if (!offer) return finishSignIn(context, request, held, subject, ip);
  // The offer's page runs on the interaction: it goes back (onto an empty key: nothing can have made it meanwhile).
  // When its lifetime ended while the code was spent, it cannot: the sign-in ends here, without the offer, rather
  // than as "expired" with the user's recovery code gone.
  if (!(await restoreInteraction(context, held.id, held.record))) return finishSignIn(context, request, held, subject, ip);
  return parkAtPasskeyOffer(context, request, held, subject);
}

async function parkAtPasskeyOffer(
  context: SentinelContext,
  request: SentinelRequest,
  interaction: { id: string; record: InteractionRecord },
  subject: SignInSubject,
): Promise<SentinelResponse> {
  const { accountId } = interaction.record.request;
  // Only the subject's fields: a caller may hand over a whole pending record, whose stage must not carry over.
  const { userId, username, authTime, amr } = subject;
  const tie = browserTie(context, request, interaction.id, interaction.record.mountPath);
  await startPending(context, interaction.id, { stage: 'passkey-offer', userId, username, authTime, amr, browser: tie.digest });
  const location = loginStepURL(context, interaction.record.mountPath, accountId, interaction.id, 'passkey/register');
  return redirect(303, location, { 'set-cookie': tie.cookies });
}

/**
 * After a right password: the TOTP step when the user store answered `secondFactor: 'totp'` or the request's `acr`
 * needs it (step-up, {@link stepUpMethod}), the login page again when only a passkey reaches that level, an
 * `unmet_authentication_requirements` redirect when nothing does, else on.
 * An unknown `secondFactor` fails closed (500 server_error): a factor the service cannot check is never skipped.
 *
 * @example
 * return afterPassword(context, request, interaction, { user, username, ip });
 */
export async function afterPassword(
  context: SentinelContext,
  request: SentinelRequest,
  interaction: { id: string; record: InteractionRecord },
  input: { user: AuthenticatedUser; username: string; ip: string | null },
): Promise<SentinelResponse> {
  const subject: SignInSubject = {
    userId: input.user.id,
    username: input.username,
    authTime: Math.floor(Date.now() / 1000),
    amr: [...PASSWORD_AMR],
  };
  const factor = input.user.secondFactor;
  if (factor !== undefined && factor !== null && factor !== 'totp') {
    throw new Error(`sentinel-idp: users.authenticate asked for an unknown second factor`);
  }
  if (factor === 'totp' && typeof context.config.users?.totpSecret !== 'function') {
    throw new Error('sentinel-idp: users.authenticate asked for a TOTP step but users.totpSecret is missing');
  }
  const authorization = interaction.record.request;
  const { accountId } = authorization;
  const method = await stepUpMethod(context, {
    accountId,
    userId: subject.userId,
    askedTotp: factor === 'totp',
    required: authorization.acr,
  });
  if (method === 'none') return afterSecondFactor(context, request, interaction, subject, input.ip);
  if (method === 'passkey') {
    // Only a passkey reaches the level: the same page again, saying so (the interaction stays open for it).
    return loginPageResponse(context, interaction.id, interaction.record, { username: input.username, error: PASSKEY_NEEDED, request });
  }
  if (method === 'unreachable') {
    const taken = await takeInteraction(context, interaction.id);
    if (taken === null) throw expiredSignIn();
    // A failure of the answer (the app store, a vetoed authorize.denied) puts the interaction back, as a sign-in's.
    return restoringInteraction(context, interaction.id, taken, () =>
      unmetRequirementsResponse(context, taken, 'this user has no method that reaches it'),
    );
  }
  const tie = browserTie(context, request, interaction.id, interaction.record.mountPath);
  await startPending(context, interaction.id, {
    stage: 'totp',
    userId: subject.userId,
    username: subject.username,
    authTime: subject.authTime,
    amr: subject.amr,
    browser: tie.digest,
  });
  return redirect(303, loginStepURL(context, interaction.record.mountPath, accountId, interaction.id, 'totp'), {
    'set-cookie': tie.cookies,
  });
}
