/**
 * Throttling of wrong registration tokens (RFC 7591 §3 initial access tokens, RFC 7592 §1 registration access
 * tokens), per client address, on the Store's counters as failed logins are (`authorize/state/throttle.ts`):
 * `throttle.maxFailuresPerIp` wrong tokens per address in `throttle.windowSeconds`, then `429` with `Retry-After`.
 *
 * Why per address and not per account: a guesser picks the account, so a per-account budget would only let one
 * address lock everyone out of an account. Why the per-address login limit (default 50 per 15 minutes): a guesser
 * working through accounts and tokens from one address is what it is sized for, while a deployment script that
 * retries with a stale token, or manages an app it just deleted, must not lock its address out after a handful of
 * mistakes; the tokens themselves (at least 16 characters, 256 bits for registration access tokens) are out of
 * reach of any such rate. Requests whose address is unknown share one counter (failing closed: they cannot each get
 * their own budget).
 *
 * As with logins, the slot is taken with the Store's atomic `increment` before the token is checked, so a burst of
 * concurrent guesses cannot all pass a read-then-count check; a right token gives its slot back. A Store that cannot
 * be read or written fails the request (`500`, reported) rather than letting the guess through. A counter MemoryStore
 * has no room for (`SecurityStateFullError`: the `throttle:` area is full) is refused as throttled instead, as a
 * failed login's is (`stores/counter-slot.ts`): `429`, never uncounted, and reported once per window, because a flood
 * that fills the area would otherwise answer `500` and reach `onError` once per request.
 */
import { addressBucket } from '../http/client-ip.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { takeCounterSlot } from '../stores/counter-slot.js';

/** A reserved attempt: give the slot back once the token proved right. */
export interface TokenAttempt {
  succeeded(): Promise<void>;
}

/**
 * The counter key of an address (`throttle:` keeps it in MemoryStore's never-evicted security state).
 * @example registrationThrottleKey('203.0.113.7') // 'throttle:registration:ip:203.0.113.7'
 */
export function registrationThrottleKey(ip: string | null): string {
  // IPv6 by its /64, as the login throttle counts (client-ip.ts addressBucket).
  return `throttle:registration:ip:${ip === null ? 'unknown' : addressBucket(ip)}`;
}

function throttled(context: SentinelContext, accountId: string, clientId: string | undefined): OAuthError {
  context.emit({ type: 'registration.throttled', accountId, clientId, scope: 'ip' });
  return new OAuthError('temporarily_unavailable', 'too many wrong registration tokens from this address; try again later', {
    status: 429,
    headers: { 'retry-after': String(context.config.throttle.windowSeconds) },
  });
}

/**
 * Takes a slot for one token check from `ip`, or refuses the request with `429` and a `registration.throttled` event.
 *
 * @example
 * const attempt = await reserveTokenAttempt(context, ip, accountId);
 * if (await check(token)) await attempt.succeeded(); else throw unauthorized();
 */
export async function reserveTokenAttempt(
  context: SentinelContext,
  ip: string | null,
  accountId: string,
  clientId?: string,
): Promise<TokenAttempt> {
  const { maxFailuresPerIp: limit, windowSeconds } = context.config.throttle;
  const key = registrationThrottleKey(ip);
  // Over the limit already: refused after a read, so a flood costs no writes.
  const current = Number((await context.store.get(key)) ?? 0);
  if (Number.isFinite(current) && current >= limit) throw throttled(context, accountId, clientId);
  if ((await takeCounterSlot(context, key, windowSeconds * 1000)) > limit) throw throttled(context, accountId, clientId);
  return {
    async succeeded() {
      // A Store without the optional `decrement` keeps the slot: it only ever throttles sooner.
      await context.store.decrement?.(key);
    },
  };
}
