/**
 * Text the CLI prints that it did not write itself (a remote server's `error_description`, a response body), made
 * safe for a terminal. Such text may carry control characters a terminal acts on: ESC and CSI (U+009B) sequences
 * that move the cursor, rewrite or hide earlier lines, set the window title or, in some terminals, answer back into
 * the input; a carriage return or newline that makes a forged line look like the CLI's own; bidirectional overrides
 * that reorder what is shown. Each is printed as its `\uXXXX` escape instead, visible and harmless. Such text may
 * also be megabytes long (an error description is the server's to size): what is printed of it can be capped.
 */

// \p{Cc} (C0, DEL, C1); the bidirectional controls U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069; U+2028/U+2029.
const UNSAFE = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;
// The same without C0: JSON.stringify already escapes C0 inside strings, and the newlines it adds are its layout.
// One character of UNSAFE, for the capped walk that escapes character by character.
const UNSAFE_CHARACTER = new RegExp(`^${UNSAFE.source}$`, 'u');
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

function escaped(character: string): string {
  return `\\u${(character.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control and bidirectional character written as its `\uXXXX` escape, on one line.
 * @example terminalText('bad\u001b[2J') // 'bad\\u001b[2J'
 */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** The most characters printed of one piece of a server's text (its `error`, its `error_description`). */
export const MAX_PRINTED_SERVER_TEXT = 1000;

/**
 * {@link terminalText}, at most `max` characters of it (escapes counted as printed, never split), followed when
 * anything was left out by a marker saying how many of the server's characters were cut. Only the printed part is
 * walked, so a megabyte description costs no more than a short one.
 * @example terminalTextCapped('x'.repeat(1200), 1000) // 'xxx…x… [200 more characters cut]'
 */
export function terminalTextCapped(text: string, max: number = MAX_PRINTED_SERVER_TEXT): string {
  let printed = '';
  let consumed = 0;
  for (const character of text) {
    const piece = UNSAFE_CHARACTER.test(character) ? escaped(character) : character;
    if (printed.length + piece.length > max) break;
    printed += piece;
    consumed += character.length;
  }
  return consumed === text.length ? printed : `${printed}… [${text.length - consumed} more characters cut]`;
}

/**
 * `value` as indented JSON, with the characters JSON leaves raw (DEL, C1, bidirectional controls) escaped: still
 * JSON, and the same value when parsed, so a script piping it on reads what the server sent.
 * @example io.stdout(`${terminalJSON(body)}\n`);
 */
export function terminalJSON(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNSAFE_IN_JSON, escaped);
}
