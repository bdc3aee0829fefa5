/**
 * The `par` option (RFC 9126): how many pushes of public clients one client address, and one IPv6 /48, may make.
 */
import { z } from 'zod';
import { NETWORK_MULTIPLE } from '../http/address-bound-default.js';

/**
 * `publicPushesPerAddress`: pushed authorization requests of public clients (known by their client_id alone, so
 * anyone can push for them) one client address may make per 60 seconds, the lifetime of a pushed request; more get
 * `429`. IPv6 addresses count per /64, requests whose address is unknown share one counter. Confidential and
 * `private_key_jwt` clients authenticate their pushes and are not counted.
 *
 * `publicPushesPerNetwork`: such pushes one IPv6 /48 may make per 60 seconds across its /64s, by default ten times
 * `publicPushesPerAddress` (the login throttle's ratio of `maxFailuresPerNetwork` to `maxFailuresPerIp`); without it a
 * /48 could create a counter for each of its 65 536 /64s and fill the counters' MemoryStore area
 * (src/http/address-bound.ts). Derived when not given, so raising the per-address limit raises it too.
 */
export const parOptionsSchema = z
  .object({
    publicPushesPerAddress: z.number().int().positive().max(1_000_000_000).default(1000),
    publicPushesPerNetwork: z.number().int().positive().max(10_000_000_000).optional(),
  })
  .transform(({ publicPushesPerAddress, publicPushesPerNetwork }) => ({
    publicPushesPerAddress,
    publicPushesPerNetwork: publicPushesPerNetwork ?? NETWORK_MULTIPLE * publicPushesPerAddress,
  }))
  .prefault({});

/** The resolved `par` option. */
export type ParConfig = z.output<typeof parOptionsSchema>;
