/**
 * Adding a passkey after a password sign-in (when `passkeys.offerRegistration` is on and the user has none):
 *
 * - `GET …/login/passkey/register?interaction=…` → the offer page ("Add a passkey" / "Not now").
 * - `POST …/login/passkey/register/options` (`csrf_token`) → creation options with a fresh challenge; the
 *   passkey must be discoverable (resident), so it can sign in without a username later.
 * - `POST …/login/passkey/register` (`csrf_token`, `attestation` or `skip`) → verified and saved through
 *   `users.passkeys.save` (a `passkey.added` event), then the sign-in ends; "Not now" ends it without a passkey.
 *
 * The step is CSRF-bound to the pending sign-in, so only the browser that passed the password can add a passkey
 * to that user, and only during that sign-in, and only while the sign-in is as strong as any factor the user has.
 */
import { clientIP } from '../http/client-ip.js';
import { en } from '../i18n/en.js';
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { single } from '../http/params.js';
import { completeSignIn, expiredSignIn } from '../second-factor/continue-sign-in.js';
import { restoringPending, takePending } from '../second-factor/pending-sign-in.js';
import { passkeyOfferPage } from '../second-factor/step-page.js';
import { readStepRequest, type StepRequest } from '../second-factor/step-request.js';
import { mayEnrolPasskey } from '../second-factor/step-up-method.js';
import { takeChallenge } from './challenge.js';
import { passkeyCreationOptions } from './creation-options.js';
import { parseAttestation } from './credential-json.js';
import { saveUnlessTaken, verifiedNewPasskey } from './verify-registration.js';
import { webAuthnUserID } from './user-handle.js';

/** The message of a passkey that could not be added. */
export const PASSKEY_NOT_ADDED = 'The passkey was not added. Try again, or continue without it.';

/** The message of a passkey whose credential id a user of the account already has (the offer stays open). */
export const PASSKEY_ALREADY_REGISTERED = en.passkeyAlreadyRegistered;

function hooksOf(context: SentinelContext) {
  const hooks = context.config.users?.passkeys;
  // The offer is only made when the hooks exist, so their absence here is a broken configuration: fail closed.
  if (hooks === undefined) throw new Error('sentinel-idp: passkey registration needs users.passkeys');
  return hooks;
}

/**
 * Whether the offer still stands: the sign-in is as strong as any factor the user has now. It was when the sign-in
 * was parked at the offer, but the offer stays open for `interactionTtl`, and meanwhile the user may have added a
 * passkey (the account page, another sign-in's offer) or a TOTP secret. A password alone would then add the passkey
 * that skips them, as the account page refuses (account-passkeys.ts), so the options and the save ask again.
 */
function offerStands(context: SentinelContext, accountId: string, step: StepRequest): Promise<boolean> {
  const { userId, amr } = step.pending;
  return mayEnrolPasskey(context, { accountId, userId, amr });
}

/**
 * Answers the creation options of a new passkey, or `403` when the offer no longer stands ({@link offerStands}).
 *
 * @example
 * { name: 'login-passkey-register-options', methods: ['POST'], path: '/api/account/{accountId}/login/passkey/register/options', handler: (c, r, p) => handlePasskeyRegisterOptions(c, r, p.accountId) }
 */
export async function handlePasskeyRegisterOptions(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  const step = await readStepRequest(context, request, accountId, 'passkey-offer');
  const { userId, username } = step.pending;
  const userID = webAuthnUserID(userId);
  if (userID === null) throw expiredSignIn();
  if (!(await offerStands(context, accountId, step))) {
    throw new OAuthError('invalid_request', PASSKEY_NOT_ADDED, { status: 403 });
  }
  return passkeyCreationOptions(context, hooksOf(context), {
    accountId,
    userId,
    userID,
    userName: username ?? userId,
    ceremony: step.interactionId,
  });
}

/**
 * The offer page (GET) and its answer (POST).
 *
 * @example
 * { name: 'login-passkey-register', methods: ['GET', 'POST'], path: '/api/account/{accountId}/login/passkey/register', handler: (c, r, p) => handlePasskeyRegister(c, r, p.accountId) }
 */
export async function handlePasskeyRegister(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<SentinelResponse> {
  const step = await readStepRequest(context, request, accountId, 'passkey-offer');
  if (request.method !== 'POST') return passkeyOfferPage(context, request, step);
  const ip = clientIP(context.config, request);
  const finish = async (): Promise<SentinelResponse> => {
    // Only the offer that was read (and whose CSRF token this post carried) may end; one that replaced it since is
    // another sign-in's (see takePending).
    if (!(await takePending(context, step.interactionId, step.pending))) throw expiredSignIn();
    return restoringPending(context, step.interactionId, step.pending, () =>
      completeSignIn(context, request, step.interactionId, step.pending, ip),
    );
  };
  if (single(step.form, 'skip') !== undefined) return finish();
  const notAdded = () => passkeyOfferPage(context, request, { ...step, error: PASSKEY_NOT_ADDED, status: 400 });
  // Before the challenge is spent, as the account page asks: "Not now" still ends the sign-in.
  if (!(await offerStands(context, accountId, step))) return notAdded();
  const challenge = await takeChallenge(context, 'register', step.interactionId);
  const attestation = parseAttestation(single(step.form, 'attestation'));
  if (challenge === null || attestation === null) return notAdded();
  const passkey = await verifiedNewPasskey(context, challenge, attestation);
  if (passkey === null) return notAdded();
  const { userId } = step.pending;
  const saved = await saveUnlessTaken(context, hooksOf(context), { accountId, userId, passkey });
  if (saved === 'taken') return passkeyOfferPage(context, request, { ...step, error: PASSKEY_ALREADY_REGISTERED, status: 400 });
  // Offered only to a user with none (and refused above once they have one), so only passkeys added elsewhere at
  // this very moment can reach `passkeys.maxPerUser`.
  if (saved === 'limit') return notAdded();
  // Audited as the account page's are: from now on it signs in at the strongest level, password and TOTP step aside.
  // Committed: the passkey is saved, and a throwing onEvent must not tell the user it was not.
  context.emit({ type: 'passkey.added', accountId, clientId: step.interaction.request.clientId, userId }, 'committed');
  return finish();
}
