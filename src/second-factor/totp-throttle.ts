/**
 * Throttling of second-factor codes, on the password throttle's counters and limits (`throttle.maxFailures` per
 * user in `throttle.windowSeconds`, `maxFailuresPerIp` per address). A six-digit code has a million values, so the
 * budget must hold however many guesses arrive at once: each attempt reserves its slot on both counters with
 * {@link reserveOrRefuse} (the store's atomic `increment`) before the code is checked, a wrong code keeps its slot,
 * and a right one gives it back with {@link settleSuccess} — exactly as a password attempt does.
 *
 * A TOTP code also counts against its secret ({@link secondFactorSecretKeys}), on the same `maxFailures`: the user's
 * counter is per account, and a host whose user has one authenticator in several accounts answers the same secret in
 * each, so per account alone every account would add `maxFailures` guesses at the one secret per window.
 */
import { subjectThrottleKeys, type ThrottleKeys } from '../authorize/state/throttle.js';
import type { DigestContext } from '../authorize/state/identifier-digest.js';

export { reserveOrRefuse, settleSuccess } from '../authorize/state/throttle.js';

/**
 * The counters of a second-factor attempt: per user (not per typed name: the user is known by now), and per address.
 *
 * @example
 * const keys = await secondFactorKeys(context, accountId, userId, ip);
 */
export function secondFactorKeys(context: DigestContext, accountId: string, userId: string, ip: string | null): Promise<ThrottleKeys> {
  return subjectThrottleKeys(context, 'second-factor', accountId, userId, ip);
}

/**
 * The counter of the guesses at one TOTP secret, whatever account and user it is answered for (`totp.ts`
 * `totpSecretMarker`, a digest of the key it decodes to): a `maxFailures` budget of its own, no address counter (the
 * user's keys count the address). Taken once the user's own slot is, so a flood over the user's budget never asks
 * the host for the secret; a right code gives it back as it gives back the user's.
 *
 * @example
 * const secretKeys = secondFactorSecretKeys(keys, totpSecretMarker(secret));
 * await reserveOrRefuse(context, secretKeys, { accountId, clientId });
 */
export function secondFactorSecretKeys(userKeys: ThrottleKeys, marker: string): ThrottleKeys {
  return { username: `throttle:second-factor-secret:${marker}`, ip: null, network: null, usernameDigest: userKeys.usernameDigest };
}
