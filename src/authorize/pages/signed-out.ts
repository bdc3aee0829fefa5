/**
 * The "signed out" page: what the browser sees after logout or RP-initiated logout when there is no return
 * address to send it to.
 */
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../../http/messages.js';
import { pageLocale } from '../../i18n/page-locale.js';
import { fill } from '../../i18n/messages.js';
import { escapeHTML, isolateHTML } from './escape-html.js';
import { renderPageHtml } from './layout.js';
import { logoSources } from './logo-policy.js';
import { createStyleNonce, htmlResponse } from './security-headers.js';

/**
 * The "signed out" page, also shown by RP-initiated logout when no return address applies; in the language of
 * `uiLocales` (else the request's `ui_locales` query parameter), then `Accept-Language`, then the default.
 * `returnTo`: an address the service does not send the browser to by itself, offered as a plain link naming its host
 * (RFC 9700 §4.11.2), as the authorization endpoint's error page offers one.
 */
export function signedOutResponse(
  context: SentinelContext,
  headers: Record<string, string>,
  request?: SentinelRequest,
  uiLocales?: string,
  returnTo?: { href: string; host: string },
): SentinelResponse {
  const styleNonce = createStyleNonce();
  const { messages, tag, dir } = pageLocale(context, request, uiLocales);
  const back =
    returnTo === undefined
      ? ''
      : `\n<p><a href="${escapeHTML(returnTo.href)}" rel="noreferrer">${fill(escapeHTML(messages.errorReturnToApp), { host: isolateHTML(returnTo.host) })}</a></p>`;
  const content = `<h1>${escapeHTML(messages.signedOutHeading)}</h1>
<p class="lead">${escapeHTML(messages.signedOutLead)}</p>${back}`;
  const html = renderPageHtml({ title: messages.signedOutTitle, content, styleNonce, branding: context.config.branding, lang: tag, dir });
  return htmlResponse(200, html, { styleNonce, imgSrc: logoSources(context.config.branding) }, headers);
}
