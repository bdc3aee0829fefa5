/**
 * User codes (RFC 8628 §6.1): what a person reads off a device's screen and types on a phone or laptop. Eight
 * characters from twenty consonants (no vowels, so no words; no look-alike digits) give 20^8 ≈ 2^34.6 values, enough
 * with the guessing throttle for codes that live minutes (RFC 8628 §5.1). Shown as `XXXX-XXXX`; typed with or without
 * the dash (any dash), spaces, in any case, in full width.
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

/** Any dash (Unicode `Pd`: en dash, non-breaking hyphen, …) and the minus sign, which keyboards and copies put in. */
const DASHES_AND_SPACES = /[\s\p{Pd}\u2212]/gu;

/**
 * The canonical form of what a person typed, or `null` when it cannot be a user code: dashes and white space are
 * dropped and letters upper-cased (RFC 8628 §6.1 asks the page to be forgiving of both). NFKC first: an input
 * method in full-width mode (the Japanese page's users) types `ＷＤＪＢ－ＭＪＨＴ`, the same code in other code points.
 */
export function normalizeUserCode(typed: string | undefined): string | null {
  if (typed === undefined || typed.length > 64) return null;
  const code = typed.normalize('NFKC').replace(DASHES_AND_SPACES, '').toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const character of code) if (!USER_CODE_ALPHABET.includes(character)) return null;
  return code;
}
