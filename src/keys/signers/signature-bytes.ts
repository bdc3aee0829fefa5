/**
 * What an external signer's `sign` may answer. `instanceof Uint8Array` is true only for this realm's class: a
 * signature made in a `vm` context, or arriving from a worker in a transferred buffer, is a Uint8Array of another
 * realm and failed it, as did an `ArrayBuffer` or a `DataView` (what WebCrypto's `subtle.sign` and many KMS clients
 * return). Any ArrayBuffer view or ArrayBuffer is bytes, whatever its realm; strings and other values are not.
 */
import { types } from 'node:util';

/**
 * A copy of `value`'s bytes as this realm's Uint8Array (copied, so a signer reusing its buffer cannot change a
 * signature once checked); `null` for a value that is not an ArrayBuffer view or an ArrayBuffer.
 * @example signatureBytesOf(await crypto.subtle.sign(alg, key, data)) // ArrayBuffer → Uint8Array
 */
export function signatureBytesOf(value: unknown): Uint8Array | null {
  if (ArrayBuffer.isView(value)) return new Uint8Array(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  if (types.isAnyArrayBuffer(value)) return new Uint8Array(new Uint8Array(value));
  return null;
}
