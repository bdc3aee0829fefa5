/**
 * Text an app registers and the login page shows to the user (its name): refused when it holds characters that
 * change how the text around them looks rather than being shown.
 *
 * Why refuse and not strip: an app that registers `Acme\u202Eevil` means the reordering; a stored name that differs
 * from the registered one would surprise the registrant, and an error names the problem. Why these: the bidirectional
 * controls (embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069, the marks U+200E, U+200F and U+061C)
 * reorder what follows, so `Acme\u202Egnp.exe` reads as another name (Unicode TR #36 §2.1); control characters (C0,
 * DEL, C1) and the line and paragraph separators break lines; an unpaired surrogate is not text at all. The joiners
 * (U+200C, U+200D) stay: Persian names and emoji need them. Text with nothing but white space is refused too: the
 * login and device pages would ask the user to continue to, or allow, an app they cannot name. So is text with nothing
 * but white space and what fonts draw as nothing: Unicode's default-ignorable code points (zero-width space U+200B,
 * word joiner U+2060, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, variation selectors, tags…) and the blank
 * Braille pattern U+2800. `trim()` keeps them, so `\u3164` alone, a well-known invisible name, was one the user
 * could not see.
 */

// U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069; \p{Cc} (C0, DEL, C1); U+2028/U+2029.
const NOT_DISPLAYABLE = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\p{Cc}\u2028\u2029]/u;
// What is drawn as nothing: white space, the default-ignorable code points (UAX #44, Unicode's own list), and the
// blank Braille pattern U+2800, a visible character with no dots that serves as an invisible name as U+3164 does.
const INVISIBLE = /[\p{White_Space}\p{Default_Ignorable_Code_Point}\u2800]/gu;
// A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag: code units).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `text` may not be shown as an app's name, or `null` when it may.
 *
 * @example
 * displayTextProblem('Acme Messenger') // null
 * displayTextProblem('Acme\u202Egnp.exe') // 'must not contain bidirectional or other control characters'
 * displayTextProblem('  ') // 'must not be empty or only white space or invisible characters'
 */
export function displayTextProblem(text: string): string | null {
  if (text.replace(INVISIBLE, '') === '') return 'must not be empty or only white space or invisible characters';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode text';
  return NOT_DISPLAYABLE.test(text) ? 'must not contain bidirectional or other control characters' : null;
}
