/**
 * Client secrets: generation, the storable hash, and the constant-time check.
 *
 * Client secrets are ≥ 256-bit random values, so a plain SHA-256 digest is a sound way to store them (no
 * password-hashing work factor is needed). Digests are compared with `crypto.timingSafeEqual`, and an unknown
 * client is checked against a dummy digest so that both failures take the same path (RFC 6749 §2.3.1, §10.10).
 */
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { App } from './app.js';

const HASH_PREFIX = 'sha256:';

/**
 * The storable form of a client secret (RFC 6749 §2.3.1, §10.1: the server keeps client credentials confidential;
 * a 256-bit random secret needs no slow password hash).
 * @example hashClientSecret('s3cr3t') // 'sha256:…'
 */
export function hashClientSecret(secret: string): string {
  return HASH_PREFIX + hash('sha256', secret, 'base64url');
}

/** True when `hash` has the form {@link hashClientSecret} produces. */
export function isClientSecretHash(hash: string): boolean {
  return hash.startsWith(HASH_PREFIX) && Buffer.from(hash.slice(HASH_PREFIX.length), 'base64url').length === 32;
}

const DUMMY_DIGEST = hash('sha256', randomBytes(32), 'buffer');

/**
 * Compares a presented secret with a stored hash in constant time (RFC 6749 §2.3.1, §10.10). With no stored hash
 * (unknown client) the same digest and comparison run against a dummy, and the answer is false.
 *
 * @example
 * if (!verifyClientSecret(presentedSecret, app?.clientSecretHash)) throw new OAuthError('invalid_client', 'client authentication failed');
 */
export function verifyClientSecret(presented: string, storedHash: string | undefined): boolean {
  return digestMatches(hash('sha256', presented, 'buffer'), storedHash);
}

/** One constant-time comparison of a presented secret's digest with a stored hash (the dummy when there is none). */
function digestMatches(presentedDigest: Buffer, storedHash: string | undefined): boolean {
  const stored = storedHash?.startsWith(HASH_PREFIX) ? Buffer.from(storedHash.slice(HASH_PREFIX.length), 'base64url') : undefined;
  const expected = stored !== undefined && stored.length === 32 ? stored : DUMMY_DIGEST;
  return timingSafeEqual(presentedDigest, expected) && expected !== DUMMY_DIGEST;
}

/**
 * The most retiring secrets an app keeps (every store's `rotateClientSecret` drops the oldest beyond it): rotations
 * inside the overlap would otherwise pile up secrets without bound, each compared on every token request. Three
 * cover a routine rotation plus a couple of retries; the secret made current longest ago goes first.
 *
 * @example
 * (app.retiringSecrets ?? []).length <= MAX_RETIRING_SECRETS; // after any rotation
 */
export const MAX_RETIRING_SECRETS = 3;

/**
 * How many stored hashes every check compares with, at least: the current secret and the retiring ones a store
 * keeps. An app with fewer fills the rest with the dummy, so an unknown client, an app without a rotation under way
 * and one with retiring secrets cost the same; only an app of a host store that keeps more costs more.
 */
const SECRET_SLOTS = MAX_RETIRING_SECRETS + 1;

/**
 * A new client secret: 256 random bits, base64url (RFC 6749 §10.10 asks for credentials an attacker cannot guess).
 *
 * @example
 * const clientSecret = generateClientSecret(); // show once; store hashClientSecret(clientSecret)
 */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A new client id: a lower-case UUID, the platform's installation-id shape. */
export function generateClientId(): string {
  return randomUUID();
}

/**
 * Checks a presented secret against an app's current secret and every retiring one that has not expired, all in
 * constant time and all of them every time, so the answer's timing says nothing about which one matched
 * (RFC 6749 §2.3.1, §10.10).
 *
 * @example
 * if (!verifyAppSecret(presented, app)) throw new OAuthError('invalid_client', 'client authentication failed');
 */
export function verifyAppSecret(presented: string, app: App | null): boolean {
  // One digest of the presented secret, then the same number of comparisons whatever the app holds.
  const presentedDigest = hash('sha256', presented, 'buffer');
  let ok = digestMatches(presentedDigest, app?.clientSecretHash);
  const now = Date.now() / 1000;
  const retiring = app?.retiringSecrets ?? [];
  for (let slot = 0; slot < Math.max(SECRET_SLOTS - 1, retiring.length); slot += 1) {
    const secret = retiring[slot];
    const matches = digestMatches(presentedDigest, secret?.hash);
    ok = ok || (matches && secret !== undefined && secret.expiresAt > now);
  }
  return ok;
}
