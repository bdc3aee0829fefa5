/**
 * The `deviceFlow` option (RFC 8628): how long a device authorization lasts, how often a device may poll, and how many
 * authorizations of public clients one client address may ask for.
 */
import { z } from 'zod';
import { NETWORK_MULTIPLE } from '../http/address-bound-default.js';

/** Schema of the `deviceFlow` option (used by the options schema). */
export const deviceFlowOptionsSchema = z
  .object({
    /** Seconds a device code and its user code stay usable (RFC 8628 §3.2 `expires_in`). */
    expiresIn: z.number().int().min(60).max(3600).default(600),
    /** Seconds a device waits between polls (RFC 8628 §3.2 `interval`); each `slow_down` adds 5 to it. */
    interval: z.number().int().min(1).max(60).default(5),
    /**
     * Device authorization requests of public clients (known by their client_id alone, so anyone can make them) one
     * client address may make per `2 × expiresIn`, the time a device record is kept; more get `429`. IPv6 addresses
     * count per /64, requests whose address is unknown share one counter. Confidential and `private_key_jwt` clients
     * authenticate their requests and are not counted (src/device/authorization-throttle.ts).
     */
    publicAuthorizationsPerAddress: z.number().int().positive().max(1_000_000_000).default(1000),
    /**
     * Such requests one IPv6 /48 may make per `2 × expiresIn` across its /64s; by default ten times
     * `publicAuthorizationsPerAddress`, derived when not given. Without it a /48 could create a counter for each of its
     * 65 536 /64s and fill the counters' MemoryStore area (src/http/address-bound.ts).
     */
    publicAuthorizationsPerNetwork: z.number().int().positive().max(10_000_000_000).optional(),
  })
  .transform(({ publicAuthorizationsPerNetwork, ...rest }) => ({
    ...rest,
    publicAuthorizationsPerNetwork: publicAuthorizationsPerNetwork ?? NETWORK_MULTIPLE * rest.publicAuthorizationsPerAddress,
  }))
  .prefault({});

/** The resolved `deviceFlow` option. */
export type DeviceFlowConfig = z.output<typeof deviceFlowOptionsSchema>;
