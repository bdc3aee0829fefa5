/**
 * Random secrets and their storable digests. Codes, session ids and refresh tokens are 256 random bits
 * (RFC 6749 §10.10 asks ≥ 128), travel base64url, and are stored only as SHA-256 digests, so a leaked store
 * does not hand out live credentials.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new opaque secret: 256 random bits, base64url (43 characters). */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The SHA-256 digest of a secret, base64url; use it as the store key. */
export function digest(value: string): string {
  // The one-shot hash: no Hash object per call, a fraction of createHash's cost on the hot paths that digest.
  return hash('sha256', value, 'base64url');
}

/** Compares two strings in constant time with respect to their content (digests first, so lengths need not match). */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
}
