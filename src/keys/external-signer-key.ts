/**
 * Imports an `{ signer }` entry of the `keys` option: an {@link ExternalSigner} whose private key stays outside the
 * process. Each signature it answers is brought to JWS form (DER ECDSA converted, short RSA padded) and verified
 * against the published key before a token carries it.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { ConfigurationError } from '../errors.js';
import { assertKeyFits, inferAlgorithm } from './key-fit.js';
import type { ExternalSigner, JWK, SigningAlgorithm, SigningKey } from './key-types.js';
import { ecdsaDerToJose } from './signers/ecdsa-der.js';
import { padRsaSignature } from './signers/rsa-signature.js';
import { signatureBytesOf } from './signers/signature-bytes.js';
import { withSigningDeadline } from './signing-deadline.js';

/** Verifies a JWS signature against a key's public part; `signing-keys.ts` passes its thread-pool check. */
export type VerifySignature = (key: SigningKey, data: Buffer, signature: Buffer) => Promise<boolean>;

/** JWS signature length of the fixed-size algorithms; an external signer answering DER would not verify. */
const SIGNATURE_BYTES: Partial<Record<SigningAlgorithm, number>> = { ES256: 64, ES384: 96, EdDSA: 64 };

/**
 * The JWS signature length `publicKey` makes under `alg`: EdDSA's depends on the curve (RFC 8032: Ed448 114 bytes),
 * RSA's is the modulus length (RFC 8017 §8.2.1 I2OSP).
 */
function signatureBytes(alg: SigningAlgorithm, publicKey: KeyObject): number | undefined {
  if (alg === 'RS256' || alg === 'PS256') return Math.ceil((publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  return alg === 'EdDSA' && publicKey.asymmetricKeyType === 'ed448' ? 114 : SIGNATURE_BYTES[alg];
}

/**
 * The key of an external signer; `verify` is the thread-pool check of `signing-keys.ts`, passed in so this file
 * does not import the file that imports it.
 * @example const key = importExternal(signer, 'keys[0]', 5000, verifyBytesInPool);
 */
export function importExternal(signer: ExternalSigner, field: string, timeoutMs: number, verify: VerifySignature): SigningKey {
  if (typeof signer !== 'object' || signer === null || typeof signer.sign !== 'function') {
    throw new ConfigurationError(`${field}.signer`, 'must be { kid, alg, publicJwk, sign(data) }');
  }
  if (typeof signer.kid !== 'string' || signer.kid === '')
    throw new ConfigurationError(`${field}.signer.kid`, 'must be a non-empty string');
  if (typeof signer.publicJwk !== 'object' || signer.publicJwk === null || signer.publicJwk.d !== undefined) {
    throw new ConfigurationError(`${field}.signer.publicJwk`, 'must be a public JWK (without "d")');
  }
  const alg = inferAlgorithm({ ...signer.publicJwk, alg: signer.alg }, `${field}.signer`);
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: signer.publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    throw new ConfigurationError(`${field}.signer.publicJwk`, 'is not a valid public JWK');
  }
  assertKeyFits(alg, publicKey, `${field}.signer`, signer.kid);
  const exported = publicKey.export({ format: 'jwk' }) as JWK;
  const bytes = signatureBytes(alg, publicKey);
  const key: SigningKey = {
    kid: signer.kid,
    alg,
    publicKey,
    publicJWK: { ...exported, kid: signer.kid, alg, use: 'sig' },
    external: {
      kid: signer.kid,
      alg,
      publicJwk: signer.publicJwk,
      async sign(data) {
        const answer = await withSigningDeadline((signal) => signer.sign(data, { signal }), timeoutMs, signer.kid);
        let signature = signatureBytesOf(answer);
        if (signature === null || signature.length === 0) throw new Error(`an external signer returned no signature bytes for ${alg}`);
        // A KMS answers ECDSA in DER; JWS needs r||s. Accept both, so a KMS plugs in without a conversion step.
        if (bytes !== undefined && signature.length !== bytes && alg.startsWith('ES')) {
          signature = ecdsaDerToJose(signature, bytes / 2) ?? signature;
        }
        // RSA: some KMS/HSM libraries drop the leading zero bytes; JWS needs the modulus-length form (RFC 8017 I2OSP).
        if (bytes !== undefined && (alg === 'RS256' || alg === 'PS256')) signature = padRsaSignature(signature, bytes) ?? signature;
        if (bytes !== undefined && signature.length !== bytes) {
          throw new Error(`an external signer returned a signature that is not in JWS form for ${alg}`);
        }
        // The key that signed is out of sight: a KMS alias moved to a new key version, an HSM key re-made under
        // its label, a signer answering garbage of the right length. Its token would verify nowhere, and nothing
        // else would tell: each signature is checked against the published key, and refused (500) unless it holds.
        let valid = await verify(key, Buffer.from(data), Buffer.from(signature));
        // A DER answer is 64 (ES256) or 96 (ES384) bytes when r and s are short enough, the raw length, so it was
        // taken as raw above: one that does not verify as raw but parses as DER is converted and verified instead.
        const der = !valid && alg.startsWith('ES') && bytes !== undefined ? ecdsaDerToJose(signature, bytes / 2) : null;
        if (der !== null) {
          signature = der;
          valid = await verify(key, Buffer.from(data), Buffer.from(signature));
        }
        if (!valid) {
          throw new Error(`the external signer of kid ${signer.kid} returned a signature its published key does not verify`);
        }
        return signature;
      },
    },
  };
  return key;
}
