/**
 * A per-address bound on requests anyone can send without a credential that each store a record: the pushes of
 * public clients (`par/push-throttle.ts`, RFC 9126 §2.3) and their device authorization requests
 * (`device/authorization-throttle.ts`, RFC 8628 §3.1). A public client is known by its client_id alone, so,
 * unbounded, one host could fill MemoryStore's budget of those records (evicting the ones of real users) or Redis's
 * memory (whose `noeviction` policy then refuses every write of the service). So each such request counts against
 * its client address (`trustProxy` decides which; IPv6 per /64), `limit` per window, the window being the records'
 * lifetime, so one address never holds more live records than the limit.
 *
 * As the registration tokens' throttle (`registration/token-throttle.ts`): counted in the Store with its atomic
 * `increment`, so the bound holds across instances and a concurrent burst gets counts 1..N, of which only those
 * within the limit go on to store a record; an address already over is refused after a read, so a flood costs no
 * writes; requests whose address is unknown share one counter (they cannot each get a budget of their own); a Store
 * that fails fails the request (`500`, reported), and a counter MemoryStore has no room for refuses it as throttled
 * (`stores/counter-slot.ts`). Each bound counts under a prefix of its own, a security area of its own in MemoryStore
 * (`stores/memory.ts`): a flood from many addresses that fills it refuses those requests only, never the login or
 * registration throttles of `throttle:`, nor the other bound.
 */
import { OAuthError } from '../errors.js';
import { takeCounterSlot } from '../stores/counter-slot.js';
import { addressBucket } from './client-ip.js';
import type { SentinelContext } from './context.js';

/** One bound: where it counts, how many, for how long, and what a refused caller is told. */
export interface AddressBound {
  /** The counters' key prefix, without the colon: a MemoryStore security area of its own. */
  readonly prefix: string;
  /** Requests one address may make per window. */
  readonly limit: number;
  /** The window, in seconds: the lifetime of the records the counted requests store; also the `Retry-After`. */
  readonly windowSeconds: number;
  /** What the refused requests are, for the error description ("pushed authorization requests"). */
  readonly what: string;
}

/**
 * The counter key of an address under `prefix`.
 * @example addressBoundKey('throttle-par', '2001:db8:1:2::7') // 'throttle-par:ip:2001:db8:1:2'
 */
export function addressBoundKey(prefix: string, ip: string | null): string {
  return `${prefix}:ip:${ip === null ? 'unknown' : addressBucket(ip)}`;
}

function overTheBound(bound: AddressBound): OAuthError {
  return new OAuthError('temporarily_unavailable', `too many ${bound.what} from this address; retry later`, {
    status: 429,
    headers: { 'retry-after': String(bound.windowSeconds) },
  });
}

/**
 * Counts one request from `ip` against `bound`, before the request writes anything.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address has made its share this window.
 * @example
 * await takeAddressSlot(context, { prefix: 'throttle-par', limit: 1000, windowSeconds: 60, what: 'pushes' }, ip);
 */
export async function takeAddressSlot(context: SentinelContext, bound: AddressBound, ip: string | null): Promise<void> {
  const key = addressBoundKey(bound.prefix, ip);
  if (!(await slotWithin(context, key, bound.limit, bound.windowSeconds))) throw overTheBound(bound);
}

/**
 * Takes one slot of the counter `key` (`limit` per `windowSeconds`) and answers whether it was within the limit. A
 * counter already at the limit is refused after a read only, so a flood costs no writes; one that does not read as a
 * number (store corruption) is over every limit.
 *
 * @example if (!(await slotWithin(context, 'throttle:passkey:ip:203.0.113.7', 100, 900))) refuse();
 */
export async function slotWithin(context: SentinelContext, key: string, limit: number, windowSeconds: number): Promise<boolean> {
  const stored = await context.store.get(key);
  const current = stored === null ? 0 : Number(stored);
  if (!Number.isFinite(current) || current >= limit) return false;
  return (await takeCounterSlot(context, key, windowSeconds * 1000)) <= limit;
}
