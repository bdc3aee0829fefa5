/**
 * RSA signatures are integers below the modulus, and RSASSA (RFC 8017 §8.2.1 step 2c, §8.1.1 step 2c) writes them
 * as octet strings of exactly the modulus length k with I2OSP, so one in 256 starts with a zero byte. Some KMS and
 * HSM libraries hand back the integer's minimal bytes instead, dropping those zeros; OpenSSL (and so node:crypto and
 * every WebCrypto verifier) refuses a signature of any other length than k, and JWS (RFC 7518 §3.3, §3.5) carries
 * the k-octet form. This restores it.
 */

/**
 * Left-pads `signature` with zero bytes to `modulusBytes`; `null` when it is longer than the modulus (never trimmed:
 * a longer answer is not an RSA signature of this key).
 * @example padRsaSignature(await kms.sign(input), 256) // 256 bytes for a 2048-bit key
 */
export function padRsaSignature(signature: Uint8Array, modulusBytes: number): Uint8Array | null {
  if (signature.length > modulusBytes) return null;
  if (signature.length === modulusBytes) return signature;
  const out = new Uint8Array(modulusBytes);
  out.set(signature, modulusBytes - signature.length);
  return out;
}
