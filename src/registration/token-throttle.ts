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
 *
 * Why IPv6 also counts per /48 (`throttle.maxFailuresPerNetwork`, as typed usernames do): each /64 gets a counter of
 * its own in `throttle:`, the never-evicted area the login throttle needs, and a /48 holds 65 536 /64s; unbounded, two
 * /48s could fill it with wrong tokens and every password sign-in would be refused as throttled. The /48's slot is
 * taken first (`http/address-bound.ts`), so a guess its network refuses creates no /64 counter.
 */
import { addressBoundKey, addressBoundNetworkKey, takeNetworkedSlot } from '../http/address-bound.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { auditsAccount } from '../http/denied-accounts.js';
import { couldBeClientId } from '../lib/client-id-shape.js';

/** A reserved attempt: give the slot back once the token proved right. */
export interface TokenAttempt {
  succeeded(): Promise<void>;
}

/**
 * The counter key of an address (`throttle:` keeps it in MemoryStore's never-evicted security state).
 * @example registrationThrottleKey('203.0.113.7') // 'throttle:registration:ip:203.0.113.7'
 */
export function registrationThrottleKey(ip: string | null): string {
  return addressBoundKey('throttle:registration', ip);
}

/**
 * The counter key of an IPv6 address's /48, or `null` (IPv4 addresses are their own network; unknown ones have none).
 * @example registrationThrottleNetworkKey('2001:db8:1:2::7') // 'throttle:registration:net:2001:db8:1'
 */
export function registrationThrottleNetworkKey(ip: string | null): string | null {
  return addressBoundNetworkKey('throttle:registration', ip);
}

async function throttled(context: SentinelContext, accountId: string, clientId: string | undefined): Promise<OAuthError> {
  // Past the budget every request is refused here, so an event each for made-up accounts would be unbounded; the
  // wrong tokens that used the budget up were audited (registration.denied), and the metrics count every refusal.
  if (await auditsAccount(context, accountId, 'registration')) {
    // The path's client, unless no client could have it (the caller's text, as in registration.denied).
    const named = clientId !== undefined && couldBeClientId(clientId) ? clientId : undefined;
    context.emit({ type: 'registration.throttled', accountId, clientId: named, scope: 'ip' });
  }
  return new OAuthError('temporarily_unavailable', 'too many wrong registration tokens from this address; try again later', {
    status: 429,
    headers: { 'retry-after': String(context.config.throttle.windowSeconds) },
  });
}

/**
 * Takes a slot for one token check from `ip`, or refuses the request with `429` and a `registration.throttled` event.
 * The event is emitted only when the AppStore knows `accountId` (`http/denied-accounts.ts`); the answer is the same.
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
  const { maxFailuresPerIp, maxFailuresPerNetwork, windowSeconds } = context.config.throttle;
  const key = registrationThrottleKey(ip);
  const networkKey = registrationThrottleNetworkKey(ip);
  // Over a limit already: refused after a read, so a flood costs no writes (takeNetworkedSlot).
  const network = networkKey === null ? null : { key: networkKey, limit: maxFailuresPerNetwork };
  if ((await takeNetworkedSlot(context, { key, limit: maxFailuresPerIp }, network, windowSeconds)) !== null) {
    throw await throttled(context, accountId, clientId);
  }
  return {
    async succeeded() {
      // A Store without the optional `decrement` keeps the slot: it only ever throttles sooner.
      await context.store.decrement?.(key);
      if (networkKey !== null) await context.store.decrement?.(networkKey);
    },
  };
}
