/**
 * The login page response: the view of an interaction, rendered by `login.render` or the built-in page, with a
 * CSP whose `form-action` also allows the app's redirect URI origin (Chromium applies `form-action` to the
 * redirects that follow a form POST, so the 303 back to the app would otherwise be blocked).
 */
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../../http/messages.js';
import { pageLocale, translate } from '../../i18n/page-locale.js';
import type { InteractionRecord } from '../state/interaction.js';
import { builtInLoginURL } from '../state/interaction.js';
import { loginStepURL } from '../endpoints/login-step-url.js';
import { logoSources } from './logo-policy.js';
import type { LoginView } from '../../config.js';
import { renderLoginHtml } from './login-html.js';
import { createStyleNonce, formActionSources, htmlResponse } from './security-headers.js';

/** What the page says beyond the interaction. */
export interface LoginPageState {
  username?: string | undefined;
  error?: string | undefined;
  status?: number | undefined;
  /** The request, for its `Accept-Language`. */
  request?: SentinelRequest | undefined;
}

/**
 * Renders the login page of an interaction.
 *
 * @example
 * return loginPageResponse(context, interactionId, interaction, { error: 'Incorrect username or password' });
 */
export async function loginPageResponse(
  context: SentinelContext,
  interactionId: string,
  interaction: InteractionRecord,
  state: LoginPageState = {},
): Promise<SentinelResponse> {
  const { branding, login } = context.config;
  const authorization = interaction.request;
  const styleNonce = createStyleNonce();
  const locale = pageLocale(context, state.request, authorization.uiLocales);
  const { accountId } = authorization;
  const scriptNonce = context.config.users?.passkeys === undefined ? undefined : createStyleNonce();
  const view: LoginView = {
    productName: branding.productName,
    logoUrl: branding.logoUrl,
    colors: branding.colors,
    // A sign-in to the account page continues to "Your account", not to an app.
    appName: interaction.returnTo !== undefined ? locale.messages.accountTitle : (authorization.clientName ?? authorization.clientId),
    accountId: authorization.accountId,
    action: builtInLoginURL(context, interaction.mountPath, authorization.accountId, interactionId),
    interactionId,
    csrfToken: interaction.csrfToken,
    // A failed attempt's username wins over the app's login_hint: it is what the user last typed.
    username: state.username ?? authorization.loginHint,
    error: state.error === undefined ? undefined : (translate(locale.messages, state.error) ?? state.error),
    styleNonce,
    uiLocales: authorization.uiLocales,
    lang: locale.tag,
    dir: locale.dir,
    messages: locale.messages,
    passkey:
      scriptNonce === undefined
        ? undefined
        : {
            optionsURL: loginStepURL(context, interaction.mountPath, accountId, interactionId, 'passkey/options'),
            action: loginStepURL(context, interaction.mountPath, accountId, interactionId, 'passkey'),
            scriptNonce,
          },
  };
  const html = login.render === undefined ? renderLoginHtml(view, branding) : renderedPage(await login.render(view));
  return htmlResponse(state.status ?? 200, html, {
    styleNonce,
    formAction: formActionSources(authorization.redirectUri),
    imgSrc: logoSources(branding),
    scriptNonce,
  });
}

/**
 * The page `login.render` answered. Anything but a non-empty string (`undefined` from a forgotten `return`, a template
 * object) is a bug of the hook: sent as it was, it became an empty 200 page, a JSON dump under `text/html`, or the
 * host framework's own error, with nothing for `onError`. It throws instead (the 500 page, the TypeError to `onError`).
 */
function renderedPage(html: unknown): string {
  if (typeof html === 'string' && html !== '') return html;
  throw new TypeError('sentinel-idp: login.render() must return the page as a non-empty string');
}
