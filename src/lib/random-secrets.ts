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

/**
 * A new opaque secret: 256 random bits, base64url (43 characters); `bytes` random bytes when given.
 *
 * @example const sessionId = randomSecret(33); // 44 characters
 */
export function randomSecret(bytes: number = SECRET_BYTES): string {
  if (poolOffset + bytes > pool.length) {
    // The bytes left over were never handed out: overwritten by the refill, as every byte is once used.
    randomFillSync(pool);
    poolOffset = 0;
  }
  const start = poolOffset;
  poolOffset += bytes;
  const secret = pool.toString('base64url', start, poolOffset);
  pool.fill(0, start, poolOffset);
  return secret;
}

/** The SHA-256 digest of a secret, base64url; use it as the store key. */
export function digest(value: string): string {
  // The one-shot hash: no Hash object per call, a fraction of createHash's cost on the hot paths that digest.
  return hash('sha256', value, 'base64url');
}

/**
 * Characters of a {@link shortDigest}: 132 bits of the SHA-256 digest, as the store keeps digests of 256-bit secrets
 * in records written since 2026-11-30.
 */
export const SHORT_DIGEST_LENGTH = 22;

/**
 * The SHA-256 digest of a secret, base64url, cut to its first 22 characters (132 bits): what records keep of a
 * 256-bit random secret. Still one-way (finding a secret for a stored value takes 2^132 tries), and two secrets of
 * one record never share it by chance. A long-lived record per user holds two or three such digests, so the 21
 * characters each saves are a large part of its size. The cut is the full digest's prefix, so a record holding the
 * full digest of an earlier version can be shortened without the secret.
 *
 * @example const stored = shortDigest(secret); // matchesStoredDigest(secret, stored) === true
 */
export function shortDigest(value: string): string {
  return digest(value).slice(0, SHORT_DIGEST_LENGTH);
}

/**
 * Whether `stored` is the digest of `value` in either stored form: the {@link shortDigest} of this version, or the
 * full 43-character digest of records written earlier (told apart by their length, which is public). Any other
 * stored value matches nothing (fail closed). Constant time with respect to content.
 *
 * @example if (!matchesStoredDigest(presented.secret, grant.refresh.current)) return { kind: 'invalid' };
 */
export function matchesStoredDigest(value: string, stored: string): boolean {
  const full = digest(value);
  return digestsEqual(stored.length === SHORT_DIGEST_LENGTH ? full.slice(0, SHORT_DIGEST_LENGTH) : full, stored);
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
