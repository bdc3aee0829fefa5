/**
 * Throttling of second-factor codes, on the password throttle's counters and limits (`throttle.maxFailures` per
 * user in `throttle.windowSeconds`, `maxFailuresPerIp` per address). A six-digit code has a million values, so the
 * budget must hold however many guesses arrive at once: the attempt takes its slot with the store's atomic
 * `increment` before the code is checked, and goes on only when the count returned is within the limit.
 */
import type { SentinelContext } from '../context.js';
import { clearFailures, throttledBy, throttleKeys, type ThrottleKeys } from '../authorize/throttle.js';

/**
 * The counters of a second-factor attempt: per user (not per typed name: the user is known by now), and per address.
 *
 * @example
 * const keys = secondFactorKeys(accountId, userId, ip);
 */
export function secondFactorKeys(accountId: string, userId: string, ip: string | null): ThrottleKeys {
  return throttleKeys(accountId, `\u0000second-factor\u0000${userId}`, ip);
}

/**
 * Reserves one attempt; `null` when it may go on, else the limit that refused it.
 *
 * @example
 * const limit = await reserveSecondFactorAttempt(context, keys);
 */
export async function reserveSecondFactorAttempt(context: SentinelContext, keys: ThrottleKeys): Promise<'username' | 'ip' | null> {
  const { maxFailures, windowSeconds } = context.config.throttle;
  const limit = await throttledBy(context, keys);
  if (limit !== null) return limit;
  const count = await context.store.increment(keys.username, windowSeconds * 1000);
  return count > maxFailures ? 'username' : null;
}

/**
 * A wrong code also counts against the address, as a wrong password does.
 *
 * @example
 * await recordSecondFactorFailure(context, keys);
 */
export async function recordSecondFactorFailure(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  if (keys.ip !== null) await context.store.increment(keys.ip, context.config.throttle.windowSeconds * 1000);
}

/**
 * A right code clears the user's counter.
 *
 * @example
 * await clearSecondFactorFailures(context, keys);
 */
export async function clearSecondFactorFailures(context: SentinelContext, keys: ThrottleKeys): Promise<void> {
  await clearFailures(context, keys);
}
