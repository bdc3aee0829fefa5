/**
 * `GET|POST {basePath}/api/account/{accountId}/login/totp?interaction=…` — the TOTP step (RFC 6238) after a right
 * password, or a recovery code through `users.recover`.
 *
 * POST order, as on the login form: step checks (interaction, pending step, cross-site, CSRF), then the throttle
 * reservation (a refused attempt never checks a code), then the code. Wrong, replayed and malformed codes all get
 * the same answer and all count; a right one takes the step atomically, so it completes once, after what comes next
 * (the passkey offer) is worked out, so a failing hook leaves the step for the next code.
 *
 * A recovery code is the other way round: `users.recover` spends the code as it checks it, so the step and then the
 * interaction are taken first and the code is looked at only by the request that holds both. A step or interaction
 * gone by then (expired, answered by a concurrent request, replaced by another user's password, cancelled on the
 * login form) leaves the code unused; nothing else can end the sign-in while the code is spent; and what comes next
 * (the passkey offer, which asks `users.passkeys.list`; the app, looked up again in the AppStore) is worked out before
 * the code is spent. A code that is not accepted, or a hook failing before it is, puts both back.
 */
import { clientIP } from '../http/client-ip.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { single } from '../http/params.js';
import { afterHeldSecondFactor, afterSecondFactor, expiredSignIn, offersPasskey, type SignInSubject } from './continue-sign-in.js';
import { restoreInteraction, takeInteraction, type InteractionRecord } from '../authorize/state/interaction.js';
import { assertStillDeliverable } from '../authorize/request/still-deliverable.js';
import { restorePending, restoringPending, takePending } from './pending-sign-in.js';
import { totpPage } from './step-page.js';
import { readStepRequest, type StepRequest } from './step-request.js';
import { checkTotp, totpSecretMarker } from './totp.js';
import { SECOND_FACTOR_AMR } from '../assurance/levels.js';
import { reserveOrRefuse, secondFactorKeys, secondFactorSecretKeys, settleSuccess } from './totp-throttle.js';
import type { ThrottleKeys } from '../authorize/state/throttle.js';

/** The one answer for every code that is not accepted, so the page never tells a replay from a typo. */
export const WRONG_CODE = 'That code is not correct. Try again.';
const MISSING_CODE = 'Enter the code from your authenticator app.';
const MAX_RECOVERY_CODE = 64;

/**
 * Handles the TOTP step.
 *
 * @example
 * { name: 'login-totp', methods: ['GET', 'POST'], path: '/api/account/{accountId}/login/totp', handler: (c, r, p) => handleTotpStep(c, r, p.accountId) }
 */
export async function handleTotpStep(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const step = await readStepRequest(context, request, accountId, 'totp');
  const page = (error?: string, status?: number) => totpPage(context, request, { ...step, error, status });
  if (request.method !== 'POST') return page();
  const code = single(step.form, 'code')?.replace(/\s+/g, '');
  const recoveryCode = single(step.form, 'recovery_code')?.trim();
  const useRecovery = recoveryCode !== undefined && recoveryCode !== '';
  if (!useRecovery && (code === undefined || code === '')) return page(MISSING_CODE, 400);

  const { userId } = step.pending;
  const { clientId } = step.interaction.request;
  const ip = clientIP(context.config, request);
  const keys = await secondFactorKeys(context, accountId, userId, ip);
  // The slot is taken before the code is checked, so concurrent guesses cannot all slip past the limit.
  await reserveOrRefuse(context, keys, { accountId, clientId });
  // A recovery code stands in for the authenticator device, so it counts as the second factor too.
  const subject = { ...step.pending, amr: [...SECOND_FACTOR_AMR] };
  const recovered = useRecovery ? await spendRecovery(context, request, step, subject, recoveryCode) : undefined;
  const accepted = useRecovery ? recovered !== null : await checkCode(context, { accountId, clientId, userId, code: code ?? '', keys });
  if (!accepted) {
    // A wrong code keeps its reserved slot on both counters.
    context.emit({
      type: 'login.failed',
      accountId,
      clientId,
      usernameDigest: keys.usernameDigest,
      reason: useRecovery ? 'wrong recovery code' : 'wrong second factor',
    });
    return page(WRONG_CODE, 400);
  }
  await settleSuccess(context, keys);
  if (recovered) {
    const { held, offer } = recovered;
    return restoringPending(context, step.interactionId, step.pending, () =>
      afterHeldSecondFactor(context, request, held, subject, offer, ip),
    );
  }
  // Asked before the step is taken: a failing hook (500) leaves the step in place, and the next code signs in.
  const offer = await offersPasskey(context, accountId, subject);
  // The code was checked for the record read at the start; only that record may be taken. A password success on
  // this interaction meanwhile replaced it (another user, parked at their own step): go no further.
  if (!(await takePending(context, step.interactionId, step.pending))) throw expiredSignIn();
  return restoringPending(context, step.interactionId, step.pending, () =>
    afterSecondFactor(context, request, { id: step.interactionId, record: step.interaction }, subject, ip, offer),
  );
}

async function checkCode(
  context: SentinelContext,
  input: { accountId: string; clientId: string; userId: string; code: string; keys: ThrottleKeys },
): Promise<boolean> {
  const { accountId, clientId, userId, code } = input;
  const secret = await context.config.users?.totpSecret?.({ accountId, userId });
  // The authenticator asked for the step, so a user without a secret is the host's inconsistency: fail closed.
  if (typeof secret !== 'string' || secret === '') throw new Error('sentinel-idp: users.totpSecret returned no secret for a TOTP user');
  // The secret's own budget too (totp-throttle.ts): the user's is per account, and one secret may be the user's in many.
  const secretKeys = secondFactorSecretKeys(input.keys, totpSecretMarker(secret));
  await reserveOrRefuse(context, secretKeys, { accountId, clientId });
  const accepted = (await checkTotp(context, { accountId, userId, secret, code })) === 'accepted';
  if (accepted) await settleSuccess(context, secretKeys);
  return accepted;
}

/** A recovery code accepted: the interaction its step holds, and whether the passkey offer comes next. */
interface Recovered {
  held: { id: string; record: InteractionRecord };
  offer: boolean;
}

/**
 * Takes the step and the interaction, then lets the host spend the code. The host's `recover` is single-use on its
 * own (of concurrent calls with one code, one answers true); holding both first adds that only a request whose
 * sign-in can still go on reaches it, and that nothing (a concurrent answer, Cancel on the login form, the
 * interaction's end) can end the sign-in while the code is spent. The step taken is the record checked: a password
 * that replaced it makes the take fail, and the sign-in goes on with the user it was shown for.
 *
 * @returns `null` when the code is not accepted (both are back in place).
 */
async function spendRecovery(
  context: SentinelContext,
  request: SentinelRequest,
  step: StepRequest,
  subject: SignInSubject,
  code: string,
): Promise<Recovered | null> {
  if (!(await takePending(context, step.interactionId, step.pending))) throw expiredSignIn();
  // With the interaction gone the step is of no use, so it stays gone.
  const record = await takeInteraction(context, step.interactionId);
  if (record === null) throw expiredSignIn();
  const held = { id: step.interactionId, record };
  const { accountId } = record.request;
  let accepted = false;
  try {
    // Every hook the rest of the sign-in needs an answer from runs before the code is spent, so its failure spends
    // nothing; after it, only the store's own writes remain.
    const offer = await offersPasskey(context, accountId, subject);
    // The end of the sign-in looks the app up again (signed-in-response.ts). Asked here first as well: an app store
    // that fails, or an app disabled or its redirect URI removed while the user was at the step, then refuses before
    // the code is spent, not after it (a recovery code is one of a few, and the host has no way to give it back).
    if (record.returnTo === undefined && record.device === undefined) await assertStillDeliverable(context, record.request);
    accepted = await checkRecovery(context, request, { accountId, userId: subject.userId, code });
    return accepted ? { held, offer } : null;
  } finally {
    // A wrong code or a failing hook spent nothing: the same page may try again.
    if (!accepted) {
      await restoreInteraction(context, held.id, held.record);
      await restorePending(context, step.interactionId, step.pending);
    }
  }
}

async function checkRecovery(
  context: SentinelContext,
  request: SentinelRequest,
  input: { accountId: string; userId: string; code: string },
): Promise<boolean> {
  const recover = context.config.users?.recover;
  if (typeof recover !== 'function' || input.code.length > MAX_RECOVERY_CODE) return false;
  return (await recover({ ...input, request })) === true;
}
