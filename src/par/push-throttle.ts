/**
 * A per-address bound on the pushes of public clients (RFC 9126 §2.3 lets the server answer `429` to a client over
 * the rate it allows). A public client is known by its client_id alone, so anyone who knows one can push without
 * any credential, and each valid push stores a record of up to 8 KiB for 60 seconds: unbounded, one host could fill
 * MemoryStore's `par:` budget (evicting the pushes of real users) or Redis's memory (whose `noeviction` policy then
 * refuses every write of the service). So such pushes count against their client address:
 * `par.publicPushesPerAddress` per window of {@link REQUEST_URI_TTL_SECONDS}, the lifetime of a pushed request, so
 * one address never holds more live pushed requests than the limit. Confidential and `private_key_jwt` clients
 * authenticate their pushes and are not counted.
 *
 * As the registration tokens' throttle (`registration/token-throttle.ts`): counted in the Store with its atomic
 * `increment`, so the bound holds across instances and a concurrent burst gets counts 1..N, of which only those
 * within the limit store a record; an address already over is refused after a read, so a flood costs no writes;
 * requests whose address is unknown share one counter (they cannot each get a budget of their own); a Store that
 * fails fails the push (`500`, reported), and a counter MemoryStore has no room for refuses it as throttled
 * (`stores/counter-slot.ts`). The counters live under a prefix of their own (`throttle-par:`), a security area of
 * its own in MemoryStore: a flood from many addresses that fills it refuses public pushes only, never the login or
 * registration throttles of `throttle:`.
 */
import { addressBucket } from '../http/client-ip.js';
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import { takeCounterSlot } from '../stores/counter-slot.js';
import { REQUEST_URI_TTL_SECONDS } from './pushed-requests.js';

/**
 * The counter key of an address.
 * @example pushThrottleKey('2001:db8:1:2::7') // 'throttle-par:ip:2001:db8:1:2'
 */
export function pushThrottleKey(ip: string | null): string {
  return `throttle-par:ip:${ip === null ? 'unknown' : addressBucket(ip)}`;
}

function tooManyPushes(): OAuthError {
  return new OAuthError('temporarily_unavailable', 'too many pushed authorization requests from this address; retry later', {
    status: 429,
    headers: { 'retry-after': String(REQUEST_URI_TTL_SECONDS) },
  });
}

/**
 * Counts one push of a public client from `ip` against `par.publicPushesPerAddress`.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address has pushed its share this window.
 * @example await takePublicPushSlot(context, clientIP(context.config, request));
 */
export async function takePublicPushSlot(context: SentinelContext, ip: string | null): Promise<void> {
  const limit = context.config.par.publicPushesPerAddress;
  const key = pushThrottleKey(ip);
  const current = Number((await context.store.get(key)) ?? 0);
  if (Number.isFinite(current) && current >= limit) throw tooManyPushes();
  if ((await takeCounterSlot(context, key, REQUEST_URI_TTL_SECONDS * 1000)) > limit) throw tooManyPushes();
}
