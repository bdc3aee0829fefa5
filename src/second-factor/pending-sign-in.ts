/**
 * A sign-in between its steps: the password was right, and the interaction now waits for a TOTP code or for the
 * passkey offer to be answered. The record is keyed by the interaction, so the browser carries nothing new, and
 * it has its own CSRF token: a step's form cannot be posted with the password form's token, nor the reverse.
 */
import type { SentinelContext } from '../context.js';
import { randomSecret } from '../secrets.js';
import { parseStoredRecord } from '../stored-record.js';

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
  csrfToken: string;
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
 * Atomically ends the step: of two concurrent right answers exactly one goes on.
 *
 * @example
 * if ((await takePending(context, interactionId, 'totp')) === null) throw expired();
 */
export async function takePending(context: SentinelContext, interactionId: string, stage: PendingStage): Promise<PendingSignIn | null> {
  const record = parse(await context.store.take(pendingKey(interactionId)));
  return record?.stage === stage ? record : null;
}
