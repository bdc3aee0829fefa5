/**
 * The verification pages of the device flow (RFC 8628 §3.3): enter the code, confirm the app, and the outcome. They
 * are built like the login page — the shared layout, the page language, the CSP with a per-response style nonce,
 * `frame-ancestors 'none'` and no caching (`authorize/pages/security-headers.ts`) — and post only to their own origin
 * (the forms that lead to a sign-in may end at the host's login page, whose origin `form-action` allows as well).
 */
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { routePath } from '../http/route-paths.js';
import { fill } from '../i18n/messages.js';
import { flowUiLocales, pageLocale, translate, withUiLocales } from '../i18n/page-locale.js';
import { escapeHTML, isolateHTML } from '../authorize/pages/escape-html.js';
import { renderPageHtml } from '../authorize/pages/layout.js';
import { logoSources } from '../authorize/pages/logo-policy.js';
import { createStyleNonce, formActionSources, htmlResponse } from '../authorize/pages/security-headers.js';
import { en } from '../i18n/en.js';
import type { DeviceConfirmation } from './confirmation.js';
import type { DeviceRecord } from './device-records.js';
import { entryFormTie } from './entry-form-tie.js';
import { formatUserCode } from './user-code.js';

/**
 * The `form-action` sources of the host's login page (`login.url`) beyond the page's own origin: none for a path,
 * which the browser resolves against the page. A protocol-relative `//host/…` (or `/\host/…`, which URL parsers read
 * the same) names another host, and takes the issuer's scheme, as it takes the page's.
 */
function hostLoginSources(context: SentinelContext): string[] {
  const { url } = context.config.login;
  // A reference that stays on whatever origin it is resolved against is a path on the page's own origin ('self').
  if (url === undefined || new URL(url, RELATIVE_PROBE).origin === RELATIVE_PROBE) return [];
  return formActionSources(new URL(url, context.config.issuer).href);
}

const RELATIVE_PROBE = 'https://relative.invalid';

function page(
  context: SentinelContext,
  request: SentinelRequest,
  status: number,
  title: string,
  content: string,
  headers?: Record<string, string>,
): SentinelResponse {
  const styleNonce = createStyleNonce();
  const { tag, dir } = pageLocale(context, request);
  const html = renderPageHtml({ title, content, styleNonce, branding: context.config.branding, lang: tag, dir });
  // The code entry form and "Not you?" end in a 303 to the login page, which is the host's own with `login.url`, maybe
  // on another origin: Chromium applies form-action to that redirect, so its origin is allowed too (a path adds none).
  const formAction = hostLoginSources(context);
  return htmlResponse(status, html, { styleNonce, formAction, imgSrc: logoSources(context.config.branding) }, headers);
}

/** What the code entry page shows beyond its form. */
export interface EntryPageState {
  /** The code to prefill (from `verification_uri_complete`, or what was typed). */
  userCode?: string | undefined;
  /** An English message of the handlers, shown translated. */
  error?: string | undefined;
  status?: number | undefined;
}

/**
 * The page where the person types the code their device shows. Its form carries a CSRF token bound to a cookie the
 * page sets (`entry-form-tie.ts`): the form comes before any sign-in, so there is no record to keep a token in.
 * @example return entryPageResponse(context, request, accountId, { userCode: 'BCDF-GHJK' });
 */
export function entryPageResponse(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  state: EntryPageState,
): SentinelResponse {
  const { messages } = pageLocale(context, request);
  // The post keeps the page's ui_locales (or its sign-in's, after a Cancel on the login page): its answers (a wrong
  // code, a 429, the sign-in) stay in that language.
  const action = withUiLocales(`${request.mountPath ?? ''}${routePath(context.config, 'device', { accountId })}`, flowUiLocales(request));
  const tie = entryFormTie(context, request, accountId);
  const hasError = state.error !== undefined;
  const described = hasError ? ' aria-describedby="device-error" aria-invalid="true"' : '';
  const error = hasError
    ? `<p id="device-error" class="error" role="alert">${escapeHTML(translate(messages, state.error ?? '') ?? state.error ?? '')}</p>\n`
    : '';
  const content = `<h1>${escapeHTML(messages.deviceTitle)}</h1>
<p class="lead">${escapeHTML(messages.deviceLead)}</p>
<form method="post" action="${escapeHTML(action)}" novalidate>
<input type="hidden" name="csrf_token" value="${escapeHTML(tie.token)}">
${error}<label for="user_code">${escapeHTML(messages.deviceCodeLabel)}</label>
<input id="user_code" name="user_code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="20" placeholder="XXXX-XXXX" value="${escapeHTML(state.userCode ?? '')}"${described} autofocus>
<div class="actions">
<button type="submit" class="primary">${escapeHTML(messages.deviceContinue)}</button>
</div>
</form>
<p class="meta">${fill(escapeHTML(messages.account), { account: isolateHTML(accountId) })}</p>`;
  return page(context, request, state.status ?? 200, messages.deviceTitle, content, { 'set-cookie': tie.cookie });
}

/**
 * The page that names the app and asks the signed-in person to allow or deny it. It names the signed-in user too
 * (`userName`), with a way to sign in as someone else: at a shared computer the browser may still be signed in as
 * another person, who would otherwise hand their account to the device unknowingly.
 * @example return confirmPageResponse(context, request, id, confirmation, 'Alice');
 */
export function confirmPageResponse(
  context: SentinelContext,
  request: SentinelRequest,
  id: string,
  confirmation: DeviceConfirmation,
  userName: string,
): SentinelResponse {
  const { messages } = pageLocale(context, request);
  const path = `${confirmation.mountPath}${routePath(context.config, 'device-confirm', { accountId: confirmation.accountId })}`;
  const action = withUiLocales(path, flowUiLocales(request));
  const code = `<strong class="code">${isolateHTML(formatUserCode(confirmation.userCode))}</strong>`;
  // The "not you?" form carries the same fields: it spends the confirmation, so it needs the same proof.
  const hidden = `<input type="hidden" name="confirmation" value="${escapeHTML(id)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(confirmation.csrfToken)}">
`;
  const content = `<h1>${escapeHTML(messages.deviceConfirmTitle)}</h1>
<p class="lead">${fill(escapeHTML(messages.deviceConfirmAsks), { app: `<strong>${isolateHTML(confirmation.appName)}</strong>` })}</p>
<p>${fill(escapeHTML(messages.deviceConfirmCode), { code })}</p>
<p>${fill(escapeHTML(messages.deviceSignedInAs), { user: `<strong>${isolateHTML(userName)}</strong>` })}</p>
<form method="post" action="${escapeHTML(action)}">
${hidden}<div class="actions">
<button type="submit" class="primary" name="approve" value="1">${escapeHTML(messages.deviceAllow)}</button>
<button type="submit" class="secondary" name="deny" value="1">${escapeHTML(messages.deviceDeny)}</button>
</div>
</form>
<p class="meta">${escapeHTML(messages.deviceConfirmMeta)}</p>
<form method="post" action="${escapeHTML(action)}">
${hidden}<div class="actions">
<button type="submit" class="secondary" name="switch" value="1">${escapeHTML(messages.deviceSwitchUser)}</button>
</div>
</form>`;
  return page(context, request, 200, messages.deviceConfirmTitle, content);
}

/**
 * The last page: the device is connected, or it was refused.
 * @example return outcomePageResponse(context, request, 'approved');
 */
export function outcomePageResponse(context: SentinelContext, request: SentinelRequest, outcome: 'approved' | 'denied'): SentinelResponse {
  const { messages } = pageLocale(context, request);
  const [title, lead] =
    outcome === 'approved'
      ? [messages.deviceApprovedTitle, messages.deviceApprovedLead]
      : [messages.deviceDeniedTitle, messages.deviceDeniedLead];
  return page(context, request, 200, title, `<h1>${escapeHTML(title)}</h1>\n<p class="lead">${escapeHTML(lead)}</p>`);
}

/**
 * The answer to a decision that did not apply (`decideDevice` returned `applied: false`): the code entry page again,
 * saying the code is wrong or expired (`record` gone or past its expiry) or already used (another decision came
 * first), with a 400. Never the outcome page, which would tell the person about a decision that was not made.
 *
 * @example if (!outcome.applied) return undecidedPageResponse(context, request, accountId, outcome.record);
 */
export function undecidedPageResponse(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  record: DeviceRecord | null,
): SentinelResponse {
  const expired = record === null || record.expiresAt <= Math.floor(Date.now() / 1000);
  return entryPageResponse(context, request, accountId, { error: expired ? en.deviceCodeWrong : en.deviceCodeUsed, status: 400 });
}
