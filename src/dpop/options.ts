/**
 * Options of DPoP (RFC 9449), as a zod shape that `config/schema.ts` plugs into its schema.
 */
import { z } from 'zod';

/** Proof algorithms a client may use (RFC 9449 §5.1 `dpop_signing_alg_values_supported`); asymmetric only. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'] as const;

/**
 * `nonce`: demand server nonces (RFC 9449 §8), answered with `use_dpop_nonce` and a `DPoP-Nonce` header.
 * `proofMaxAgeSeconds`: how old a proof's `iat` may be (and how long its `jti` is remembered).
 * `pushProofsPerAddress`: how many DPoP-bound pushed authorization requests of public clients (known by their
 * client_id alone) one client address may make per proof window, per instance; more get `429`. IPv6 addresses
 * count per /64; requests whose address is unknown are not counted.
 */
export const dpopOptionsSchema = z
  .object({
    nonce: z.boolean().default(false),
    proofMaxAgeSeconds: z.number().int().positive().max(600).default(60),
    pushProofsPerAddress: z.number().int().positive().max(1_000_000_000).default(1000),
    algorithms: z
      .array(z.enum(DPOP_ALGORITHMS))
      .min(1)
      .default([...DPOP_ALGORITHMS]),
  })
  .prefault({});
