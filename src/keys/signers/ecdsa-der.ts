/**
 * ECDSA signatures come in two encodings: DER (`SEQUENCE { INTEGER r, INTEGER s }`, what cloud KMS APIs and most
 * crypto libraries return) and the fixed-size `r || s` that JWS requires (RFC 7518 §3.4). External signers may
 * answer either; this turns DER into the JWS form.
 */

function readInteger(der: Uint8Array, at: number): { value: Uint8Array; next: number } | null {
  if (der[at] !== 0x02) return null;
  const length = der[at + 1];
  if (length === undefined || length > 0x7f || at + 2 + length > der.length) return null;
  return { value: der.subarray(at + 2, at + 2 + length), next: at + 2 + length };
}

function fixed(value: Uint8Array, size: number): Uint8Array | null {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start += 1;
  const trimmed = value.subarray(start);
  if (trimmed.length > size) return null;
  const out = new Uint8Array(size);
  out.set(trimmed, size - trimmed.length);
  return out;
}

/**
 * Converts a DER ECDSA signature to `r || s` of `size` bytes each; `null` when `der` is not such a signature.
 * @example ecdsaDerToJose(await kmsSign(digest), 32) // 64 bytes for ES256
 */
export function ecdsaDerToJose(der: Uint8Array, size: number): Uint8Array | null {
  // SEQUENCE with a short-form length (a P-256 or P-384 signature is at most 104 bytes).
  if (der[0] !== 0x30 || der[1] !== der.length - 2) return null;
  const r = readInteger(der, 2);
  const s = r === null ? null : readInteger(der, r.next);
  if (r === null || s === null || s.next !== der.length) return null;
  const rFixed = fixed(r.value, size);
  const sFixed = fixed(s.value, size);
  if (rFixed === null || sFixed === null) return null;
  const out = new Uint8Array(2 * size);
  out.set(rFixed, 0);
  out.set(sFixed, size);
  return out;
}
