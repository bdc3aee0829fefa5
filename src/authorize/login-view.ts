/**
 * The built-in login page. `login.render(view)` replaces it entirely; the {@link LoginView} is everything a
 * replacement needs (and all of it is plain data, none of it escaped: escape what you interpolate).
 */
import type { ResolvedConfig } from '../config.js';
import { en } from '../i18n/en.js';
import { fill, type Messages } from '../i18n/messages.js';
import { passkeySignInScript } from '../passkeys/page-script.js';
import { escapeHTML } from './html.js';
import { renderPage } from './page-layout.js';

/**
 * What the login page shows and posts. A custom page must post `application/x-www-form-urlencoded` to
 * `action` with the fields `csrf_token`, `username`, `password`, or `csrf_token` and `cancel` to cancel; and
 * it must put `styleNonce` on its `<style>` element (the CSP allows no other styles, and no scripts).
 * platform-operations.md §5 item 2 (the user authenticates on the service's login page); RFC 6749 §10.12 (the CSRF
 * token).
 *
 * @example
 * createSentinel({ ..., login: { render: (view) => myTemplate({ ...view, title: `Sign in to ${view.appName}` }) } })
 */
export interface LoginView {
  /** Branding `productName`. */
  productName: string;
  /** Branding `logoUrl`, if any. */
  logoUrl?: string | undefined;
  /** Branding colours (CSS custom property name without `--` → value), defaults not included. */
  colors: Readonly<Record<string, string>>;
  /** The application's display name (its client id when it has none). */
  appName: string;
  accountId: string;
  /** The URL the form posts to (path-absolute, interaction id included). */
  action: string;
  interactionId: string;
  /** Value of the hidden `csrf_token` field. */
  csrfToken: string;
  /** The username of a failed attempt, or the app's `login_hint`, to fill the field (never the password). */
  username?: string | undefined;
  /** A message for the user, e.g. "Incorrect username or password". */
  error?: string | undefined;
  /** Nonce for the page's `<style>` element. */
  styleNonce: string;
  /**
   * The app's `ui_locales` (OpenID Connect Core §3.1.2.1), most preferred first: BCP 47 tags. The built-in page
   * already speaks the language chosen from them (`lang`); a custom `render` may use them for its own catalogue.
   */
  uiLocales?: readonly string[] | undefined;
  /** The page language (`<html lang>`), chosen from `ui_locales`, `Accept-Language` and the `i18n` option. */
  lang?: string | undefined;
  /** `rtl` for right-to-left languages. */
  dir?: 'ltr' | 'rtl' | undefined;
  /** Every string of the page, in `lang`; `error` is already translated when the catalogue has it. */
  messages?: Messages | undefined;
  /**
   * Present when the user store keeps passkeys: the page may offer "Sign in with a passkey". `optionsURL` answers
   * a POST of `csrf_token` with the WebAuthn request options (JSON); the assertion is posted as the form field
   * `assertion` (JSON) with `csrf_token` to `action`. `scriptNonce` is the CSP nonce for the page's script.
   */
  passkey?: { optionsURL: string; action: string; scriptNonce: string } | undefined;
}

/**
 * The default login page: labelled fields with autocomplete hints, the error tied to the fields through
 * `aria-describedby`, Sign in first (so Enter signs in) and Cancel second, no JavaScript.
 *
 * @example
 * const html = renderLoginPage(view, config.branding);
 */
export function renderLoginPage(view: LoginView, branding: ResolvedConfig['branding']): string {
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
<form id="passkey-form" method="post" action="${escapeHTML(passkey.action)}" data-options="${escapeHTML(passkey.optionsURL)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
<input type="hidden" name="assertion" value="">
<button type="button" id="passkey-button" class="passkey">${escapeHTML(messages.passkeySignIn)}</button>
</form>
</div>
`;
  const content = `<h1>${escapeHTML(messages.signInTitle)}</h1>
<p class="lead">${fill(escapeHTML(messages.continueTo), { app: `<strong>${escapeHTML(view.appName)}</strong>` })}</p>
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
${passkeyPart}<p class="meta">${escapeHTML(fill(messages.account, { account: view.accountId }))}</p>`;
  return renderPage({
    title: messages.signInTitle,
    content,
    styleNonce: view.styleNonce,
    branding,
    lang: view.lang,
    dir: view.dir,
    script: passkey === undefined ? undefined : { nonce: passkey.scriptNonce, source: passkeySignInScript() },
  });
}
