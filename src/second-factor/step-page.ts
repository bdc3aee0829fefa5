/**
 * The pages of the steps after the password: the TOTP code (with recovery behind a disclosure that works without
 * JavaScript) and the offer to add a passkey. Same frame, language and headers as the login page.
 */
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { escapeHTML } from '../authorize/pages/escape-html.js';
import type { InteractionRecord } from '../authorize/state/interaction.js';
import { loginStepURL } from '../authorize/endpoints/login-step-url.js';
import { logoSources } from '../authorize/pages/logo-policy.js';
import { renderPageHtml } from '../authorize/pages/layout.js';
import { createStyleNonce, formActionSources, htmlResponse } from '../authorize/pages/security-headers.js';
import { pageLocale, translate } from '../i18n/page-locale.js';
import { passkeyRegisterScript } from '../passkeys/page-script.js';
import type { PendingSignIn } from './pending-sign-in.js';

/**
 * Characters the code field takes: six digits, or the two groups of three that authenticator apps show ("123 456"),
 * as pasted, with a space around. The step drops whitespace; a field of six would cut a pasted "123 456" to
 * "123 45", a wrong code that spends one of the user's few attempts.
 */
const CODE_FIELD_LENGTH = 10;

/** What a step page shows beyond its interaction. */
export interface StepPageInput {
  interactionId: string;
  interaction: InteractionRecord;
  pending: PendingSignIn;
  /** An English handler message; shown translated. */
  error?: string | undefined;
  status?: number | undefined;
}

function locale(context: SentinelContext, request: SentinelRequest, interaction: InteractionRecord) {
  return pageLocale(context, request, interaction.request.uiLocales);
}

function errorBlock(messages: ReturnType<typeof pageLocale>['messages'], error: string | undefined): string {
  if (error === undefined) return '';
  return `<p id="step-error" class="error" role="alert">${escapeHTML(translate(messages, error) ?? error)}</p>\n`;
}

/**
 * The TOTP step page.
 *
 * @example
 * return totpPage(context, request, { interactionId, interaction, pending, error: 'That code is not correct. Try again.' });
 */
export function totpPage(context: SentinelContext, request: SentinelRequest, input: StepPageInput): SentinelResponse {
  const { messages, tag, dir } = locale(context, request, input.interaction);
  const { accountId } = input.interaction.request;
  const action = loginStepURL(context, input.interaction.mountPath, accountId, input.interactionId, 'totp');
  const hasError = input.error !== undefined;
  const described = hasError ? ' aria-describedby="step-error" aria-invalid="true"' : '';
  const recovery =
    typeof context.config.users?.recover !== 'function'
      ? ''
      : `<details>
<summary>${escapeHTML(messages.recoveryToggle)}</summary>
<form method="post" action="${escapeHTML(action)}" novalidate>
<input type="hidden" name="csrf_token" value="${escapeHTML(input.pending.csrfToken)}">
<label for="recovery_code">${escapeHTML(messages.recoveryLabel)}</label>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="64">
<div class="actions"><button type="submit" class="secondary">${escapeHTML(messages.recoveryUse)}</button></div>
</form>
</details>
`;
  const content = `<h1>${escapeHTML(messages.totpTitle)}</h1>
<p class="lead">${escapeHTML(messages.totpLead)}</p>
<form method="post" action="${escapeHTML(action)}" novalidate>
<input type="hidden" name="csrf_token" value="${escapeHTML(input.pending.csrfToken)}">
${errorBlock(messages, input.error)}<label for="code">${escapeHTML(messages.totpLabel)}</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9 ]*" autocomplete="one-time-code" maxlength="${CODE_FIELD_LENGTH}" required autofocus${described}>
<div class="actions"><button type="submit" class="primary">${escapeHTML(messages.totpVerify)}</button></div>
</form>
${recovery}`;
  const styleNonce = createStyleNonce();
  const html = renderPageHtml({ title: messages.totpTitle, content, styleNonce, branding: context.config.branding, lang: tag, dir });
  return htmlResponse(input.status ?? 200, html, {
    styleNonce,
    formAction: formActionSources(input.interaction.request.redirectUri),
    imgSrc: logoSources(context.config.branding),
  });
}

/**
 * The "add a passkey" page: a button revealed by the script when the browser has WebAuthn, and "Not now", which
 * works without it.
 *
 * @example
 * return passkeyOfferPage(context, request, { interactionId, interaction, pending });
 */
export function passkeyOfferPage(context: SentinelContext, request: SentinelRequest, input: StepPageInput): SentinelResponse {
  const { messages, tag, dir } = locale(context, request, input.interaction);
  const { accountId } = input.interaction.request;
  const url = (step: 'passkey/register' | 'passkey/register/options') =>
    loginStepURL(context, input.interaction.mountPath, accountId, input.interactionId, step);
  const content = `<h1>${escapeHTML(messages.passkeyOfferTitle)}</h1>
<p class="lead">${escapeHTML(messages.passkeyOfferLead)}</p>
${errorBlock(messages, input.error)}<form id="passkey-form" method="post" action="${escapeHTML(url('passkey/register'))}" data-options="${escapeHTML(url('passkey/register/options'))}" data-failed="${escapeHTML(messages.passkeyNotAdded)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(input.pending.csrfToken)}">
<input type="hidden" name="attestation" value="">
<div class="actions">
<button type="button" id="passkey-button" class="primary" hidden>${escapeHTML(messages.passkeyAdd)}</button>
<button type="submit" class="secondary" name="skip" value="1">${escapeHTML(messages.passkeySkip)}</button>
</div>
</form>`;
  const styleNonce = createStyleNonce();
  const scriptNonce = createStyleNonce();
  const html = renderPageHtml({
    title: messages.passkeyOfferTitle,
    content,
    styleNonce,
    branding: context.config.branding,
    lang: tag,
    dir,
    script: { nonce: scriptNonce, source: passkeyRegisterScript() },
  });
  return htmlResponse(input.status ?? 200, html, {
    styleNonce,
    scriptNonce,
    formAction: formActionSources(input.interaction.request.redirectUri),
    imgSrc: logoSources(context.config.branding),
  });
}
