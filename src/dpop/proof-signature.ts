/**
 * The signature check of a DPoP proof with node:crypto, synchronously. A proof is verified on every request to a
 * protected resource, so this is the guard's hot path: jose's WebCrypto route (an async key import plus an async
 * verify per proof) costs several times more here. The key type must fit the algorithm exactly (P-256 for ES256,
 * P-384 for ES384, Ed25519 for EdDSA, RSA of 2048 to 8192 bits for RS256/PS256): no algorithm confusion.
 *
 * The key comes with the proof, so its cost is the caller's choice, and a public client's caller needs no credential
 * to have one checked (the proof is checked before the code it comes with). An RSA verification is a modular
 * exponentiation by the public exponent: with the usual 65537 a 2048-bit key costs tens of µs, but a 3072-bit
 * modulus with a 3072-bit exponent (which OpenSSL accepts) costs some 35 ms of the main thread, and a 16384-bit one
 * with a 64-bit exponent some 20 ms. Hence the bounds: a modulus of at most 8192 bits and an exponent of at most
 * 65537, which every RSA key made in practice (e = 3, 17 or 65537) meets.
 */
import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { isCanonicalBase64url } from '../lib/compact-jwt.js';

/** The largest RSA modulus, in bits, of a proof key. */
const MAX_RSA_BITS = 8192;
/** The largest public exponent of an RSA proof key (F4, the usual one). */
const MAX_RSA_EXPONENT = 65537n;

/** An RSA key of 2048 to 8192 bits whose public exponent is at most 65537. */
function fitsRSA(key: KeyObject): boolean {
  if (key.asymmetricKeyType !== 'rsa') return false;
  const { modulusLength = 0, publicExponent = 0n } = key.asymmetricKeyDetails ?? {};
  return modulusLength >= 2048 && modulusLength <= MAX_RSA_BITS && publicExponent <= MAX_RSA_EXPONENT;
}

/** How each allowed algorithm verifies. */
const SCHEMES: Record<string, { hash: string | null; check: (key: KeyObject) => boolean; pss?: boolean }> = {
  ES256: { hash: 'sha256', check: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' },
  ES384: { hash: 'sha384', check: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'secp384r1' },
  EdDSA: { hash: null, check: (key) => key.asymmetricKeyType === 'ed25519' },
  RS256: { hash: 'sha256', check: fitsRSA },
  PS256: { hash: 'sha256', pss: true, check: fitsRSA },
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
  const signaturePart = proof.slice(dot + 1);
  // Its characters are not signed: another spelling of the same bytes (one more character after 4n, spare bits
  // set) would decode to this signature, and a proof that is not the one signed would verify.
  if (!isCanonicalBase64url(signaturePart)) return false;
  const signature = Buffer.from(signaturePart, 'base64url');
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
