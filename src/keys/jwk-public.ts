/**
 * Public-key checks shared by DPoP proofs and client assertions: a key that travels in a request or sits in an app
 * registration must be an asymmetric public key (RFC 7517 §4, RFC 9449 §4.2: "MUST NOT contain a private key").
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
 * Why `jwk` is not an acceptable public key, or `null` when it is.
 * @example publicKeyProblem({ kty: 'EC', crv: 'P-256', x, y, d }) // 'must not contain private key material'
 */
export function publicKeyProblem(jwk: unknown): string | null {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'must be a JWK object';
  const key = jwk as Record<string, unknown>;
  if (key.kty !== 'EC' && key.kty !== 'RSA' && key.kty !== 'OKP') return 'must be an EC, RSA or OKP key';
  if (PRIVATE_MEMBERS.some((member) => member in key)) return 'must not contain private key material';
  return null;
}
