/**
 * A sign-in between its steps: the password was right, and the interaction now waits for a TOTP code or for the
 * passkey offer to be answered. The record is keyed by the interaction; it names the browser that passed the
 * password by the digest of its step cookie (step-cookie.ts), so no other browser sees or answers the step; and it
 * has its own CSRF token: a step's form cannot be posted with the password form's token, nor the reverse.
 *
 * A right password on an interaction already parked at a step replaces the parked record (the user went back and
 * signed in as someone else, e.g. the other of two accounts): the password is a whole first factor of its own, and
 * the new user still meets their own steps. What makes that safe is {@link takePending}: a step answered for the
 * record it read goes on only if that record is still the one stored, so an answer checked for the first user is
 * refused rather than completing for the second.
 */
import type { SentinelContext } from '../http/context.js';
import { puttingBackOnFailure } from '../lib/put-back.js';
import { randomSecret } from '../lib/random-secrets.js';
import { parseStoredRecord } from '../stores/stored-record.js';
import { type AmrValue, readAmr } from '../assurance/levels.js';

/** The steps a sign-in can wait at. */
export type PendingStage = 'totp' | 'passkey-offer';

/** Persisted as JSON under `pending-sign-in:{interactionId}` for the interaction's lifetime. */
export interface PendingSignIn {
  stage: PendingStage;
  userId: string;
  /** The username typed at the password step, for the `login.succeeded` event. */
  username?: string | undefined;
  /** Seconds since the epoch when the password was checked. */
  authTime: number;
  /** The methods passed so far (RFC 8176): `pwd`, and `otp` once the TOTP step is behind. */
  amr?: AmrValue[] | undefined;
  csrfToken: string;
  /** Digest of the browser's tie (see step-cookie.ts): only the browser that passed the password answers the step. */
  browser: string;
}

function pendingKey(interactionId: string): string {
  return `pending-sign-in:${interactionId}`;
}

function parse(value: string | null): PendingSignIn | null {
  return parseStoredRecord<PendingSignIn>(
    value,
    (record) =>
      typeof record.userId === 'string' &&
      typeof record.csrfToken === 'string' &&
      typeof record.browser === 'string' &&
      (record.amr === undefined || readAmr(record.amr) !== undefined) &&
      (record.stage === 'totp' || record.stage === 'passkey-offer'),
  );
}

/**
 * Parks the sign-in at a step, with a fresh CSRF token.
 *
 * @example
 * const pending = await startPending(context, interactionId, { stage: 'totp', userId, authTime });
 */
export async function startPending(
  context: SentinelContext,
  interactionId: string,
  input: Omit<PendingSignIn, 'csrfToken'>,
): Promise<PendingSignIn> {
  const record: PendingSignIn = { ...input, csrfToken: randomSecret() };
  await context.store.set(pendingKey(interactionId), JSON.stringify(record), context.config.interactionTtl * 1000);
  return record;
}

/**
 * The sign-in waiting at `stage` for this interaction, or `null`.
 *
 * @example
 * const pending = await findPending(context, interactionId, 'totp');
 */
export async function findPending(context: SentinelContext, interactionId: string, stage: PendingStage): Promise<PendingSignIn | null> {
  const record = parse(await context.store.get(pendingKey(interactionId)));
  return record?.stage === stage ? record : null;
}

/**
 * Atomically ends the step, but only if the record stored now is the very one the caller checked: of two concurrent
 * right answers exactly one goes on, and an answer checked for one user can never go on with a record that a later
 * password success on the same interaction wrote for another. The record's CSRF token is a fresh random
 * value per {@link startPending}, so it names one record; the compare-and-set removes exactly the value that was
 * compared, so a replacement between the check and the take makes the take fail instead of taking the new record.
 *
 * @returns `false` when the step is gone or is no longer the one checked: the caller answers "expired".
 * @example
 * if (!(await takePending(context, step.interactionId, step.pending))) throw expiredSignIn();
 */
export async function takePending(context: SentinelContext, interactionId: string, checked: PendingSignIn): Promise<boolean> {
  const key = pendingKey(interactionId);
  const raw = await context.store.get(key);
  const stored = parse(raw);
  if (raw === null || stored === null) return false;
  if (stored.csrfToken !== checked.csrfToken || stored.stage !== checked.stage || stored.userId !== checked.userId) return false;
  try {
    return await context.store.swap([{ key, expect: raw, value: null }]);
  } catch (error) {
    // The take may have landed with its answer lost: the step goes back (onto an empty key only), as after a failure
    // of what follows it (restoringPending), so the retry finds it.
    await restorePending(context, interactionId, stored).catch(() => undefined);
    throw error;
  }
}

/**
 * Puts back a step that {@link takePending} took for an answer that did not go on (a wrong recovery code, a failing
 * hook), so the user can try again on the same page. Only onto an empty key: a password that parked a new step
 * meanwhile keeps it, and the step put back is the record taken, with its CSRF token.
 *
 * @example
 * if (!accepted) await restorePending(context, step.interactionId, step.pending);
 */
export async function restorePending(context: SentinelContext, interactionId: string, taken: PendingSignIn): Promise<void> {
  const ttlMs = context.config.interactionTtl * 1000;
  await context.store.swap([{ key: pendingKey(interactionId), expect: null, value: JSON.stringify(taken), ttlMs }]);
}

/**
 * Runs the end of a sign-in whose step {@link takePending} just took, and puts the step back when that end fails on
 * the service's side (a store write, a vetoing `onEvent`: whatever answers `500 server_error`), as the interaction is
 * put back (`restoringInteraction`). Without it the retry met "link expired" and the user started again from the
 * password, though the service's failure, not theirs, ended the sign-in. An answer it took stays spent (a TOTP code
 * is single use, so the retry takes the authenticator's next one). A refusal (any other `OAuthError`) leaves the step
 * taken.
 *
 * @example
 * return restoringPending(context, step.interactionId, step.pending, () => completeSignIn(context, request, id, subject, ip));
 */
export async function restoringPending<T>(
  context: SentinelContext,
  interactionId: string,
  taken: PendingSignIn,
  end: () => Promise<T>,
): Promise<T> {
  return puttingBackOnFailure(end, () => restorePending(context, interactionId, taken));
}
