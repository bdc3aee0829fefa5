/**
 * The `par` option (RFC 9126): how many pushes of public clients one client address may make.
 */
import { z } from 'zod';

/**
 * `publicPushesPerAddress`: pushed authorization requests of public clients (known by their client_id alone, so
 * anyone can push for them) one client address may make per 60 seconds, the lifetime of a pushed request; more get
 * `429`. IPv6 addresses count per /64, requests whose address is unknown share one counter. Confidential and
 * `private_key_jwt` clients authenticate their pushes and are not counted.
 */
export const parOptionsSchema = z
  .object({
    publicPushesPerAddress: z.number().int().positive().max(1_000_000_000).default(1000),
  })
  .prefault({});

/** The resolved `par` option. */
export type ParConfig = z.output<typeof parOptionsSchema>;
