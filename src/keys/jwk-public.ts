/**
 * Public-key checks shared by DPoP proofs and client assertions: a key that travels in a request or sits in an app
 * registration must be an asymmetric public key (RFC 7517 §4, RFC 9449 §4.2: "MUST NOT contain a private key"), and
 * an RSA one of at least 2048 bits (RFC 7518 §3.3).
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

/** The size in bits of the base64url big-endian integer `n` (leading zero bytes ignored); 0 for none. */
function modulusBits(n: unknown): number {
  if (typeof n !== 'string') return 0;
  const bytes = Buffer.from(n, 'base64url');
  const first = bytes.findIndex((byte) => byte !== 0);
  if (first === -1) return 0;
  return (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first] as number));
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
  if (key.kty === 'RSA' && modulusBits(key.n) < MIN_RSA_BITS) return `must be an RSA key of at least ${MIN_RSA_BITS} bits`;
  return null;
}
