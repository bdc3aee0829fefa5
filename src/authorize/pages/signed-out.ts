/**
 * The "signed out" page: what the browser sees after logout or RP-initiated logout when there is no return
 * address to send it to.
 */
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../../http/messages.js';
import { pageLocale } from '../../i18n/page-locale.js';
import { escapeHTML } from './escape-html.js';
import { renderPageHtml } from './layout.js';
import { logoSources } from './logo-policy.js';
import { createStyleNonce, htmlResponse } from './security-headers.js';

/**
 * The "signed out" page, also shown by RP-initiated logout when no return address applies; in the language of
 * `uiLocales` (else the request's `ui_locales` query parameter), then `Accept-Language`, then the default.
 */
export function signedOutResponse(
  context: SentinelContext,
  headers: Record<string, string>,
  request?: SentinelRequest,
  uiLocales?: string,
): SentinelResponse {
  const styleNonce = createStyleNonce();
  const { messages, tag, dir } = pageLocale(context, request, uiLocales);
  const content = `<h1>${escapeHTML(messages.signedOutHeading)}</h1>
<p class="lead">${escapeHTML(messages.signedOutLead)}</p>`;
  const html = renderPageHtml({ title: messages.signedOutTitle, content, styleNonce, branding: context.config.branding, lang: tag, dir });
  return htmlResponse(200, html, { styleNonce, imgSrc: logoSources(context.config.branding) }, headers);
}
