/**
 * A per-address bound on the interactions (pending sign-ins) that anyone can start. Every visit to `/authorize`
 * without a session (or to the account page, or RP-initiated logout's confirmation page, or a right user code on the
 * device verification page) parks its request in the Store, up to 4 KiB (20 KiB for a pushed request, whose push was
 * authenticated or counted) for `interactionTtl`, with no credential asked: unbounded, one host could fill
 * MemoryStore's `interaction:` budget (evicting real users' sign-ins) or Redis's memory, whose `noeviction` policy
 * then refuses every write of the service. So each new interaction counts against its client address:
 * `interactionsPerAddress` per window of `interactionTtl`, the lifetime of an interaction, so one address never holds
 * more live ones than the limit. How it counts, and fails closed, is the shared per-address bound of
 * `http/address-bound.ts`, which also counts IPv6 per /48 (`interactionsPerNetwork`); the counters live under
 * `throttle-interaction:`, a MemoryStore security area of their own. The default is generous: a whole office behind
 * one NAT starts far fewer than 1000 sign-ins in ten minutes.
 */
import { addressBoundKey, takeAddressSlot } from '../../http/address-bound.js';
import type { SentinelContext } from '../../http/context.js';

/** The counters' key prefix (`INTERACTION_THROTTLE_PREFIX` of src/stores/memory.ts). */
const PREFIX = 'throttle-interaction';

/**
 * The counter key of an address.
 * @example interactionThrottleKey('2001:db8:1:2::7') // 'throttle-interaction:ip:2001:db8:1:2'
 */
export function interactionThrottleKey(ip: string | null): string {
  return addressBoundKey(PREFIX, ip);
}

/**
 * Counts one new interaction from `ip` against `interactionsPerAddress` (and, from IPv6, its /48 against
 * `interactionsPerNetwork`), before the interaction is stored.
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address or its network has started its
 * share this window.
 * @example await takeInteractionSlot(context, clientIP(context.config, request));
 */
export async function takeInteractionSlot(context: SentinelContext, ip: string | null): Promise<void> {
  const { interactionsPerAddress, interactionsPerNetwork, interactionTtl } = context.config;
  const bound = {
    prefix: PREFIX,
    limit: interactionsPerAddress,
    networkLimit: interactionsPerNetwork,
    windowSeconds: interactionTtl,
    what: 'sign-ins',
  };
  await takeAddressSlot(context, bound, ip);
}
