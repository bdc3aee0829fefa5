/**
 * Random secrets and their storable digests. Codes, session ids and refresh tokens are 256 random bits
 * (RFC 6749 §10.10 asks ≥ 128), travel base64url, and are stored only as SHA-256 digests, so a leaked store
 * does not hand out live credentials.
 */
import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';

const SECRET_BYTES = 32;
/**
 * Random bytes drawn from the CSPRNG 128 secrets at a time. One `randomBytes(32)` call costs a few microseconds of
 * fixed overhead (a buffer allocation and a call into OpenSSL), more than the hashing a code or refresh token needs
 * afterwards; one fill for 128 secrets costs about the same as three single calls. Every byte is handed out once and
 * overwritten with zeros as it goes, so the buffer holds only secrets not yet issued.
 */
const pool = Buffer.alloc(SECRET_BYTES * 128);
let poolOffset = pool.length;

/** A new opaque secret: 256 random bits, base64url (43 characters). */
export function randomSecret(): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += SECRET_BYTES;
  const secret = pool.toString('base64url', start, poolOffset);
  pool.fill(0, start, poolOffset);
  return secret;
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

/**
 * Compares two digests (or S256 challenges) in constant time with respect to their content, byte for byte. Unlike
 * {@link constantTimeEqual} it does not hash them first: a digest's length is public (43 characters for SHA-256
 * base64url), so answering "unequal" at once for another length reveals nothing, and the two extra hashes were the
 * larger part of a refresh rotation's digest work.
 *
 * @example if (!digestsEqual(digest(presented.secret), grant.refresh.current)) return { kind: 'invalid' };
 */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
