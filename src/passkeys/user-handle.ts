/**
 * The WebAuthn user handle (WebAuthn §14.6.1: at most 64 bytes, no personal data): the user id's UTF-8 bytes.
 * The service's user ids are the host's opaque ids, and reading the id back from an assertion is what lets a
 * passkey sign in without a username; the id then only names whose passkeys to look in, never who signed in.
 */

/** Most bytes a user handle may have. */
const MAX_HANDLE = 64;

/**
 * The user handle of a user id, or `null` when the id is too long to be one (such users are not offered passkeys).
 *
 * @example
 * webAuthnUserID('u-alice') // Uint8Array of 7 bytes
 */
export function webAuthnUserID(userId: string): Uint8Array<ArrayBuffer> | null {
  const bytes = new TextEncoder().encode(userId);
  return bytes.length === 0 || bytes.length > MAX_HANDLE ? null : new Uint8Array(bytes);
}

/**
 * The user id in a base64url user handle, or `null` when it is not one.
 *
 * @example
 * userIdFromHandle('dS1hbGljZQ') // 'u-alice'
 */
export function userIdFromHandle(handle: unknown): string | null {
  if (typeof handle !== 'string' || !/^[A-Za-z0-9_-]{1,88}$/.test(handle)) return null;
  const bytes = Buffer.from(handle, 'base64url');
  if (bytes.length === 0 || bytes.length > MAX_HANDLE) return null;
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(bytes);
  } catch {
    return null;
  }
}
