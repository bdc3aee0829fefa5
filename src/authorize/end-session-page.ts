/**
 * The confirmation page of RP-initiated logout: shown when a logout request cannot be tied to the browser's
 * session, so that a link on any site cannot sign the user out without the user agreeing. Same frame, CSP and
 * anti-framing headers as the login page; the form carries a CSRF token bound to the session it ends.
 */
import type { SentinelContext } from '../context.js';
import type { SentinelResponse } from '../http.js';
import { escapeHTML } from './html.js';
import { logoSources } from './logo-policy.js';
import { renderPage } from './page-layout.js';
import { createStyleNonce, htmlResponse, originSource } from './security-headers.js';

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
}

/**
 * Renders the "Sign out?" page.
 *
 * @example
 * return endSessionPage(context, { action, confirmationId, csrfToken, appName: app.name });
 */
export function endSessionPage(context: SentinelContext, view: EndSessionView): SentinelResponse {
  const styleNonce = createStyleNonce();
  const from = view.appName === undefined ? '' : ` <strong>${escapeHTML(view.appName)}</strong> asks to sign you out.`;
  const content = `<h1>Sign out?</h1>
<p class="lead">${from.trim()} Do you want to sign out of ${escapeHTML(context.config.branding.productName)}?</p>
<form method="post" action="${escapeHTML(view.action)}">
<input type="hidden" name="confirmation" value="${escapeHTML(view.confirmationId)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
<div class="actions">
<button type="submit" class="primary">Sign out</button>
</div>
</form>
<p class="meta">If you did not ask to sign out, close this page: you stay signed in.</p>`;
  const html = renderPage({ title: 'Sign out', content, styleNonce, branding: context.config.branding });
  // Chromium applies form-action to the 303 that follows the post, so the app's origin must be allowed too.
  const returnOrigin = view.returnTo === undefined ? null : originSource(view.returnTo);
  return htmlResponse(200, html, {
    styleNonce,
    formAction: returnOrigin === null ? [] : [returnOrigin],
    imgSrc: logoSources(context.config.branding),
  });
}
