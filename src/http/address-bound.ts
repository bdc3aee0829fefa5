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
 *
 * Why IPv6 also counts per /48 (`networkLimit`, as the login throttle's `throttle.maxFailuresPerNetwork`): every /64
 * gets a counter of its own, and a /48 holds 65 536 of them, so one site (or a host renting one) could create enough
 * counters to fill the never-evicted area, after which every such request of every client is refused for the window.
 * The /48's counter is read and taken before the /64's, so a request its network refuses creates no /64 counter: a
 * /48 creates at most `networkLimit` of them per window. IPv4 addresses are their own network (a /24 is often many
 * unrelated customers), as in the login throttle; requests whose address is unknown have no network.
 */
import { OAuthError } from '../errors.js';
import { takeCounterSlot } from '../stores/counter-slot.js';
import { addressBucket, networkBucket } from './client-ip.js';
import type { SentinelContext } from './context.js';

/** One bound: where it counts, how many, for how long, and what a refused caller is told. */
export interface AddressBound {
  /** The counters' key prefix, without the colon: a MemoryStore security area of its own. */
  readonly prefix: string;
  /** Requests one address may make per window. */
  readonly limit: number;
  /** Requests one IPv6 /48 may make per window, across its /64s; IPv4 addresses are not counted per network. */
  readonly networkLimit: number;
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

/**
 * The counter key of an IPv6 address's /48 under `prefix`, or `null` when the address has no network counter (IPv4,
 * unknown).
 * @example addressBoundNetworkKey('throttle-par', '2001:db8:1:2::7') // 'throttle-par:net:2001:db8:1'
 */
export function addressBoundNetworkKey(prefix: string, ip: string | null): string | null {
  const network = ip === null ? null : networkBucket(ip);
  return network === null ? null : `${prefix}:net:${network}`;
}

function overTheBound(bound: AddressBound, scope: 'address' | 'network'): OAuthError {
  return new OAuthError('temporarily_unavailable', `too many ${bound.what} from this ${scope}; retry later`, {
    status: 429,
    headers: { 'retry-after': String(bound.windowSeconds) },
  });
}

/**
 * Counts one request from `ip` against `bound`, before the request writes anything: against its IPv6 /48 first, then
 * its address. Both are read before either is taken, so a request over either limit writes nothing; a request refused
 * after its network counted it gives the network its slot back (where the Store can `decrement`).
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address or its network has made its share
 * this window.
 * @example
 * const bound = { prefix: 'throttle-par', limit: 1000, networkLimit: 10_000, windowSeconds: 60, what: 'pushes' };
 * await takeAddressSlot(context, bound, ip);
 */
export async function takeAddressSlot(context: SentinelContext, bound: AddressBound, ip: string | null): Promise<void> {
  const networkKey = addressBoundNetworkKey(bound.prefix, ip);
  const refusedBy = await takeNetworkedSlot(
    context,
    { key: addressBoundKey(bound.prefix, ip), limit: bound.limit },
    networkKey === null ? null : { key: networkKey, limit: bound.networkLimit },
    bound.windowSeconds,
  );
  if (refusedBy !== null) throw overTheBound(bound, refusedBy);
}

/** One counter and its limit per window. */
export interface CounterLimit {
  readonly key: string;
  readonly limit: number;
}

/**
 * Takes one slot on an address's counter and, when it has one, on its IPv6 /48's counter (`network`), and answers
 * which refused it, or `null` when both had room. Both are read before either is taken, so a request over either
 * limit writes nothing; the network's slot is taken before the address's, so a request its network refuses creates no
 * counter for its address; a request refused after its network counted it gives the network its slot back (where the
 * Store can `decrement`). Store failures are thrown (the request fails closed).
 *
 * @example
 * const refusedBy = await takeNetworkedSlot(context, { key: ipKey, limit: 100 }, { key: netKey, limit: 1000 }, 900);
 */
export async function takeNetworkedSlot(
  context: SentinelContext,
  address: CounterLimit,
  network: CounterLimit | null,
  windowSeconds: number,
): Promise<'address' | 'network' | null> {
  const windowMs = windowSeconds * 1000;
  // Reads first, so an address or network already over is refused without writing (a flood costs no writes).
  if (await over(context, address.key, address.limit)) return 'address';
  if (network !== null && (await over(context, network.key, network.limit))) return 'network';
  if (network !== null && (await takeCounterSlot(context, network.key, windowMs)) > network.limit) {
    await giveBack(context, network.key);
    return 'network';
  }
  if ((await takeCounterSlot(context, address.key, windowMs)) > address.limit) {
    if (network !== null) await giveBack(context, network.key);
    return 'address';
  }
  return null;
}

/**
 * Gives a refused request's slot back on its network's counter, which so counts the requests let through (and those
 * in flight): without it a concurrent burst from one /64, most of it refused, would charge its whole /48 and shut the
 * /48's other /64s out for the window. Never lets more through: a granted request never gives its slot back.
 * `decrement` is optional in the Store contract; without it the slot stays taken, which errs toward refusing.
 */
async function giveBack(context: SentinelContext, networkKey: string): Promise<void> {
  await context.store.decrement?.(networkKey);
}

/** Whether the counter `key` already stands at `limit` or more; one that does not read as a number is over every limit. */
async function over(context: SentinelContext, key: string, limit: number): Promise<boolean> {
  const stored = await context.store.get(key);
  const current = stored === null ? 0 : Number(stored);
  return !Number.isFinite(current) || current >= limit;
}
