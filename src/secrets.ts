/**
 * Random secrets and their storable digests. Codes, session ids and refresh tokens are 256 random bits
 * (RFC 6749 §10.10 asks ≥ 128), travel base64url, and are stored only as SHA-256 digests, so a leaked store
 * does not hand out live credentials.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new opaque secret: 256 random bits, base64url (43 characters). */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The SHA-256 digest of a secret, base64url; use it as the store key. */
export function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Compares two strings in constant time with respect to their content (digests first, so lengths need not match). */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
