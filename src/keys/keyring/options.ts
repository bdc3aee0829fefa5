/**
 * The `keyRotation` option: signing keys generated, kept and rotated in the service's Store, so every instance
 * sharing the store signs with the same key and publishes the same JWKS.
 */
import { z } from 'zod';

const seconds = z.number().int().positive();

/** Schema of `keyRotation`; cross-field rules (against `jwksMaxAge` and token lifetimes) are checked in {@link ringTimings}. */
export const keyRotationSchema = z.object({
  /** 32 random bytes, base64url: seals the private parts in the store (AES-256-GCM). */
  encryptionKey: z.string().min(1),
  rotateEverySeconds: seconds,
  prePublishSeconds: seconds,
  retainSeconds: seconds.optional(),
  refreshSeconds: seconds.max(60).default(30),
  /**
   * One active key per algorithm; the first signs by default (while its key is pending, the next with an active
   * one). Without it: ES256, plus RS256 when ID tokens can be issued (`withDefaultAlgorithms`).
   */
  algorithms: z
    .array(z.enum(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']))
    .min(1)
    // A rotation makes one key per algorithm: one named twice would get the same key twice, under one kid, and the
    // ring written then would load nowhere (a duplicate kid), taking every instance down at the first rotation.
    .refine((list) => new Set(list).size === list.length, 'must name each algorithm once')
    .default(['ES256']),
  /** Prefix of the ring's store keys, so several issuers can share one store. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/)
    .default('default'),
});

/**
 * The resolved `keyRotation` option: when keys are generated, published in the JWKS (RFC 7517 §5) and retired.
 * @example const rotation: KeyRotationOptions = { encryptionKey, rotateEverySeconds: 30 * 86_400, prePublishSeconds: 3600, ... };
 */
export type KeyRotationOptions = z.output<typeof keyRotationSchema>;

/**
 * `algorithms` when the options leave it out: ES256 signs (access tokens are the hot path, and ES256 is the cheapest
 * to sign and verify), and a deployment that can issue ID tokens also keeps an RS256 key, the one algorithm every
 * OpenID Connect client must verify (OpenID Connect Core §15.1) and the default of a client that registered no
 * `id_token_signed_response_alg` (OpenID Connect Registration §2). Algorithms given explicitly are kept as given.
 * @example const rotation = withDefaultAlgorithms(parsed.keyRotation, options.keyRotation?.algorithms !== undefined, true);
 */
export function withDefaultAlgorithms(
  rotation: KeyRotationOptions | undefined,
  algorithmsGiven: boolean,
  issuesIDTokens: boolean,
): KeyRotationOptions | undefined {
  if (rotation === undefined || algorithmsGiven || !issuesIDTokens) return rotation;
  return { ...rotation, algorithms: ['ES256', 'RS256'] };
}
