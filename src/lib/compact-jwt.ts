/**
 * The parts of a compact JWS (RFC 7515 §7.1), split once and decoded with Buffer: the one decoder of the service's own
 * tokens (keys/jws.ts), DPoP proofs and brand JWTs. jose's decoders copy the token and decode base64 a byte at a
 * time in JavaScript; this keeps their strictness: base64url characters only, UTF-8 that is well formed, and a JSON
 * object in each part. A signature part is held to more (see {@link isCanonicalBase64url}): its characters are not
 * signed, so any other spelling of the same bytes would pass for the token.
 */
import { isUtf8 } from 'node:buffer';

/** The three parts of a compact JWS, still encoded (RFC 7515 §7.1). */
export interface CompactJwtParts {
  header: string;
  payload: string;
  signature: string;
}

/**
 * The three parts of `jwt`, or `null` when it is not three dot-separated parts with a non-empty payload (a JWE's
 * five parts, too: a brand JWT is signed, not encrypted).
 * @example const parts = splitCompactJwt(assertion); if (parts === null) throw refuse('the assertion is not a JWT');
 */
export function splitCompactJwt(jwt: string): CompactJwtParts | null {
  const first = jwt.indexOf('.');
  const second = first === -1 ? -1 : jwt.indexOf('.', first + 1);
  if (second === -1 || jwt.indexOf('.', second + 1) !== -1 || second === first + 1) return null;
  return { header: jwt.slice(0, first), payload: jwt.slice(first + 1, second), signature: jwt.slice(second + 1) };
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Whether `part` is the one base64url spelling of the bytes it encodes (RFC 7515 §2: no padding, no other characters;
 * RFC 4648 §3.5: the bits after the last byte are zero). Node's decoder (and jose's, through `atob`) takes much else
 * to the same bytes: it skips characters outside the alphabet, padding and white space, drops a last character that
 * leaves a length of 4n + 1, and ignores the unused low bits of the last one. Header and payload are signed as
 * written, so another spelling of them fails the signature; the signature part is not, so it must be checked here,
 * or a token with its signature respelled (`A` appended to an ES384 signature, the last character of an ES256 one
 * changed from `A` to `B`) verifies, and the token checked is not the token presented. The empty string (no
 * bytes) is canonical: an unsecured JWT's empty signature is the algorithm check's to refuse.
 * @example if (!isCanonicalBase64url(parts.signature)) throw refuse('the assertion is not a JWT');
 */
export function isCanonicalBase64url(part: string): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return false;
  const tail = part.length % 4;
  if (tail === 0) return true;
  if (tail === 1) return false;
  // Two characters carry one byte and four spare bits, three carry two bytes and two spare bits.
  return ALPHABET.indexOf(part.charAt(part.length - 1)) % (tail === 2 ? 16 : 4) === 0;
}

/**
 * The JSON object a base64url part encodes, or `null` when the part is empty, not base64url (RFC 7515 §2: no
 * padding, no other characters), not UTF-8, not JSON, or not an object.
 * @example const claims = decodeJsonPart(parts.payload); if (claims === null) throw refuse('the assertion is not a JWT');
 */
export function decodeJsonPart(part: string): Record<string, unknown> | null {
  // A length of 4n + 1 characters cannot be base64 (jose's decoder refuses it too; Buffer would drop the last one).
  if (part.length % 4 === 1 || !/^[A-Za-z0-9_-]+$/.test(part)) return null;
  const bytes = Buffer.from(part, 'base64url');
  if (!isUtf8(bytes)) return null;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
