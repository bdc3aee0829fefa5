/**
 * The timings of a ring, in milliseconds, checked against the rest of the configuration at startup: how often keys
 * rotate, how long a new key is published before it signs, how long a retired one stays published, how often each
 * instance reloads the ring.
 */
import { ConfigurationError } from '../../errors.js';
import type { KeyRotationOptions } from './options.js';

/** Timings of the ring in milliseconds, validated against the rest of the configuration. */
export interface RingTimings {
  rotateEveryMs: number;
  prePublishMs: number;
  retainMs: number;
  refreshMs: number;
}

/**
 * Checks the rotation timings against the JWKS caching and the token lifetimes:
 * - a new key must be in every instance's JWKS (≤ `refreshSeconds`) and then in every cache of it (≤ `jwksMaxAge`)
 *   before it signs, so `prePublishSeconds ≥ jwksMaxAge + refreshSeconds`;
 * - a retired key must stay published while a token it signed can be valid, so `retainSeconds` is at least the
 *   longest token lifetime plus the clock tolerance (that is its default).
 * @throws ConfigurationError naming the field.
 */
export function ringTimings(
  rotation: KeyRotationOptions,
  config: { jwksMaxAge: number; accessTokenTtl: number; idTokenTtl: number; clockTolerance: number },
): RingTimings {
  const minimumRetain = Math.max(config.accessTokenTtl, config.idTokenTtl) + config.clockTolerance;
  const retainSeconds = rotation.retainSeconds ?? minimumRetain;
  if (retainSeconds < minimumRetain) {
    throw new ConfigurationError(
      'keyRotation.retainSeconds',
      `must be at least ${minimumRetain} (the longest token lifetime plus clockTolerance)`,
    );
  }
  const minimumPrePublish = config.jwksMaxAge + rotation.refreshSeconds;
  if (rotation.prePublishSeconds < minimumPrePublish) {
    throw new ConfigurationError(
      'keyRotation.prePublishSeconds',
      `must be at least ${minimumPrePublish} (jwksMaxAge + refreshSeconds), so that every cached JWKS has a key before it signs`,
    );
  }
  if (rotation.rotateEverySeconds <= rotation.prePublishSeconds) {
    throw new ConfigurationError('keyRotation.rotateEverySeconds', 'must be longer than prePublishSeconds');
  }
  return {
    rotateEveryMs: rotation.rotateEverySeconds * 1000,
    prePublishMs: rotation.prePublishSeconds * 1000,
    retainMs: retainSeconds * 1000,
    refreshMs: rotation.refreshSeconds * 1000,
  };
}
