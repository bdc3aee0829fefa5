/**
 * Public-key checks shared by DPoP proofs, client assertions and trusted issuers' key sets: a key that travels in a
 * request, sits in an app registration or comes from a fetched key set must be an asymmetric public key (RFC 7517 §4,
 * RFC 9449 §4.2: "MUST NOT contain a private key"), and an RSA one of 2048 to 8192 bits (RFC 7518 §3.3) whose public
 * exponent is at most 65537.
 *
 * The upper bounds are about cost, not strength. An RSA verification is a modular exponentiation by the public
 * exponent: with 65537 a 3072-bit key costs about 0.1 ms, but a 3072-bit exponent (which OpenSSL accepts under a
 * 3072-bit modulus) some 40 times that, and the key set of a `jwks_uri` is its host's to choose while anyone who
 * knows the client id can have a made-up assertion checked against it. Every RSA key made in practice has e = 3, 17
 * or 65537 and at most 8192 bits; DPoP proof keys are held to the same bounds (dpop/proof-signature.ts).
 */

/** JWK members that only private or symmetric keys have (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** Asymmetric algorithms accepted for client-held keys: never `none`, never an HMAC (the key would be a shared secret). */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
];

/**
 * The fewest bits an RSA key may have. RFC 7518 §3.3 and §3.5: "A key of size 2048 bits or larger MUST be used"
 * with RS* and PS*, and jose throws a TypeError at verification for a shorter one, so such a key must be refused
 * before it reaches a verifier: it could verify nothing anyway.
 */
const MIN_RSA_BITS = 2048;
/** The most bits an RSA key may have (a verification's cost grows with the square of the modulus). */
const MAX_RSA_BITS = 8192;
/** The largest public exponent (F4, the usual one); a larger one only makes each verification cost more. */
const MAX_RSA_EXPONENT = 65537;

/** The size in bits of the base64url big-endian integer `n` (leading zero bytes ignored); 0 for none. */
function modulusBits(n: unknown): number {
  if (typeof n !== 'string') return 0;
  const bytes = Buffer.from(n, 'base64url');
  const first = bytes.findIndex((byte) => byte !== 0);
  if (first === -1) return 0;
  return (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first] as number));
}

/**
 * The base64url big-endian public exponent `e` as a number when it is an odd one from 3 to {@link MAX_RSA_EXPONENT}
 * (1 would make every message its own signature, an even one is no RSA exponent), else `null`.
 */
function usualExponent(e: unknown): number | null {
  if (typeof e !== 'string' || e.length > 16) return null;
  const value = Buffer.from(e, 'base64url').reduce((sum, byte) => sum * 256 + byte, 0);
  return value >= 3 && value <= MAX_RSA_EXPONENT && value % 2 === 1 ? value : null;
}

/**
 * Why `jwk` is not an acceptable public key, or `null` when it is.
 * @example publicKeyProblem({ kty: 'EC', crv: 'P-256', x, y, d }) // 'must not contain private key material'
 */
export function publicKeyProblem(jwk: unknown): string | null {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'must be a JWK object';
  const key = jwk as Record<string, unknown>;
  if (key.kty !== 'EC' && key.kty !== 'RSA' && key.kty !== 'OKP') return 'must be an EC, RSA or OKP key';
  if (PRIVATE_MEMBERS.some((member) => member in key)) return 'must not contain private key material';
  if (key.kty === 'RSA') {
    const bits = modulusBits(key.n);
    if (bits < MIN_RSA_BITS) return `must be an RSA key of at least ${MIN_RSA_BITS} bits`;
    if (bits > MAX_RSA_BITS) return `must be an RSA key of at most ${MAX_RSA_BITS} bits`;
    if (usualExponent(key.e) === null) return `must be an RSA key whose public exponent is odd and at most ${MAX_RSA_EXPONENT}`;
  }
  return null;
}
