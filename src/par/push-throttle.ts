/**
 * A per-address bound on the pushes of public clients (RFC 9126 §2.3 lets the server answer `429` to a client over
 * the rate it allows). A public client is known by its client_id alone, so anyone who knows one can push without
 * any credential, and each valid push stores a record of up to 8 KiB for 60 seconds. So such pushes count against
 * their client address: `par.publicPushesPerAddress` per window of {@link REQUEST_URI_TTL_SECONDS}, the lifetime of
 * a pushed request, so one address never holds more live pushed requests than the limit. Confidential and
 * `private_key_jwt` clients authenticate their pushes and are not counted. How it counts, and fails closed, is the
 * shared per-address bound of `http/address-bound.ts`, which also counts IPv6 per /48 (`par.publicPushesPerNetwork`,
 * so a large IPv6 range cannot fill the counters' area); the counters live under `throttle-par:`, a MemoryStore
 * security area of their own.
 */
import { addressBoundKey, takeAddressSlot } from '../http/address-bound.js';
import type { SentinelContext } from '../http/context.js';
import { REQUEST_URI_TTL_SECONDS } from './pushed-requests.js';

/** The counters' key prefix (`PUSH_THROTTLE_PREFIX` of src/stores/memory.ts). */
const PREFIX = 'throttle-par';

/**
 * The counter key of an address.
 * @example pushThrottleKey('2001:db8:1:2::7') // 'throttle-par:ip:2001:db8:1:2'
 */
export function pushThrottleKey(ip: string | null): string {
  return addressBoundKey(PREFIX, ip);
}

/**
 * Counts one push of a public client from `ip` against `par.publicPushesPerAddress` (and, from IPv6, its /48 against
 * `par.publicPushesPerNetwork`).
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address or its network has pushed its share
 * this window.
 * @example await takePublicPushSlot(context, clientIP(context.config, request));
 */
export async function takePublicPushSlot(context: SentinelContext, ip: string | null): Promise<void> {
  const bound = {
    prefix: PREFIX,
    limit: context.config.par.publicPushesPerAddress,
    networkLimit: context.config.par.publicPushesPerNetwork,
    windowSeconds: REQUEST_URI_TTL_SECONDS,
    what: 'pushed authorization requests',
  };
  await takeAddressSlot(context, bound, ip);
}
