/**
 * The one rule for `SentinelRequest.mountPath`, the prefix the host stripped before handing a request over.
 *
 * The core writes it, unescaped, at the head of every URL and cookie path it hands out: `Location` headers, the
 * login form's action, the session cookie's `Path`, the interaction record (which later pages read back). A host that
 * mounts under a route parameter (`app.use('/:tenant', …)`) lets the client choose that segment, and Express hands
 * it over raw: `/\evil.com` makes the login redirect `/\evil.com/sentinel/…`, which a browser reads as the
 * scheme-relative `//evil.com/…` (an open redirect); `/a;b` breaks the cookie's `Path` (the serializer throws, a
 * 500 on the device code entry page); `..` segments resolve the URLs elsewhere. So a mount path is taken only when it
 * is `''` or a run of `/segment`, each segment non-empty, not `.` or `..` (nor their `%2E` spellings), and made of
 * RFC 3986 §3.3 `pchar` characters (unreserved, percent-encoded octets, sub-delims, `:` and `@`) less `'` and `;`:
 * the quote would end an HTML attribute and the semicolon a cookie attribute. Anything else (a backslash, an empty
 * segment, a control character, a space, a double quote, a non-ASCII letter the host left undecoded) is refused.
 */
import { OAuthError } from '../errors.js';

/** One segment: pchar (RFC 3986 §3.3) less `'` and `;`, at least one character. */
const SEGMENT = '(?:[A-Za-z0-9\\-._~!$&()*+,=:@]|%[0-9A-Fa-f]{2})+';
const MOUNT_PATH = new RegExp(`^(?:/${SEGMENT})*$`);
// `%2e` too: the URL Standard reads `.%2E`, `%2e.` and `%2e%2e` as `..` when it resolves a Location.
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?=\/|$)/i;

/**
 * Whether `value` is a mount path the core can write into URLs and cookie paths as is (see the module comment).
 *
 * @example
 * isMountPath('/idp/tenant-a'); // true
 * isMountPath('/\\evil.com'); // false
 */
export function isMountPath(value: string): boolean {
  return MOUNT_PATH.test(value) && !DOT_SEGMENT.test(value);
}

/**
 * The refusal of a request whose mount path breaks the rule, or `undefined` when it keeps it (or has none).
 *
 * @example
 * const refusal = mountPathRefusal(request);
 * if (refusal !== undefined) throw refusal;
 */
export function mountPathRefusal(request: { mountPath?: string | undefined }): OAuthError | undefined {
  const { mountPath } = request;
  // Most hosts mount at the root: no pattern to run on every request for them.
  if (mountPath === undefined || mountPath === '') return undefined;
  if (typeof mountPath === 'string' && isMountPath(mountPath)) return undefined;
  return new OAuthError('invalid_request', 'the path the service is mounted under is malformed');
}
