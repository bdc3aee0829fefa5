/**
 * The console's page frame: the login page's layout (language and direction) and security headers (nonce CSP, frame-ancestors 'none',
 * no-store), a wider card for tables, and the navigation of a signed-in operator. No script on any page.
 */
import type { ResolvedConfig } from '../config.js';
import { escapeHTML, isolateHTML } from '../authorize/pages/escape-html.js';
import { renderPageHtml } from '../authorize/pages/layout.js';
import { logoSources } from '../authorize/pages/logo-policy.js';
import { createStyleNonce, htmlResponse } from '../authorize/pages/security-headers.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import type { ConsoleLocale } from './messages/console-locale.js';
import { fillMessage } from './messages/console-locale.js';
import type { ConsoleMessages } from './messages/console-messages.js';
import type { OperatorSession } from './operator-session.js';

/** What every console page and action is given. */
export interface ConsoleCall {
  request: SentinelRequest;
  locale: ConsoleLocale;
  /** The console's path as the browser sees it (the host's mount prefix included), without a trailing slash. */
  base: string;
  /** The signed-in operator, on account pages. */
  operator?: OperatorSession | undefined;
}

// Wider than the login card (tables need room), still one column on a phone; tables scroll inside their box.
const CONSOLE_STYLES = `
main{max-width:68rem}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;padding:0;margin:0 0 1rem}
nav a{color:var(--brand);font-weight:600}
nav a[aria-current="page"]{color:var(--text);text-decoration:none}
.who{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;color:var(--muted);font-size:.875rem;margin:0 0 1rem}
.who form{margin:0}
.actions button{flex:0 1 auto}
.who button,.inline button,.row button{flex:none;padding:.375rem .75rem}
.table{overflow-x:auto;margin:0 0 1.5rem}
table{border-collapse:collapse;width:100%;font-size:.9375rem}
caption{text-align:start;font-weight:600;margin:0 0 .5rem}
th,td{text-align:start;padding:.5rem;border-bottom:1px solid var(--card-border);vertical-align:top;overflow-wrap:normal}
.time{white-space:nowrap}
td code,p code,dd code{overflow-wrap:anywhere}
textarea,select{display:block;width:100%;font:inherit;padding:.625rem .75rem;margin:0 0 1rem;color:var(--text);
  background:var(--surface);border:1px solid var(--border);border-radius:.5rem}
textarea:focus,select:focus{outline:3px solid var(--focus);outline-offset:2px}
.hint{color:var(--muted);font-size:.875rem;margin:-.75rem 0 1rem}
.notice{border:1px solid var(--brand);border-radius:.5rem;padding:.75rem;margin:0 0 1rem;font-weight:600}
.secret{font-family:ui-monospace,monospace;font-size:1rem;padding:.75rem;border:1px dashed var(--border);border-radius:.5rem;
  overflow-wrap:anywhere;margin:0 0 1rem}
.inline{display:inline-flex;margin:0}
.row{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end}
.row>div{flex:1 1 12rem}
.row .actions{margin:0 0 1rem}
.danger{background:var(--error);color:#fff;border:1px solid var(--error)}
section{margin:0 0 2rem}
h2{font-size:1.125rem;margin:0 0 .75rem}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}
dd{margin:0}
`;

/** A message of the page's language with its placeholders filled in (not yet escaped). */
export function text(call: ConsoleCall, key: keyof ConsoleMessages, values: Readonly<Record<string, string>> = {}): string {
  return fillMessage(call.locale.messages[key], values);
}

/**
 * A message as HTML: escaped, with each value isolated (`isolateHTML`), for messages that name a user, an account,
 * an app or a key, so that the name reads the same, and leaves the sentence alone, whatever its script or direction.
 */
export function textHTML(call: ConsoleCall, key: keyof ConsoleMessages, values: Readonly<Record<string, string>>): string {
  const isolated = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, isolateHTML(value)]));
  return fillMessage(escapeHTML(call.locale.messages[key]), isolated);
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(call: ConsoleCall): string {
  return call.operator === undefined ? '' : `<input type="hidden" name="csrf" value="${escapeHTML(call.operator.csrf)}">`;
}

/** The path of an account page: `{base}/{accountId}/{rest}`. */
export function accountPath(call: ConsoleCall, rest: string): string {
  const accountId = call.operator?.accountId ?? '';
  return `${call.base}/${encodeURIComponent(accountId)}/${rest}`;
}

type Section = 'apps' | 'keys' | 'sessions' | 'audit';

function navigation(call: ConsoleCall, current: Section | undefined): string {
  const operator = call.operator;
  if (operator === undefined) return '';
  const links: [Section, keyof ConsoleMessages][] = [
    ['apps', 'navApps'],
    ['keys', 'navKeys'],
    ['sessions', 'navSessions'],
    ['audit', 'navAudit'],
  ];
  const items = links
    .map(
      ([section, key]) =>
        `<li><a href="${escapeHTML(accountPath(call, section))}"${section === current ? ' aria-current="page"' : ''}>${escapeHTML(text(call, key))}</a></li>`,
    )
    .join('');
  const role = text(call, operator.role === 'admin' ? 'roleAdmin' : 'roleViewer');
  const who = textHTML(call, 'signedInAs', { user: operator.userId, role, account: operator.accountId });
  return `<nav aria-label="${escapeHTML(text(call, 'consoleTitle'))}"><ul>${items}</ul></nav>
<div class="who"><span>${who}</span><form method="post" action="${escapeHTML(`${call.base}/sign-out?account=${encodeURIComponent(operator.accountId)}`)}">${csrfField(call)}<button type="submit" class="secondary">${escapeHTML(text(call, 'signOut'))}</button></form></div>
${operator.role === 'viewer' ? `<p class="notice">${escapeHTML(text(call, 'viewerNotice'))}</p>` : ''}`;
}

/** Inputs of {@link consolePage}. */
export interface ConsolePageInput {
  title: string;
  /** The heading as HTML, when it differs from the escaped title (a name in it isolated with `textHTML`). */
  heading?: string | undefined;
  /** The page's own HTML below the heading (callers escape what they interpolate). */
  content: string;
  section?: Section | undefined;
  status?: number | undefined;
  headers?: Record<string, string | string[]> | undefined;
}

/**
 * A console page as a response, with the login page's security headers.
 *
 * @example
 * return consolePage(config, call, { title: text(call, 'appsTitle'), section: 'apps', content });
 */
export function consolePage(config: ResolvedConfig, call: ConsoleCall, input: ConsolePageInput): SentinelResponse {
  const styleNonce = createStyleNonce();
  const html = renderPageHtml({
    title: input.title,
    content: `${navigation(call, input.section)}<h1>${input.heading ?? escapeHTML(input.title)}</h1>\n${input.content}`,
    styleNonce,
    branding: config.branding,
    lang: call.locale.tag,
    dir: call.locale.dir,
    styles: CONSOLE_STYLES,
  });
  // The layout shows the branding's logo, so its origin must be an image source, as on the login page.
  return htmlResponse(input.status ?? 200, html, { styleNonce, imgSrc: logoSources(config.branding) }, input.headers);
}

/** An instant as the console shows it: `2026-11-26 20:54:16 UTC`. */
export function shownTime(at: number | string): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? '–' : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A paragraph of the page (escaped). */
export function paragraph(value: string, className?: string): string {
  return `<p${className === undefined ? '' : ` class="${className}"`}>${escapeHTML(value)}</p>`;
}

/** "Previous page / Page n of m / Next page" links; empty for one page. */
export function pager(call: ConsoleCall, path: string, query: URLSearchParams, page: number, pages: number): string {
  if (pages <= 1) return '';
  const link = (to: number, key: 'previous' | 'next'): string => {
    const next = new URLSearchParams(query);
    next.set('page', String(to));
    return `<a href="${escapeHTML(`${path}?${next.toString()}`)}">${escapeHTML(text(call, key))}</a>`;
  };
  const parts = [
    ...(page > 1 ? [link(page - 1, 'previous')] : []),
    escapeHTML(text(call, 'pageOf', { page: String(page), pages: String(pages) })),
    ...(page < pages ? [link(page + 1, 'next')] : []),
  ];
  return `<nav aria-label="${escapeHTML(text(call, 'pageOf', { page: String(page), pages: String(pages) }))}"><p>${parts.join(' · ')}</p></nav>`;
}
