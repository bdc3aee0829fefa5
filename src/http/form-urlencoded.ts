/**
 * Parsing `application/x-www-form-urlencoded` text into a {@link ParamMap}, with the results of the WHATWG URL
 * Standard's parser (§5.1, what `URLSearchParams` does) and without its cost on the token endpoint's hot path.
 *
 * Why not `new URLSearchParams(text)`: node's parser walks the text a character at a time in JavaScript, and every
 * request of every grant passes through here. A brand JWT exchange's form is about 850 characters, nearly all of
 * them the JWT, and `URLSearchParams` spent about 4 µs of its CPU on it (bench/RESULTS.md). Most parameters need no
 * decoding at all (JWTs, codes, client ids and secrets are URL-safe), so the text is cut at `&` and `=` with native
 * searches, and only a part holding `%` or `+` is decoded. A part whose escapes `decodeURIComponent` refuses (a
 * lone `%`, bytes that are not UTF-8) and text that is not well-formed UTF-16 go to `URLSearchParams` itself, which
 * decodes leniently (U+FFFD), so every input parses exactly as before.
 */
import type { ParamMap } from './params.js';

/** The value of one encoded name or value: `+` is a space, `%XX` a byte of UTF-8 (WHATWG URL §5.1). */
function decodePart(part: string): string {
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.includes('+') ? part.replaceAll('+', ' ') : part);
  } catch {
    // Broken escapes or bytes that are not UTF-8: the standard's lenient decoding, as URLSearchParams does it.
    return new URLSearchParams(`a=${part}`).get('a') ?? '';
  }
}

/**
 * The parameters of form-encoded `text`, in order, repeated names collected. Never throws.
 * @example parseForm('grant_type=client_credentials&scope=a+b').get('scope') // ['a b']
 */
export function parseForm(text: string): ParamMap {
  const map: ParamMap = new Map();
  // Lone surrogates become U+FFFD in URLSearchParams (its argument is a USVString); leave that case to it.
  if (!(text as unknown as WellFormedCheck).isWellFormed()) {
    for (const [name, value] of new URLSearchParams(text)) add(map, name, value);
    return map;
  }
  // URLSearchParams drops one leading `?`; so does this.
  let start = text.startsWith('?') ? 1 : 0;
  // The next `=` at or after `start`, searched again only once passed: one walk of the text however it is cut.
  let equals = text.indexOf('=', start);
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    if (end > start) {
      if (equals !== -1 && equals < start) equals = text.indexOf('=', start);
      const split = equals === -1 || equals > end ? end : equals;
      const name = decodePart(text.slice(start, split));
      const value = split === end ? '' : decodePart(text.slice(split + 1, end));
      add(map, name, value);
    }
    start = end + 1;
  }
  return map;
}

/** `String.prototype.isWellFormed` (ES2024, in every Node this package supports; the compiler's library is ES2022). */
type WellFormedCheck = { isWellFormed(): boolean };

function add(map: ParamMap, name: string, value: string): void {
  const values = map.get(name);
  if (values) values.push(value);
  else map.set(name, [value]);
}
