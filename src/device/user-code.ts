/**
 * User codes (RFC 8628 §6.1): what a person reads off a device's screen and types on a phone or laptop. Eight
 * characters from twenty consonants (no vowels, so no words; no look-alike digits) give 20^8 ≈ 2^34.6 values, enough
 * with the guessing throttle for codes that live minutes (RFC 8628 §5.1). Shown as `XXXX-XXXX`; typed with or without
 * the dash, spaces, in any case.
 */
import { randomInt } from 'node:crypto';

/** The characters of a user code (RFC 8628 §6.1, its "base-20" example set). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** A new user code, in its canonical form (eight characters, no dash). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i += 1) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** `BCDFGHJK` → `BCDF-GHJK`, as the device shows it and the page repeats it. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * The canonical form of what a person typed, or `null` when it cannot be a user code: dashes and white space are
 * dropped and letters upper-cased (RFC 8628 §6.1 asks the page to be forgiving of both).
 */
export function normalizeUserCode(typed: string | undefined): string | null {
  if (typed === undefined || typed.length > 64) return null;
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const character of code) if (!USER_CODE_ALPHABET.includes(character)) return null;
  return code;
}
