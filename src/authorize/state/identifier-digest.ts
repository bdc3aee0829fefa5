/**
 * The digests of what people type at the sign-in pages: a username in a throttle counter's store key and in the
 * `login.failed` / `login.throttled` events. A plain SHA-256 of a typed name is undone with a wordlist, and people type
 * their password into the username field often enough: an audit log or a listing of the store's keys would hand
 * those passwords to whoever reads it. So the digest is an HMAC under a key of the service, the same on every
 * instance (their counters must meet):
 *
 * - `throttle.digestKey` when given;
 * - else derived from `keyRotation.encryptionKey`, or from the private parts of the configured `keys`: secrets every
 *   instance of one deployment shares already, so nothing new to configure;
 * - else (`keys` holding only external signers, whose private parts never leave the HSM) a plain digest, and the
 *   service warns at start;
 * - without `keys` nor `keyRotation` (generated keys: one instance, tokens no other verifies) a random key.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../config.js';
import { digest } from '../../lib/random-secrets.js';

/** What the key of the digests is derived from. */
export type DigestConfig = Pick<ResolvedConfig, 'throttle' | 'keyRotation' | 'keys'>;

const INFO = 'sentinel-idp identifier digest';
// One key per resolved configuration (every request-scoped context shares it); `null`: no secret to key with.
const keys = new WeakMap<object, Buffer | null>();

function secretMaterial(config: DigestConfig): string | null | 'random' {
  if (config.throttle.digestKey !== undefined) return config.throttle.digestKey;
  if (config.keyRotation !== undefined) return config.keyRotation.encryptionKey;
  if (config.keys === undefined) return 'random';
  const privateParts = config.keys
    .map((key) => (key as { d?: unknown }).d)
    .filter((part): part is string => typeof part === 'string')
    .sort();
  return privateParts.length === 0 ? null : privateParts.join('\n');
}

function keyOf(config: DigestConfig): Buffer | null {
  let key = keys.get(config);
  if (key !== undefined) return key;
  const material = secretMaterial(config);
  key =
    material === null
      ? null
      : material === 'random'
        ? randomBytes(32)
        : Buffer.from(hkdfSync('sha256', Buffer.from(material), Buffer.alloc(0), INFO, 32));
  keys.set(config, key);
  return key;
}

/**
 * Whether typed identifiers are digested under a key (else: plain SHA-256, `keys` of external signers only).
 *
 * @example if (!identifierDigestKeyed(config)) warn('set throttle.digestKey');
 */
export function identifierDigestKeyed(config: DigestConfig): boolean {
  return keyOf(config) !== null;
}

/**
 * The digest of `text` (base64url, 43 characters): an HMAC-SHA-256 under the service's key, see above.
 *
 * @example identifierDigest(context.config, `${accountId}\u0000${username}`)
 */
export function identifierDigest(config: DigestConfig, text: string): string {
  const key = keyOf(config);
  return key === null ? digest(text) : createHmac('sha256', key).update(text).digest('base64url');
}
