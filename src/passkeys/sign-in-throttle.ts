/**
 * Throttling of passkey sign-in attempts, per client address, on the Store's counters as failed logins are
 * (`authorize/state/throttle.ts`): `passkeys.maxFailuresPerIp` attempts that did not sign in per address (IPv6: its
 * /64) in `throttle.windowSeconds`, then `429` with `Retry-After` and the login throttle's message.
 *
 * Why: every post of an assertion asks the host's `users.passkeys.list` for a user the caller names (the user handle
 * is the caller's to choose) and runs a signature check, so without a bound one address could drive the host's
 * passkey table and the service's CPU as fast as it can post. Why per address and not per user: the caller picks the
 * user, so a per-user budget would only let one address lock a user out of their passkey. Why a default of 100: a
 * person whose passkey fails retries a few times; an office behind one address does not fail a hundred passkey
 * sign-ins in fifteen minutes, while a flood is held to that many hook calls per window.
 *
 * As with logins, the slot is taken with the Store's atomic `increment` before anything is asked or checked, so a
 * burst of concurrent posts cannot all pass a read-then-count check, and the counter holds across instances sharing
 * the Store; a passkey that signs in gives its slot back. An attempt over the limit is refused after a plain read,
 * spending nothing (not even the interaction's challenge). A Store that cannot be read or written fails the request
 * (`500`, reported) rather than letting the attempt through; a counter MemoryStore has no room for is refused as
 * throttled (`stores/counter-slot.ts`).
 *
 * Why IPv6 also counts per /48 (`passkeys.maxFailuresPerNetwork`): each /64 gets a counter of its own in `throttle:`,
 * the never-evicted area the login throttle's address counters need, and a /48 holds 65 536 /64s; unbounded, two /48s
 * could fill it, and every password sign-in would then be refused as throttled. The /48's slot is taken first
 * (`http/address-bound.ts`), so an attempt its network refuses creates no /64 counter.
 */
import { addressBoundKey, addressBoundNetworkKey, takeNetworkedSlot } from '../http/address-bound.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { en } from '../i18n/en.js';

/** A reserved attempt: give the slot back once the passkey signed in. */
export interface PasskeyAttempt {
  succeeded(): Promise<void>;
}

/**
 * The counter key of an address (`throttle:` keeps it in MemoryStore's never-evicted security state).
 * @example passkeyThrottleKey('203.0.113.7') // 'throttle:passkey:ip:203.0.113.7'
 */
export function passkeyThrottleKey(ip: string | null): string {
  return addressBoundKey('throttle:passkey', ip);
}

/**
 * The counter key of an IPv6 address's /48, or `null` (IPv4 addresses are their own network; unknown ones have none).
 * @example passkeyThrottleNetworkKey('2001:db8:1:2::7') // 'throttle:passkey:net:2001:db8:1'
 */
export function passkeyThrottleNetworkKey(ip: string | null): string | null {
  return addressBoundNetworkKey('throttle:passkey', ip);
}

/**
 * Takes a slot for one passkey sign-in attempt from `ip`, or refuses it: `onThrottled` is called (the caller's
 * `login.throttled` event) and a `429` thrown, which the login pages render in the sign-in's language.
 *
 * @example
 * const attempt = await reservePasskeyAttempt(context, ip, () => context.emit({ type: 'login.throttled', … }));
 * // … verify the assertion …
 * await attempt.succeeded();
 */
export async function reservePasskeyAttempt(
  context: SentinelContext,
  ip: string | null,
  onThrottled: () => Promise<void>,
): Promise<PasskeyAttempt> {
  const { maxFailuresPerIp, maxFailuresPerNetwork } = context.config.passkeys;
  const { windowSeconds } = context.config.throttle;
  const key = passkeyThrottleKey(ip);
  const networkKey = passkeyThrottleNetworkKey(ip);
  const refuse = async (): Promise<never> => {
    await onThrottled();
    throw new OAuthError('temporarily_unavailable', en.tooManyAttempts, {
      status: 429,
      headers: { 'retry-after': String(windowSeconds) },
    });
  };
  const network = networkKey === null ? null : { key: networkKey, limit: maxFailuresPerNetwork };
  if ((await takeNetworkedSlot(context, { key, limit: maxFailuresPerIp }, network, windowSeconds)) !== null) return refuse();
  return {
    async succeeded() {
      // A Store without the optional `decrement` keeps the slot: it only ever throttles sooner.
      await context.store.decrement?.(key);
      if (networkKey !== null) await context.store.decrement?.(networkKey);
    },
  };
}
