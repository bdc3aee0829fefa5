/**
 * The built-in login page. `login.render(view)` replaces it entirely; the {@link LoginView} is everything a
 * replacement needs (and all of it is plain data, none of it escaped: escape what you interpolate).
 */
import type { LoginView, ResolvedConfig } from '../../config.js';
import { en } from '../../i18n/en.js';
import { fill } from '../../i18n/messages.js';
import { passkeySignInScript } from '../../passkeys/page-script.js';
import { escapeHTML, isolateHTML } from './escape-html.js';
import { renderPageHtml } from './layout.js';

/**
 * The default login page: labelled fields with autocomplete hints, the error tied to the fields through
 * `aria-describedby`, Sign in first (so Enter signs in) and Cancel second, no JavaScript.
 *
 * @example
 * const html = renderLoginHtml(view, config.branding);
 */
export function renderLoginHtml(view: LoginView, branding: ResolvedConfig['branding']): string {
  const messages = view.messages ?? en;
  const hasError = view.error !== undefined;
  const described = hasError ? ' aria-describedby="login-error" aria-invalid="true"' : '';
  const error = hasError ? `<p id="login-error" class="error" role="alert">${escapeHTML(view.error ?? '')}</p>\n` : '';
  const passkey = view.passkey;
  // The passkey part is `hidden` until the script finds WebAuthn, so without JavaScript the page is the password form.
  const passkeyPart =
    passkey === undefined
      ? ''
      : `<div id="passkey" hidden>
<p class="divider">${escapeHTML(messages.or)}</p>
<form id="passkey-form" method="post" action="${escapeHTML(passkey.action)}" data-options="${escapeHTML(passkey.optionsURL)}" data-failed="${escapeHTML(messages.passkeyFailed)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
<input type="hidden" name="assertion" value="">
<button type="button" id="passkey-button" class="passkey">${escapeHTML(messages.passkeySignIn)}</button>
</form>
</div>
`;
  const content = `<h1>${escapeHTML(messages.signInTitle)}</h1>
<p class="lead">${fill(escapeHTML(messages.continueTo), { app: `<strong>${isolateHTML(view.appName)}</strong>` })}</p>
<form method="post" action="${escapeHTML(view.action)}" novalidate>
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
${error}<label for="username">${escapeHTML(messages.username)}</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="256" value="${escapeHTML(view.username ?? '')}"${described}${hasError ? '' : ' autofocus'}>
<label for="password">${escapeHTML(messages.password)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}${hasError ? ' autofocus' : ''}>
<div class="actions">
<button type="submit" class="primary">${escapeHTML(messages.signIn)}</button>
<button type="submit" class="secondary" name="cancel" value="1">${escapeHTML(messages.cancel)}</button>
</div>
</form>
${passkeyPart}<p class="meta">${fill(escapeHTML(messages.account), { account: isolateHTML(view.accountId) })}</p>`;
  return renderPageHtml({
    title: messages.signInTitle,
    content,
    styleNonce: view.styleNonce,
    branding,
    lang: view.lang,
    dir: view.dir,
    script: passkey === undefined ? undefined : { nonce: passkey.scriptNonce, source: passkeySignInScript() },
  });
}
