/**
 * The confirmation page of RP-initiated logout: shown when a logout request cannot be tied to the browser's
 * session, so that a link on any site cannot sign the user out without the user agreeing. Same frame, CSP and
 * anti-framing headers as the login page; the form carries a CSRF token bound to the session it ends.
 */
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../../http/messages.js';
import { fill } from '../../i18n/messages.js';
import { pageLocale } from '../../i18n/page-locale.js';
import { escapeHTML, isolateHTML } from './escape-html.js';
import { logoSources } from './logo-policy.js';
import { renderPageHtml } from './layout.js';
import { createStyleNonce, formActionSources, htmlResponse } from './security-headers.js';

/** What the confirmation page shows and posts. */
export interface EndSessionView {
  /** Path-absolute URL of the end-session endpoint. */
  action: string;
  confirmationId: string;
  csrfToken: string;
  /** The requesting application's display name, when known. */
  appName?: string | undefined;
  /** Where the browser goes after signing out (for the CSP's form-action). */
  returnTo?: string | undefined;
  /** The logout request's `ui_locales`, most preferred first (else its query's, then `Accept-Language`). */
  uiLocales?: string | undefined;
}

/**
 * Renders the "Sign out?" page in the request's language (`ui_locales`, then `Accept-Language`, then the default).
 *
 * @example
 * return endSessionConfirmationResponse(context, { action, confirmationId, csrfToken, appName: app.name }, request);
 */
export function endSessionConfirmationResponse(
  context: SentinelContext,
  view: EndSessionView,
  request?: SentinelRequest,
): SentinelResponse {
  const styleNonce = createStyleNonce();
  const { messages, tag, dir } = pageLocale(context, request, view.uiLocales);
  const product = isolateHTML(context.config.branding.productName);
  const asks =
    view.appName === undefined
      ? ''
      : `${fill(escapeHTML(messages.logoutConfirmAsks), { app: `<strong>${isolateHTML(view.appName)}</strong>` })} `;
  const content = `<h1>${escapeHTML(messages.logoutConfirmTitle)}</h1>
<p class="lead">${asks}${fill(escapeHTML(messages.logoutConfirmLead), { product })}</p>
<form method="post" action="${escapeHTML(view.action)}">
<input type="hidden" name="confirmation" value="${escapeHTML(view.confirmationId)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
<div class="actions">
<button type="submit" class="primary">${escapeHTML(messages.logoutConfirm)}</button>
</div>
</form>
<p class="meta">${escapeHTML(messages.logoutConfirmMeta)}</p>`;
  const html = renderPageHtml({
    title: messages.logoutConfirmTitle,
    content,
    styleNonce,
    branding: context.config.branding,
    lang: tag,
    dir,
  });
  // Chromium applies form-action to the 303 that follows the post, so the app's origin must be allowed too.
  return htmlResponse(200, html, {
    styleNonce,
    formAction: formActionSources(view.returnTo),
    imgSrc: logoSources(context.config.branding),
  });
}
