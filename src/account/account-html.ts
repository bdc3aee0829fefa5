/**
 * The account page's HTML: the login page's frame (same card, colours, language and direction), a wider card, and
 * one section per thing the user owns. Every change is an ordinary form post carrying the CSRF token, so the page
 * works without JavaScript; the one script is the "Add a passkey" button, shown only where WebAuthn exists.
 */
import type { ResolvedConfig } from '../config.js';
import { escapeHTML, isolateHTML } from '../authorize/pages/escape-html.js';
import { renderPageHtml } from '../authorize/pages/layout.js';
import { fill, type Messages } from '../i18n/messages.js';
import { passkeyRegisterScript } from '../passkeys/page-script.js';
import type { ListPage, PagedList } from './account-paging.js';

/** One device session as the page lists it. */
export interface SessionItem {
  sid: string;
  /** Seconds since the epoch when the user signed in. */
  authTime: number;
  /** The session of the browser showing the page. */
  current: boolean;
  /** Display names of the apps signed in through it. */
  apps: string[];
}

/** One passkey as the page lists it. */
export interface PasskeyItem {
  id: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** One app holding grants of the user. */
export interface ConnectedAppItem {
  clientId: string;
  name: string;
  scopes: string[];
  /** Seconds since the epoch of its oldest live grant. */
  since: number;
}

/** Everything the page shows. */
export interface AccountView {
  /** Who is signed in, as shown (their name when the claims hook gives one, else the user id). */
  user: string;
  /** Where the forms post (the page's own path, with the `ui_locales` it was shown in). */
  action: string;
  /** Where "Sign out" posts (the logout endpoint). */
  logoutAction: string;
  csrfToken: string;
  /** A message key of what the last change did, shown once as a status line. */
  notice?: keyof Messages | undefined;
  sessions: SessionItem[] | undefined;
  /**
   * `stepUpURL`: where to sign in again first, when this sign-in is too weak or too old to add or remove a passkey
   * (instead of the form and the Remove buttons); `stepUpLabel` says which of the two. `atLimit`: the user has
   * `passkeys.maxPerUser` passkeys, so the page says to remove one instead of offering to add one.
   */
  passkeys:
    | {
        items: PasskeyItem[];
        canRemove: boolean;
        optionsURL: string;
        stepUpURL?: string | undefined;
        stepUpLabel?: 'accountPasskeyStepUp' | 'accountPasskeyReauthenticate' | undefined;
        atLimit?: boolean | undefined;
      }
    | undefined;
  apps: ConnectedAppItem[] | undefined;
  /** Where each list is; a list of more than one page gets its own Previous / Next links. */
  pages?: Partial<Record<PagedList, ListPage>> | undefined;
  lang: string;
  dir: 'ltr' | 'rtl';
  messages: Messages;
  styleNonce: string;
  /** The nonce of the passkey script; absent when passkeys are off. */
  scriptNonce?: string | undefined;
}

const STYLES = `
main{max-width:40rem}
h2{font-size:1.125rem;margin:1.75rem 0 .5rem}
.items{list-style:none;margin:0;padding:0}
.items li{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;
  padding:.75rem 0;border-top:1px solid var(--card-border)}
.items li:last-child{border-bottom:1px solid var(--card-border)}
.items form{margin:0}
.items button{flex:none}
.detail{color:var(--muted);font-size:.875rem;display:block}
.tag{display:inline-block;font-size:.75rem;font-weight:600;color:var(--brand-text);background:var(--brand);
  border-radius:999px;padding:0 .5rem;margin-inline-start:.5rem}
.notice{background:var(--surface);border:1px solid var(--brand);border-radius:.5rem;padding:.75rem;margin:0 0 1rem;font-weight:600}
.none{color:var(--muted);margin:.25rem 0}
.section-actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:.75rem 0 0}
.section-actions form{margin:0}
.section-actions button{flex:none}
.signout{margin-top:2rem}
.pager{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.75rem 0 0;color:var(--muted);font-size:.875rem}
`;

/** The furthest from the epoch a Date reaches, in milliseconds (ECMA-262 time values): no format can show beyond it. */
const LAST_TIME_MS = 8.64e15;

/**
 * What a time that is no date shows. A passkey's `createdAt` is whatever the host's store hands back (`NaN`, a time
 * in nanoseconds): one such passkey must not take the whole page down with a RangeError.
 */
const NO_TIME = '—';

/** A date and time in the page's language, in UTC (the server does not know the browser's time zone). */
function when(lang: string, millis: number): string {
  if (!Number.isFinite(millis) || Math.abs(millis) > LAST_TIME_MS) return NO_TIME;
  try {
    return `${new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(millis)} UTC`;
  } catch {
    return new Date(millis).toISOString();
  }
}

/**
 * One action's form. `describedBy` names the row the button acts on, so that a screen reader tells one "Remove"
 * from the next.
 */
function postButton(view: AccountView, action: string, label: string, fields: Record<string, string>, describedBy?: string): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHTML(name)}" value="${escapeHTML(value)}">`)
    .join('');
  const described = describedBy === undefined ? '' : ` aria-describedby="${escapeHTML(describedBy)}"`;
  return `<form method="post" action="${escapeHTML(view.action)}"><input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}"><input type="hidden" name="action" value="${escapeHTML(action)}">${hidden}<button type="submit" class="secondary"${described}>${escapeHTML(label)}</button></form>`;
}

/** The page links of one list: the other lists' pages are kept, so paging one leaves them where they were. */
function pager(view: AccountView, list: PagedList): string {
  const at = view.pages?.[list];
  if (at === undefined || at.pages <= 1) return '';
  const m = view.messages;
  const label = fill(m.accountPageOf, { page: String(at.page), pages: String(at.pages) });
  // The action may carry the page's ui_locales already: the page numbers go after it.
  const [path = '', kept = ''] = view.action.split('?', 2);
  const link = (page: number, text: string, rel: string): string => {
    const query = new URLSearchParams(kept);
    for (const [name, other] of Object.entries(view.pages ?? {})) {
      if (name !== list && other !== undefined && other.page > 1) query.set(name, String(other.page));
    }
    if (page > 1) query.set(list, String(page));
    const search = query.toString();
    return `<a rel="${rel}" href="${escapeHTML(`${path}${search === '' ? '' : `?${search}`}#${list}-heading`)}">${escapeHTML(text)}</a>`;
  };
  const parts = [
    ...(at.page > 1 ? [link(at.page - 1, m.accountPrevious, 'prev')] : []),
    `<span>${escapeHTML(label)}</span>`,
    ...(at.page < at.pages ? [link(at.page + 1, m.accountNext, 'next')] : []),
  ];
  return `<nav class="pager" aria-label="${escapeHTML(`${headingOf(view, list)}: ${label}`)}">${parts.join('')}</nav>`;
}

function headingOf(view: AccountView, list: PagedList): string {
  const m = view.messages;
  return list === 'sessions' ? m.accountSessionsHeading : list === 'passkeys' ? m.accountPasskeysHeading : m.accountAppsHeading;
}

function sessionsSection(view: AccountView, sessions: SessionItem[]): string {
  const m = view.messages;
  const items = sessions
    .map((session, index) => {
      const tag = session.current ? `<span class="tag">${escapeHTML(m.accountSessionThisDevice)}</span>` : '';
      const apps =
        session.apps.length === 0
          ? ''
          : `<span class="detail">${fill(escapeHTML(m.accountSessionApps), { apps: session.apps.map(isolateHTML).join(', ') })}</span>`;
      const label = escapeHTML(fill(m.accountSessionSince, { time: when(view.lang, session.authTime * 1000) }));
      return `<li data-sid="${escapeHTML(session.sid)}"><div id="session-${index}">${label}${tag}${apps}</div>${postButton(view, 'end-session', m.accountSessionEnd, { sid: session.sid }, `session-${index}`)}</li>`;
    })
    .join('\n');
  const others = sessions.some((session) => !session.current)
    ? `<div class="section-actions">${postButton(view, 'end-other-sessions', m.accountSessionsEndOthers, {})}</div>`
    : '';
  return `<section aria-labelledby="sessions-heading"><h2 id="sessions-heading">${escapeHTML(m.accountSessionsHeading)}</h2>
<ul class="items" id="sessions">${items}</ul>
${pager(view, 'sessions')}${others}</section>`;
}

function passkeysSection(view: AccountView, passkeys: NonNullable<AccountView['passkeys']>): string {
  const m = view.messages;
  const items = passkeys.items
    .map((passkey, index) => {
      const label = escapeHTML(fill(m.accountPasskeyLabel, { id: `${passkey.id.slice(0, 10)}…` }));
      const added = escapeHTML(fill(m.accountPasskeyAdded, { time: when(view.lang, passkey.createdAt) }));
      const remove = passkeys.canRemove
        ? postButton(view, 'remove-passkey', m.accountPasskeyRemove, { credential_id: passkey.id }, `passkey-${index}`)
        : '';
      return `<li data-passkey="${escapeHTML(passkey.id)}"><div id="passkey-${index}">${label}<span class="detail">${added}</span></div>${remove}</li>`;
    })
    .join('\n');
  const list =
    passkeys.items.length === 0
      ? `<p class="none">${escapeHTML(m.accountPasskeysNone)}</p>`
      : `<ul class="items" id="passkeys">${items}</ul>`;
  // The button stays hidden until the script finds WebAuthn: without it there is nothing it could do.
  const add =
    passkeys.stepUpURL !== undefined
      ? `<div class="section-actions"><a class="button" id="passkey-step-up" href="${escapeHTML(passkeys.stepUpURL)}">${escapeHTML(m[passkeys.stepUpLabel ?? 'accountPasskeyStepUp'])}</a></div>`
      : passkeys.atLimit === true
        ? `<p class="none" id="passkey-limit">${escapeHTML(m.accountPasskeyLimit)}</p>`
        : `<form id="passkey-form" method="post" action="${escapeHTML(view.action)}" data-options="${escapeHTML(passkeys.optionsURL)}" data-failed="${escapeHTML(m.accountPasskeyUnavailable)}">
<input type="hidden" name="csrf_token" value="${escapeHTML(view.csrfToken)}"><input type="hidden" name="action" value="add-passkey"><input type="hidden" name="attestation" value="">
<div class="section-actions"><button type="button" id="passkey-button" class="primary" hidden>${escapeHTML(m.passkeyAdd)}</button></div>
</form>`;
  return `<section aria-labelledby="passkeys-heading"><h2 id="passkeys-heading">${escapeHTML(m.accountPasskeysHeading)}</h2>
${list}
${pager(view, 'passkeys')}${add}</section>`;
}

function appsSection(view: AccountView, apps: ConnectedAppItem[]): string {
  const m = view.messages;
  if (apps.length === 0) {
    return `<section aria-labelledby="apps-heading"><h2 id="apps-heading">${escapeHTML(m.accountAppsHeading)}</h2>
<p class="none">${escapeHTML(m.accountAppsNone)}</p></section>`;
  }
  const items = apps
    .map((app, index) => {
      const scopes =
        app.scopes.length === 0
          ? ''
          : `<span class="detail">${escapeHTML(fill(m.accountAppScopes, { scopes: app.scopes.join(', ') }))}</span>`;
      const since = `<span class="detail">${escapeHTML(fill(m.accountAppSince, { time: when(view.lang, app.since * 1000) }))}</span>`;
      return `<li data-client="${escapeHTML(app.clientId)}"><div id="app-${index}"><strong>${isolateHTML(app.name)}</strong>${scopes}${since}</div>${postButton(view, 'disconnect', m.accountAppDisconnect, { client_id: app.clientId }, `app-${index}`)}</li>`;
    })
    .join('\n');
  return `<section aria-labelledby="apps-heading"><h2 id="apps-heading">${escapeHTML(m.accountAppsHeading)}</h2>
<ul class="items" id="apps">${items}</ul>${pager(view, 'apps')}</section>`;
}

/**
 * The account page.
 *
 * @example
 * const html = renderAccountHtml(view, config.branding);
 */
export function renderAccountHtml(view: AccountView, branding: ResolvedConfig['branding']): string {
  const m = view.messages;
  // A failure notice is an alert in the error style; a done one a quiet status line.
  const failed =
    view.notice === 'accountPasskeyNotAdded' || view.notice === 'accountPasskeyAlreadyRegistered' || view.notice === 'accountPasskeyLimit';
  const notice =
    view.notice === undefined
      ? ''
      : `<p class="${failed ? 'error' : 'notice'}" role="${failed ? 'alert' : 'status'}">${escapeHTML(m[view.notice])}</p>\n`;
  const content = `<h1>${escapeHTML(m.accountTitle)}</h1>
<p class="lead">${fill(escapeHTML(m.accountLead), { user: `<strong>${isolateHTML(view.user)}</strong>` })}</p>
${notice}${view.sessions === undefined ? '' : sessionsSection(view, view.sessions)}
${view.passkeys === undefined ? '' : passkeysSection(view, view.passkeys)}
${view.apps === undefined ? '' : appsSection(view, view.apps)}
<form class="signout" method="post" action="${escapeHTML(view.logoutAction)}"><div class="actions"><button type="submit" class="secondary">${escapeHTML(m.accountSignOut)}</button></div></form>`;
  return renderPageHtml({
    title: m.accountTitle,
    content,
    styleNonce: view.styleNonce,
    branding,
    lang: view.lang,
    dir: view.dir,
    styles: STYLES,
    script:
      view.scriptNonce === undefined || view.passkeys === undefined
        ? undefined
        : { nonce: view.scriptNonce, source: passkeyRegisterScript() },
  });
}

/**
 * The page of a browser that cancelled the sign-in: it says so and offers to sign in again (a plain link).
 *
 * @example
 * const html = renderNotSignedInHtml({ signInURL, messages, lang, dir, styleNonce }, config.branding);
 */
export function renderNotSignedInHtml(
  input: { signInURL: string; messages: Messages; lang: string; dir: 'ltr' | 'rtl'; styleNonce: string },
  branding: ResolvedConfig['branding'],
): string {
  const m = input.messages;
  const content = `<h1>${escapeHTML(m.accountTitle)}</h1>
<p class="lead">${escapeHTML(m.accountNotSignedIn)}</p>
<p><a href="${escapeHTML(input.signInURL)}">${escapeHTML(m.signIn)}</a></p>`;
  return renderPageHtml({ title: m.accountTitle, content, styleNonce: input.styleNonce, branding, lang: input.lang, dir: input.dir });
}
