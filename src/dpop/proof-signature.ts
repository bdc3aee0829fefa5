/**
 * The signature check of a DPoP proof with node:crypto, synchronously. A proof is verified on every request to a
 * protected resource, so this is the guard's hot path: jose's WebCrypto route (an async key import plus an async
 * verify per proof) costs several times more here. The key type must fit the algorithm exactly (P-256 for ES256,
 * P-384 for ES384, Ed25519 for EdDSA, RSA of at least 2048 bits for RS256/PS256): no algorithm confusion.
 */
import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';

/** How each allowed algorithm verifies. */
const SCHEMES: Record<string, { hash: string | null; check: (key: KeyObject) => boolean; pss?: boolean }> = {
  ES256: { hash: 'sha256', check: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' },
  ES384: { hash: 'sha384', check: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'secp384r1' },
  EdDSA: { hash: null, check: (key) => key.asymmetricKeyType === 'ed25519' },
  RS256: { hash: 'sha256', check: (key) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048 },
  PS256: {
    hash: 'sha256',
    pss: true,
    check: (key) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
  },
};

/**
 * True when `proof` (a compact JWS already checked for shape) is signed under `alg` by the public key `jwk`.
 * Never throws: a key that does not import or does not fit the algorithm is simply not a valid signer.
 * @example if (!verifyProofSignature(proof, 'ES256', header.jwk)) throw invalidProof('the signature does not verify');
 */
export function verifyProofSignature(proof: string, alg: string, jwk: Record<string, unknown>): boolean {
  const scheme = SCHEMES[alg];
  if (scheme === undefined) return false;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    return false;
  }
  if (!scheme.check(key)) return false;
  const dot = proof.lastIndexOf('.');
  const signature = Buffer.from(proof.slice(dot + 1), 'base64url');
  const signed = Buffer.from(proof.slice(0, dot), 'ascii');
  try {
    return verify(
      scheme.hash,
      signed,
      scheme.pss === true ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : { key, dsaEncoding: 'ieee-p1363' },
      signature,
    );
  } catch {
    return false;
  }
}
