/**
 * Error pages of the browser-facing endpoints (authorize before the redirect URI is trusted, login, logout).
 *
 * RFC 6749 §4.1.2.1: when the client or its redirect URI cannot be trusted, the user is informed and never
 * redirected. Browsers get an HTML page; a caller whose `Accept` asks for `application/json` gets the RFC 6749
 * §5.2 shaped `{ error, error_description }` instead.
 */
import type { SentinelContext } from '../context.js';
import type { OAuthError } from '../errors.js';
import { headerValue, noStoreJSON, type SentinelRequest, type SentinelResponse } from '../http.js';
import { escapeHTML } from './html.js';
import { logoSources } from './logo-policy.js';
import { renderPage } from './page-layout.js';
import { createStyleNonce, htmlResponse } from './security-headers.js';

const TITLES: Readonly<Record<number, string>> = {
  400: 'The request could not be processed',
  401: 'Unknown account or application',
  403: 'The request was refused',
  405: 'Method not allowed',
  413: 'The request is too large',
  414: 'The request is too long',
  429: 'Too many attempts',
};

/**
 * True when the caller prefers JSON: `Accept` names `application/json` before (or without) `text/html`.
 *
 * @example
 * wantsJSON(request) // true for "Accept: application/json"
 */
export function wantsJSON(request: SentinelRequest): boolean {
  const accept = headerValue(request, 'accept')?.toLowerCase() ?? '';
  const json = accept.indexOf('application/json');
  if (json === -1) return false;
  const html = accept.indexOf('text/html');
  return html === -1 || json < html;
}

/**
 * The error page (or JSON) for `error`; the route `renderError` of the browser-facing endpoints.
 *
 * @example
 * renderErrorPage(context, request, new OAuthError('invalid_client', 'unknown client', { status: 401 }))
 */
export function renderErrorPage(context: SentinelContext, request: SentinelRequest, error: OAuthError): SentinelResponse {
  if (wantsJSON(request)) return noStoreJSON(error.status, error.toJSON(), { ...error.headers });
  const title = TITLES[error.status] ?? (error.status >= 500 ? 'Something went wrong' : 'The request could not be processed');
  const styleNonce = createStyleNonce();
  const content = `<h1>${escapeHTML(title)}</h1>
<p class="lead">${escapeHTML(error.description)}</p>
<p class="meta">Error code: <code>${escapeHTML(error.code)}</code>. Go back to the application and try again.</p>`;
  const html = renderPage({ title, content, styleNonce, branding: context.config.branding });
  return htmlResponse(error.status, html, { styleNonce, imgSrc: logoSources(context.config.branding) }, { ...error.headers });
}
