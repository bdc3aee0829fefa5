/**
 * Options of DPoP (RFC 9449), as a zod shape that `config.ts` plugs into its schema.
 */
import { z } from 'zod';

/** Proof algorithms a client may use (RFC 9449 §5.1 `dpop_signing_alg_values_supported`); asymmetric only. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256'] as const;

/**
 * `nonce`: demand server nonces (RFC 9449 §8), answered with `use_dpop_nonce` and a `DPoP-Nonce` header.
 * `proofMaxAgeSeconds`: how old a proof's `iat` may be (and how long its `jti` is remembered).
 */
export const dpopOptionsSchema = z
  .object({
    nonce: z.boolean().default(false),
    proofMaxAgeSeconds: z.number().int().positive().max(600).default(60),
    algorithms: z
      .array(z.enum(DPOP_ALGORITHMS))
      .min(1)
      .default([...DPOP_ALGORITHMS]),
  })
  .prefault({});

/** The options above after defaults. */
export type DPoPOptions = z.output<typeof dpopOptionsSchema>;
