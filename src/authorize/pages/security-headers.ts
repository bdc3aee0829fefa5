/**
 * The headers every HTML response of the service carries: a strict Content-Security-Policy, clickjacking
 * protection (RFC 9700 §4.16), no referrer (the login URL carries the interaction id), no caching, no sniffing.
 * No CORS headers are ever set here: the authorization endpoint must not be readable cross-origin (RFC 9700 §2.6).
 */
import { randomBytes } from 'node:crypto';
import type { SentinelResponse } from '../../http/messages.js';

/** What a page's Content-Security-Policy allows beyond the defaults. */
export interface PagePolicy {
  /** The per-response nonce of the page's `<style>` element. */
  styleNonce: string;
  /**
   * Extra `form-action` sources (the app's redirect URI origin, since the 303 after the POST is governed by it;
   * see {@link formActionSources}).
   */
  formAction?: readonly string[] | undefined;
  /** `img-src` sources (the logo's origin); none when empty. */
  imgSrc?: readonly string[] | undefined;
  /**
   * The nonce of the page's one `<script>` (the passkey button); without it scripts stay forbidden. A page with a
   * script may also `fetch` its own origin (`connect-src 'self'`), for the passkey challenge.
   */
  scriptNonce?: string | undefined;
}

/** A fresh nonce for a page's `<style>` element (128 random bits). */
export function createStyleNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * The Content-Security-Policy of a page: nothing by default, styles only by nonce, no scripts unless the page has
 * a `scriptNonce` (the passkey button).
 *
 * @example
 * contentSecurityPolicy({ styleNonce: nonce, formAction: ['https://app.example.com'] })
 */
export function contentSecurityPolicy(policy: PagePolicy): string {
  const imgSrc = policy.imgSrc !== undefined && policy.imgSrc.length > 0 ? policy.imgSrc.join(' ') : "'none'";
  return [
    "default-src 'none'",
    `style-src 'nonce-${policy.styleNonce}'`,
    `img-src ${imgSrc}`,
    ...(policy.scriptNonce === undefined ? [] : [`script-src 'nonce-${policy.scriptNonce}'`, "connect-src 'self'"]),
    `form-action ${["'self'", ...(policy.formAction ?? [])].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * An HTML response with the security headers.
 *
 * @example
 * return htmlResponse(200, page, { styleNonce: nonce });
 */
export function htmlResponse(
  status: number,
  html: string,
  policy: PagePolicy,
  headers?: Record<string, string | string[]>,
): SentinelResponse {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy(policy),
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'x-content-type-options': 'nosniff',
      ...headers,
    },
    body: html,
  };
}

/**
 * A host a CSP source can name as written (CSP3 §2.3.1 `host-part`: letters, digits and hyphens between dots), or an
 * IP literal in brackets (see {@link formActionSources}). RFC 3986 lets a host hold `*`, `;`, `,` and quotes, and the
 * URL parser keeps them, but an app chooses its redirect URIs: in the header, `https://*` would be CSP's wildcard, a
 * `;` would start a directive of the app's choosing and a `,` a second policy.
 */
const CSP_HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)$/;

/**
 * The source without a scheme for a URL's `host[:port]` (it matches that host in the page's own scheme, CSP3
 * §6.7.2.8), or `null` when CSP cannot name its host as written ({@link CSP_HOST}; an IP literal included).
 *
 * @example
 * hostSource(new URL('https://cdn.example.com:8443/logo.svg')) // 'cdn.example.com:8443'
 */
export function hostSource(url: URL): string | null {
  return !url.hostname.startsWith('[') && CSP_HOST.test(url.hostname) ? url.host : null;
}

/**
 * The CSP source for a URL's origin: `https://host:port`, or `scheme:` for private-use schemes (RFC 8252 §7.1),
 * whose origin is opaque. `null` for a value that is not an absolute URL, or whose host no source can name as written
 * ({@link CSP_HOST}): such an origin is allowed nothing, rather than something else.
 *
 * @example
 * originSource('https://app.example.com/cb?x=1') // 'https://app.example.com'
 */
export function originSource(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return CSP_HOST.test(url.hostname) ? url.origin : null;
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : null;
}

/**
 * The `form-action` sources that let a page's POST end in a 303 to `uri` (Chromium applies form-action to the
 * redirect): its {@link originSource}, or its scheme (`http:`) when the host is an IPv6 literal such as the
 * native-app loopback `http://[::1]:PORT` (RFC 8252 §7.3). CSP source expressions have no IPv6 literal host
 * (CSP3 §2.3.1 `host-source`), so Chromium drops `http://[::1]:PORT` as invalid and would block the redirect; the
 * scheme is the narrowest source that can name it. Every other origin stays exact. None for an unusable URI.
 *
 * @example
 * formActionSources('http://[::1]:8123/cb') // ['http:']
 */
export function formActionSources(uri: string | undefined): string[] {
  const source = uri === undefined ? null : originSource(uri);
  if (source === null) return [];
  // An http(s) origin's host is in brackets exactly when it is an IPv6 literal (WHATWG URL host serialisation).
  const ipv6Scheme = /^(https?:)\/\/\[/.exec(source)?.[1];
  return [ipv6Scheme ?? source];
}
