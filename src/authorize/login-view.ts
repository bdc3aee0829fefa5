/**
 * The built-in login page. `login.render(view)` replaces it entirely; the {@link LoginView} is everything a
 * replacement needs (and all of it is plain data, none of it escaped: escape what you interpolate).
 */
import type { ResolvedConfig } from '../config.js';
import { escapeHTML } from './html.js';
import { renderPage } from './page-layout.js';

/**
 * What the login page shows and posts. A custom page must post `application/x-www-form-urlencoded` to
 * `action` with the fields `csrf_token`, `username`, `password`, or `csrf_token` and `cancel` to cancel; and
 * it must put `styleNonce` on its `<style>` element (the CSP allows no other styles, and no scripts).
 * Seed spec §5.2 (the user authenticates on the service's login page); RFC 6749 §10.12 (the CSRF token).
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
   * The app's `ui_locales` (OpenID Connect Core §3.1.2.1), most preferred first: BCP 47 tags for a page that can
   * speak more than one language. The built-in page does not use them yet.
   */
  uiLocales?: readonly string[] | undefined;
}

/**
 * The default login page: labelled fields with autocomplete hints, the error tied to the fields through
 * `aria-describedby`, Sign in first (so Enter signs in) and Cancel second, no JavaScript.
 *
 * @example
 * const html = renderLoginPage(view, config.branding);
 */
export function renderLoginPage(view: LoginView, branding: ResolvedConfig['branding']): string {
  const hasError = view.error !== undefined;
  const described = hasError ? ' aria-describedby="login-error" aria-invalid="true"' : '';
  const error = hasError ? `<p id="login-error" class="error" role="alert">${escapeHTML(view.error ?? '')}</p>\n` : '';
  const content = `<h1>Sign in</h1>
<p class="lead">to continue to <strong>${escapeHTML(view.appName)}</strong></p>
<form method="post" action="${escapeHTML(view.action)}" novalidate>
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}">
${error}<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="256" value="${escapeHTML(view.username ?? '')}"${described}${hasError ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${described}${hasError ? ' autofocus' : ''}>
<div class="actions">
<button type="submit" class="primary">Sign in</button>
<button type="submit" class="secondary" name="cancel" value="1">Cancel</button>
</div>
</form>
<p class="meta">Account ${escapeHTML(view.accountId)}</p>`;
  return renderPage({ title: 'Sign in', content, styleNonce: view.styleNonce, branding });
}
