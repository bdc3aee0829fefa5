/**
 * Cross-site request refusal for the state-changing POSTs of the browser flow (login, logout), on top of the
 * login form's CSRF token (RFC 6749 §10.12).
 *
 * Browsers label every request with `Sec-Fetch-Site` and POSTs with `Origin`; neither can be set by a page.
 * Our pages are served with `Referrer-Policy: no-referrer`, which makes browsers send `Origin: null` even on
 * same-origin form posts, so `Sec-Fetch-Site` is the primary signal and `Origin` the fallback for older browsers.
 * Requests with neither header come from non-browser clients, which carry no victim's cookies. `Origin: null`
 * without `Sec-Fetch-Site` passes here, since our own form sends it; the login and passkey posts then need the
 * cookie of the browser their page was served to (`../state/login-browser.ts`), which a forged one cannot carry.
 */
import type { SentinelContext } from '../../http/context.js';
import { headerValue, type SentinelRequest } from '../../http/messages.js';

/**
 * True when a browser says the request comes from another site, unless its `Origin` is in `allowedOrigins`
 * (e.g. the origins of a client's redirect URIs, for logout started by the app).
 *
 * @example
 * if (isCrossSiteRequest(context, request, [])) throw new OAuthError('invalid_request', 'cross-site request', { status: 403 });
 */
export function isCrossSiteRequest(context: SentinelContext, request: SentinelRequest, allowedOrigins: readonly string[]): boolean {
  const site = headerValue(request, 'sec-fetch-site')?.toLowerCase();
  const origin = headerValue(request, 'origin');
  if (origin !== undefined && origin !== 'null' && (origin === new URL(context.config.issuer).origin || allowedOrigins.includes(origin))) {
    return false;
  }
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  return origin !== undefined && origin !== 'null';
}

/**
 * True when a browser's post says nothing of where it came from: `Origin: null` and no `Sec-Fetch-Site`. A browser
 * without fetch metadata sends that from our own no-referrer pages, but also from any page's sandboxed frame, so
 * such a post proves nothing about its origin; an endpoint without a token of its own asks the user instead.
 *
 * @example
 * if (isUnlabelledPost(request)) return askTheUser();
 */
export function isUnlabelledPost(request: SentinelRequest): boolean {
  return headerValue(request, 'sec-fetch-site') === undefined && headerValue(request, 'origin') === 'null';
}
