/**
 * Reading a registered URI as RFC 3986 §3 writes it, from the raw string, before anything repairs it.
 *
 * Why not `new URL()` alone: the WHATWG parser is forgiving for the special schemes (http, https). It reads a
 * backslash as a slash, invents the missing `//` of `https:cb` and `https:/cb`, skips the empty host of
 * `https:///cb` to take the first path segment as the host, and decodes `%2e` or reads `0x7f.1` in a host. A check
 * made on its result (empty host? userinfo?) is then a check of a different URI from the one stored and later sent
 * to the browser verbatim, and each browser repairs it in its own way. So the raw string must already be a
 * well-formed absolute URI with the parts the check is about written out, and `new URL()` must read the same host.
 */

/** The parts of an absolute URI a registration check needs, as written. */
export interface URIParts {
  /** Lower-cased (RFC 3986 §3.1: schemes compare case-insensitively). */
  scheme: string;
  /** The authority after `//`, or `undefined` when there is no `//`. */
  authority: { userinfo: string | undefined; host: string; port: string | undefined } | undefined;
  hasFragment: boolean;
}

// RFC 3986 §2: unreserved, reserved and "%" are the only characters of a URI. Everything else (backslash, quotes,
// "<", ">", "{", "}", "|", "^", "`", non-ASCII) must be percent-encoded, and readers disagree on what it means raw.
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
// RFC 3986 §3.2.2: an IP literal in brackets (IPv6, or IPvFuture, which nobody needs here), or a reg-name.
const IP_LITERAL = /^\[[0-9A-Fa-f:.]+\]$/;
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+,;=%]*$/;

/**
 * The parts of `uri` when it is an absolute URI in the syntax of RFC 3986 §4.3, or the reason it is not.
 *
 * @example
 * parseAbsoluteURI('https://app.example.com/cb') // { scheme: 'https', authority: { host: 'app.example.com', … }, … }
 * parseAbsoluteURI('https:\\\\evil.example\\cb') // 'must not contain a backslash'
 */
export function parseAbsoluteURI(uri: string): URIParts | string {
  if (CONTROL_OR_SPACE.test(uri)) return 'must not contain spaces or control characters';
  if (uri.includes('\\')) return 'must not contain a backslash';
  if (!URI_CHARACTERS.test(uri)) return 'must be an RFC 3986 URI (percent-encode non-ASCII and other characters outside it)';
  if (BAD_PERCENT.test(uri)) return 'must not contain a "%" that is not followed by two hex digits';
  const scheme = SCHEME.exec(uri);
  if (scheme === null) return 'must be an absolute URI';
  const afterScheme = uri.slice(scheme[0].length);
  const fragmentAt = afterScheme.indexOf('#');
  const beforeFragment = fragmentAt === -1 ? afterScheme : afterScheme.slice(0, fragmentAt);
  let authority: URIParts['authority'];
  let rest = beforeFragment;
  if (beforeFragment.startsWith('//')) {
    const end = beforeFragment.slice(2).search(/[/?]/);
    const written = end === -1 ? beforeFragment.slice(2) : beforeFragment.slice(2, 2 + end);
    rest = end === -1 ? '' : beforeFragment.slice(2 + end);
    const at = written.lastIndexOf('@');
    const userinfo = at === -1 ? undefined : written.slice(0, at);
    const hostPort = at === -1 ? written : written.slice(at + 1);
    const portAt = hostPort.startsWith('[') ? hostPort.indexOf(']:') + 1 || -1 : hostPort.lastIndexOf(':');
    const host = portAt === -1 ? hostPort : hostPort.slice(0, portAt);
    const port = portAt === -1 ? undefined : hostPort.slice(portAt + 1);
    if (host.startsWith('[') ? !IP_LITERAL.test(host) : !REG_NAME.test(host)) return 'must have a well-formed host';
    if (port !== undefined && !/^[0-9]{0,5}$/.test(port)) return 'must have a numeric port';
    authority = { userinfo, host, port };
  }
  // "[" and "]" delimit an IP literal and nothing else (RFC 3986 §3.2.2); "@" in a path is allowed.
  if (/[[\]]/.test(rest) || (fragmentAt !== -1 && /[[\]#]/.test(afterScheme.slice(fragmentAt + 1)))) {
    return 'must not contain "[", "]" or a second "#" outside the host';
  }
  return { scheme: (scheme[1] ?? '').toLowerCase(), authority, hasFragment: fragmentAt !== -1 };
}

/**
 * Why an http or https URI (`parts` from {@link parseAbsoluteURI}) is not one a browser reads as written, or `null`:
 * `//` and a non-empty host written out (RFC 9110 §4.2.2 forbids an https URI with an empty host), no userinfo, and
 * the very host the WHATWG URL parser sees (no `%`-encoded or numeric-shorthand host it would rewrite).
 *
 * @example
 * webURIProblem('https:///cb', parts) // 'must have a host'
 */
export function webURIProblem(uri: string, parts: URIParts): string | null {
  const { authority } = parts;
  if (authority === undefined) return `must have "//" and a host after ${parts.scheme}:`;
  if (authority.userinfo !== undefined) return 'must not contain userinfo';
  if (authority.host === '') return 'must have a host';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hostname !== authority.host.toLowerCase()) return 'must have a host that browsers read as written';
  return null;
}
