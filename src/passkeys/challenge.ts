/**
 * WebAuthn challenges (WebAuthn §13.4.3): one per ceremony, bound to the interaction, kept server-side and taken
 * atomically when the answer arrives. A replayed assertion therefore meets no challenge (or another one), on any
 * instance sharing the store.
 */
import { randomBytes } from 'node:crypto';
import type { SentinelContext } from '../http/context.js';

/** What a challenge is for: signing in, or adding a passkey. */
export type CeremonyKind = 'sign-in' | 'register';

/** How long the browser has to answer (the WebAuthn prompt's timeout is the same). */
export const CEREMONY_TIMEOUT_MS = 120_000;

function challengeKey(kind: CeremonyKind, interactionId: string): string {
  return `passkey-challenge:${kind}:${interactionId}`;
}

/**
 * A fresh 256-bit challenge (base64url) for the interaction, replacing any earlier one.
 *
 * @example
 * const challenge = await newChallenge(context, 'sign-in', interactionId);
 */
export async function newChallenge(context: SentinelContext, kind: CeremonyKind, interactionId: string): Promise<string> {
  const challenge = randomBytes(32).toString('base64url');
  await context.store.set(challengeKey(kind, interactionId), challenge, CEREMONY_TIMEOUT_MS);
  return challenge;
}

/**
 * Takes the interaction's challenge (single use), or `null` when there is none.
 *
 * @example
 * const expected = await takeChallenge(context, 'sign-in', interactionId);
 */
export function takeChallenge(context: SentinelContext, kind: CeremonyKind, interactionId: string): Promise<string | null> {
  return context.store.take(challengeKey(kind, interactionId));
}
