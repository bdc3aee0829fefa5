/**
 * Audit-event fields are safe to write to a line-oriented log. Several fields carry what a request sent, decoded
 * (the account id of the path, a client id, a username): `"123456\r\nX-Injected: 1"` written raw by a text logger
 * forges a second log line. Control characters (C0, DEL, C1) and the Unicode line and paragraph separators are
 * therefore escaped as `\uXXXX` text before an event leaves the service: visible to whoever reads the log, and
 * unable to break a line.
 */

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * `value` with every control character written as `\uXXXX`.
 *
 * @example
 * escapeControlCharacters('123456\r\nX-Injected: 1') // '123456\\u000d\\u000aX-Injected: 1'
 */
export function escapeControlCharacters(value: string): string {
  return value.replace(CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A copy of an event whose string fields (and strings inside array fields) are escaped; other fields unchanged.
 *
 * @example
 * onEvent(escapeEventFields({ ...event, at: Date.now() }));
 */
export function escapeEventFields<T extends object>(event: T): T {
  const escaped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(event)) {
    if (typeof value === 'string') escaped[name] = escapeControlCharacters(value);
    else if (Array.isArray(value)) escaped[name] = value.map((item) => (typeof item === 'string' ? escapeControlCharacters(item) : item));
    else escaped[name] = value;
  }
  return escaped as T;
}
