/**
 * Throttling of second-factor codes, on the password throttle's counters and limits (`throttle.maxFailures` per
 * user in `throttle.windowSeconds`, `maxFailuresPerIp` per address). A six-digit code has a million values, so the
 * budget must hold however many guesses arrive at once: each attempt reserves its slot on both counters with
 * {@link reserveOrRefuse} (the store's atomic `increment`) before the code is checked, a wrong code keeps its slot,
 * and a right one gives it back with {@link settleSuccess} — exactly as a password attempt does.
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
