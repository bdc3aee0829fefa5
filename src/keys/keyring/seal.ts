/**
 * Private keys at rest: AES-256-GCM under the `keyRotation.encryptionKey`, bound to their kid (associated data), so
 * a ciphertext copied onto another entry does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ConfigurationError } from '../../errors.js';

/** A sealed private JWK as kept in the store: base64url IV, ciphertext and tag. */
export interface Sealed {
  iv: string;
  data: string;
  tag: string;
}

const FIELD = 'keyRotation.encryptionKey';

/**
 * A command that makes a key this file accepts. `basenc --base64url` alone pads with "=", which is refused: the key
 * is also used as the string written (DPoP nonces, identifier digests), so a padded and an unpadded spelling of the
 * same bytes on two instances would disagree there.
 */
export const ENCRYPTION_KEY_COMMAND = 'openssl rand 32 | basenc --base64url | tr -d =';

/**
 * Decodes the configured key: exactly 32 bytes of base64url, unpadded.
 * @throws ConfigurationError otherwise (without repeating the value).
 */
export function parseEncryptionKey(value: string): Buffer {
  const bytes = /^[A-Za-z0-9_-]+$/.test(value) ? Buffer.from(value, 'base64url') : Buffer.alloc(0);
  if (bytes.length !== 32) {
    const padded = /^[A-Za-z0-9_-]+=+$/.test(value) ? ', without the "=" padding' : '';
    throw new ConfigurationError(FIELD, `must be 32 random bytes in base64url${padded} (generate one with \`${ENCRYPTION_KEY_COMMAND}\`)`);
  }
  return bytes;
}

function associated(kid: string): Buffer {
  return Buffer.from(`sentinel-idp key ring v1\u0000${kid}`);
}

/** Seals `plaintext` for the entry `kid`. */
export function seal(key: Buffer, kid: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associated(kid));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64url'), data: data.toString('base64url'), tag: cipher.getAuthTag().toString('base64url') };
}

/** The length of the GCM tag `seal` writes, and the only one `open` accepts. */
const TAG_BYTES = 16;

/**
 * Opens a sealed entry. Only a whole tag is accepted: without `authTagLength`, node:crypto takes a tag cut to 4 or 8
 * bytes as valid, so whoever can write to the store would need some 2^32 guesses, not 2^128, to have an instance
 * open (and sign with) a key it never sealed.
 * @throws ConfigurationError when the key does not open it: a different `encryptionKey` than the ring was sealed with.
 */
export function open(key: Buffer, kid: string, sealed: Sealed): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(associated(kid));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new ConfigurationError(
      FIELD,
      'does not open the signing keys of the key ring in the store: it is not the key the ring was sealed with',
    );
  }
}
