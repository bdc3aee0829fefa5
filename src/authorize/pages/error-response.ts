/**
 * Error pages of the browser-facing endpoints (authorize before the redirect URI is trusted, login, logout).
 *
 * RFC 6749 §4.1.2.1: when the client or its redirect URI cannot be trusted, the user is informed and never
 * redirected. Browsers get an HTML page; a caller whose `Accept` asks for `application/json` gets the RFC 6749
 * §5.2 shaped `{ error, error_description }` instead.
 */
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { headerValue, noStoreJSON, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import type { MessageKey } from '../../i18n/messages.js';
import { fill } from '../../i18n/messages.js';
import { pageLocale, translate } from '../../i18n/page-locale.js';
import { escapeHTML, isolateHTML } from './escape-html.js';
import { logoSources } from './logo-policy.js';
import { renderPageHtml } from './layout.js';
import { createStyleNonce, htmlResponse } from './security-headers.js';

const TITLES: Readonly<Record<number, MessageKey>> = {
  400: 'errorBadRequest',
  401: 'errorUnknown',
  403: 'errorRefused',
  405: 'errorMethod',
  413: 'errorTooLarge',
  414: 'errorTooLong',
  429: 'errorTooManyAttempts',
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
 * The application an error page is about, when the page stands in for an error redirect the service does not make
 * by itself (authorization-error.ts): its host, and the redirect as a plain link the user may choose to follow.
 */
export interface ErrorPageApp {
  /** The host that names the application (its client id's), as the login page names it. */
  host: string;
  /** The error response the application would have been sent, and the host it goes to. */
  returnTo: { href: string; host: string };
}

/**
 * The error page (or JSON) for `error`; the route `renderError` of the browser-facing endpoints.
 *
 * @example
 * errorPageResponse(context, request, new OAuthError('invalid_client', 'unknown client', { status: 401 }))
 */
export function errorPageResponse(
  context: SentinelContext,
  request: SentinelRequest | undefined,
  error: OAuthError,
  app?: ErrorPageApp,
): SentinelResponse {
  return renderErrorPage(context, request, shownAsPage(error), app);
}

/**
 * The error a page shows: the error itself, unless its status is no error's. An AuthorizationError is a 302 that only
 * the authorization endpoint's renderer turns into a redirect to the app; one that reaches a page of a flow with no
 * app to go back to (a device sign-in or an account page visit whose interaction is too long to keep) was answered
 * as a 302 without a `Location`, the page in its body. It is shown with its code's own status instead.
 */
function shownAsPage(error: OAuthError): OAuthError {
  return error.status >= 400 ? error : new OAuthError(error.code, error.description);
}

function renderErrorPage(
  context: SentinelContext,
  request: SentinelRequest | undefined,
  error: OAuthError,
  app: ErrorPageApp | undefined,
): SentinelResponse {
  // Without a request (`completeLogin()`) the page is HTML: that is what the host forwards to the browser.
  if (request !== undefined && wantsJSON(request)) return noStoreJSON(error.status, error.toJSON(), { ...error.headers });
  const { messages, tag, dir } = pageLocale(context, request);
  const titleKey = TITLES[error.status] ?? (error.status >= 500 ? 'errorServer' : 'errorBadRequest');
  const title = messages[titleKey];
  // A description the catalogues carry is shown translated; any other is developer English, marked as such.
  const translated = translate(messages, error.description);
  const lead =
    translated !== null || tag === 'en'
      ? `<p class="lead">${escapeHTML(translated ?? error.description)}</p>`
      : `<p class="lead">${escapeHTML(messages.errorDetails)} <span lang="en" dir="ltr">${escapeHTML(error.description)}</span></p>`;
  const styleNonce = createStyleNonce();
  const about =
    app === undefined
      ? ''
      : `<p>${fill(escapeHTML(messages.errorAppRequest), { host: `<strong>${isolateHTML(app.host)}</strong>` })}</p>\n`;
  // A plain link, never followed by itself: the user has read which host it leaves for (RFC 9700 §4.11.2).
  const back =
    app === undefined
      ? ''
      : `\n<p><a href="${escapeHTML(app.returnTo.href)}" rel="noreferrer">${fill(escapeHTML(messages.errorReturnToApp), { host: isolateHTML(app.returnTo.host) })}</a></p>`;
  const content = `<h1>${escapeHTML(title)}</h1>
${about}${lead}
<p class="meta">${fill(escapeHTML(messages.errorCode), { code: `<code>${escapeHTML(error.code)}</code>` })}</p>${back}`;
  const html = renderPageHtml({ title, content, styleNonce, branding: context.config.branding, lang: tag, dir });
  return htmlResponse(error.status, html, { styleNonce, imgSrc: logoSources(context.config.branding) }, { ...error.headers });
}
