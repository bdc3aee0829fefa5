/**
 * The demo application's pages as HTML: home before sign-in, the signed-in page (who signed in, the tokens'
 * claims, the buttons and what the last one did), the signed-out page and the failures. Every button is a form
 * that posts with the session's CSRF token; nothing needs JavaScript.
 */
import type { SentinelResponse } from 'sentinel-idp';
import { decodeClaims, TIME_CLAIMS, utc } from './claims.js';
import { demoPage, escapeHTML } from './page.js';
import type { ActionResult, DemoSession } from './session.js';

/** Where the other pages of the demo are, as links. */
export interface DemoLinks {
  /** The end user's account page (`account: { enabled: true }`). */
  account?: string | undefined;
  /** The operator console (`sentinel-idp/console`). */
  console?: string | undefined;
  /** The account's OpenID Provider metadata. */
  discovery: string;
}

/** What every view needs. */
export interface ViewContext {
  links: DemoLinks;
  /** The account the console's sign-in asks for: its first page is a blank "Account id" field. */
  accountId: string;
  /** The consumer the consumer-bound token is asked for. */
  consumerId: string;
  clientId: string;
  /** The service's end_session endpoint and the registered post_logout_redirect_uri. */
  endSession: string;
  postLogoutRedirectUri: string;
  footer?: string | undefined;
}

function linkList(links: DemoLinks, accountId: string): string {
  const items = [
    links.account === undefined
      ? ''
      : `<li><a href="${escapeHTML(links.account)}">Your account page</a>: your sessions, passkeys and connected apps</li>`,
    links.console === undefined
      ? ''
      : `<li><a href="${escapeHTML(links.console)}">Operator console</a>: apps, keys, sessions and audit events (account id <strong>${escapeHTML(accountId)}</strong>, then the demo user: its admin)</li>`,
    `<li><a href="${escapeHTML(links.discovery)}">Discovery document</a>: the account's OpenID Provider metadata</li>`,
  ];
  return `<section aria-labelledby="elsewhere"><h2 id="elsewhere">Also on this server</h2><ul class="links">${items.join('')}</ul></section>`;
}

/**
 * The home page of a browser that is not signed in.
 * @example return homeView(context);
 */
export function homeView(context: ViewContext): SentinelResponse {
  const content = `<h1>Sign in to see what an app receives</h1>
<p class="lead">This page plays an application registered at the platform. Sign in through the platform's login page
and come back here to see what the application receives: who signed in, the claims of the ID token and of the access
token, and what those tokens can do.</p>
<p><a class="button primary" href="/signin">Sign in with the platform</a></p>
<p class="lead">Username <strong>demo</strong>; the password is printed in the terminal where <code>npm start</code> runs.</p>
${linkList(context.links, context.accountId)}`;
  return demoPage({ title: 'Demo client', content, footer: context.footer });
}

function claimsTable(id: string, caption: string, token: string | undefined): string {
  const claims = decodeClaims(token);
  if (claims === null) return '';
  const rows = Object.entries(claims)
    .map(([name, value]) => {
      const shown = typeof value === 'string' ? value : JSON.stringify(value);
      const time = TIME_CLAIMS.has(name) && typeof value === 'number' ? ` <small>(${escapeHTML(utc(value))})</small>` : '';
      return `<tr><th scope="row"><code>${escapeHTML(name)}</code></th><td><code>${escapeHTML(shown)}</code>${time}</td></tr>`;
    })
    .join('');
  return `<section class="table"><table id="${id}"><caption>${escapeHTML(caption)}</caption><thead><tr><th scope="col">claim</th><th scope="col">value</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function resultPanel(result: ActionResult | undefined): string {
  if (result === undefined) return '';
  const lines = result.lines.map((line) => `<p>${escapeHTML(line)}</p>`).join('');
  const exchange = result.exchange === undefined ? '' : `<pre>${escapeHTML(result.exchange)}</pre>`;
  return `<section id="result" class="result${result.ok ? '' : ' refused'}" role="status" aria-labelledby="result-title"><h2 id="result-title">${escapeHTML(result.title)}</h2>${lines}${exchange}</section>`;
}

function tryButton(action: string, label: string, explanation: string, csrf: string): string {
  return `<li><form method="post" action="/demo/${action}"><input type="hidden" name="csrf" value="${escapeHTML(csrf)}"><button type="submit" class="secondary">${escapeHTML(label)}</button></form><p>${explanation}</p></li>`;
}

/**
 * The signed-in page: the callback's answer and the home page of a signed-in browser.
 * @example return signedInView(context, session);
 */
export function signedInView(context: ViewContext, session: DemoSession, headers?: Record<string, string | string[]>): SentinelResponse {
  const consumer = `<code>${escapeHTML(context.consumerId)}</code>`;
  // RP-initiated logout: the ID token as the hint, posted (not in a URL) to the service on this origin.
  const signOut = `<form method="post" action="${escapeHTML(context.endSession)}">
<input type="hidden" name="id_token_hint" value="${escapeHTML(session.idToken)}">
<input type="hidden" name="client_id" value="${escapeHTML(context.clientId)}">
<input type="hidden" name="post_logout_redirect_uri" value="${escapeHTML(context.postLogoutRedirectUri)}">
<input type="hidden" name="state" value="${escapeHTML(session.logoutState)}">
<button type="submit" class="secondary">Sign out</button></form>`;
  const tries = [
    tryButton(
      'brand-tokens',
      'Call the brand-tokens API',
      `<code>GET /api/account/…/consumer/…/brand/tokens</code> for consumer ${consumer}, with the consumer-bound token when there is one, else with the access token.`,
      session.csrf,
    ),
    tryButton(
      'app-token',
      'Get a consumer-bound token',
      `The v2 app token: client credentials for consumer ${consumer}, the token that API accepts.`,
      session.csrf,
    ),
    tryButton(
      'refresh',
      'Refresh the tokens',
      'The refresh grant: a new access token and ID token, and the refresh token rotated.',
      session.csrf,
    ),
    tryButton('revoke', 'Revoke the grant', 'Revocation of the refresh token: the grant ends, and its access token with it.', session.csrf),
  ].join('');
  const content = `<h1>Signed in</h1>
<p class="lead">Signed in as <strong id="subject">${escapeHTML(session.userId)}</strong>, through the authorization code flow with PKCE.</p>
${resultPanel(session.result)}
<section aria-labelledby="try"><h2 id="try">Try the tokens</h2><ul class="tries">${tries}</ul></section>
${claimsTable('id-token', 'ID token claims', session.idToken)}
${claimsTable('access-token', 'Access token claims', session.accessToken)}
${claimsTable('consumer-token', 'Consumer-bound token claims', session.consumerToken)}
${linkList(context.links, context.accountId)}`;
  return demoPage({ title: 'Signed in', content, headerEnd: signOut, footer: context.footer, headers });
}

/**
 * The page after RP-initiated logout.
 * @example return signedOutView(context, clearCookie);
 */
export function signedOutView(context: ViewContext, headers: Record<string, string>): SentinelResponse {
  const content = `<h1>You are signed out</h1>
<p class="lead">The platform ended the session and sent the browser back here; the application forgot its tokens.</p>
<p><a class="button primary" href="/signin">Sign in with the platform</a></p>
${linkList(context.links, context.accountId)}`;
  return demoPage({ title: 'Signed out', content, footer: context.footer, headers });
}

/**
 * A failure: what went wrong and the way back.
 * @example return failureView(context, 400, 'Sign-in failed', 'The state does not match.');
 */
export function failureView(
  context: ViewContext,
  status: number,
  title: string,
  message: string,
  headers?: Record<string, string>,
): SentinelResponse {
  const content = `<h1>${escapeHTML(title)}</h1>
<p class="error" role="alert">${escapeHTML(message)}</p>
<p><a href="/">Start again</a></p>`;
  return demoPage({ title, content, status, footer: context.footer, headers });
}
