/**
 * The one exception to exact redirect URI matching: loopback IP redirect URIs of native apps (RFC 8252 §7.3, RFC 9700
 * §2.1 and §4.1.3). A native app listens on an ephemeral port the operating system picks at the time of the request,
 * so the authorization server MUST allow any port there. Everything else still matches as a string: the scheme
 * `http`, the host as an IP literal (`127.0.0.1` or `[::1]`, never `localhost`, which DNS or a hosts file may send
 * elsewhere, RFC 8252 §8.3), the path and the query, byte for byte.
 */

/** `http://` + loopback IP literal + optional port, then the rest (path, query) up to the end. */
const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([^/?#]*))?([/?][\s\S]*)?$/;
/** A port as the request writes it: decimal, no leading zero, at most 65535 (checked below). */
const PORT = /^[1-9][0-9]{0,4}$/;

interface LoopbackParts {
  host: string;
  rest: string;
}

function loopbackParts(uri: string): LoopbackParts | null {
  const match = LOOPBACK_REDIRECT.exec(uri);
  if (match === null) return null;
  const [, host, port, rest] = match;
  if (port !== undefined && !(PORT.test(port) && Number(port) <= 65_535)) return null;
  return { host: host as string, rest: rest ?? '' };
}

/**
 * Whether `requested` is the registered loopback IP redirect URI `registered` on another port (or the same one, or
 * none): both `http://127.0.0.1` or both `http://[::1]`, the same path and query as written.
 *
 * @example
 * sameLoopbackRedirect('http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb') // true
 * sameLoopbackRedirect('http://localhost:8080/cb', 'http://localhost:51234/cb') // false: exact matching
 */
export function sameLoopbackRedirect(registered: string, requested: string): boolean {
  const expected = loopbackParts(registered);
  if (expected === null) return false;
  const actual = loopbackParts(requested);
  return actual !== null && actual.host === expected.host && actual.rest === expected.rest;
}
