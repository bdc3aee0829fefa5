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
  /** One active key per algorithm; the first signs by default. */
  algorithms: z
    .array(z.enum(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']))
    .min(1)
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
