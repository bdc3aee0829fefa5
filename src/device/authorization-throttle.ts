/**
 * A per-address bound on the device authorization requests of public clients (RFC 8628 §3.1, §5.2). A public client
 * is known by its client_id alone, so anyone who knows one (a CLI's id is in its binary) can ask for codes without
 * any credential, and each request stores a device record and a user-code pointer, kept `2 × deviceFlow.expiresIn`
 * (late polls hear `expired_token`): unbounded, one host could fill MemoryStore's `device:` budget (evicting the
 * pending authorizations of real users) or Redis's memory. Only the entry of user codes was throttled. So such
 * requests count against their client address: `deviceFlow.publicAuthorizationsPerAddress` per window of the
 * records' retention, so one address never holds more live device records than the limit. Confidential and
 * `private_key_jwt` clients authenticate their requests and are not counted. How it counts, and fails closed, is the
 * shared per-address bound of `http/address-bound.ts`, which also counts IPv6 per /48
 * (`deviceFlow.publicAuthorizationsPerNetwork`, so a large IPv6 range cannot fill the counters' area); the counters
 * live under `throttle-device:`, a MemoryStore security area of their own.
 */
import { addressBoundKey, takeAddressSlot } from '../http/address-bound.js';
import type { SentinelContext } from '../http/context.js';

/** The counters' key prefix (`DEVICE_THROTTLE_PREFIX` of src/stores/memory.ts). */
const PREFIX = 'throttle-device';

/**
 * The counter key of an address.
 * @example deviceAuthorizationThrottleKey('2001:db8:1:2::7') // 'throttle-device:ip:2001:db8:1:2'
 */
export function deviceAuthorizationThrottleKey(ip: string | null): string {
  return addressBoundKey(PREFIX, ip);
}

/**
 * Counts one device authorization request of a public client from `ip` against
 * `deviceFlow.publicAuthorizationsPerAddress` (and, from IPv6, its /48 against
 * `deviceFlow.publicAuthorizationsPerNetwork`), over the window a device record is kept (`2 × expiresIn`).
 * @throws OAuthError temporarily_unavailable (429, `Retry-After`) when the address or its network has made its share
 * this window.
 * @example await takePublicDeviceAuthorizationSlot(context, clientIP(context.config, request));
 */
export async function takePublicDeviceAuthorizationSlot(context: SentinelContext, ip: string | null): Promise<void> {
  const { publicAuthorizationsPerAddress, publicAuthorizationsPerNetwork, expiresIn } = context.config.deviceFlow;
  const bound = {
    prefix: PREFIX,
    limit: publicAuthorizationsPerAddress,
    networkLimit: publicAuthorizationsPerNetwork,
    windowSeconds: 2 * expiresIn,
    what: 'device authorization requests',
  };
  await takeAddressSlot(context, bound, ip);
}
