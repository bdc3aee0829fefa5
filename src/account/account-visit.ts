/**
 * Who is looking at the account page: the device session of the login page (the same cookie, the same record), so
 * signing in here is signing in there and ending that session signs the page out too. A browser without a session
 * goes through the login page (password, TOTP, passkeys: whatever the account's users have) in an interaction that
 * returns to the account page instead of to an app, and issues no code.
 *
 * The page's CSRF token is derived from the session id (a SHA-256 of it under a label of its own), so it needs no
 * stored record, changes with every new session, and only a page that could read the HttpOnly cookie's value (none
 * can) or the page itself (same origin) knows it.
 */
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { routePath, routeUrl } from '../http/route-paths.js';
import { constantTimeEqual, digest } from '../lib/random-secrets.js';
import type { AuthorizationRequest } from '../authorize/request/validate-request.js';
import type { AcrValue } from '../assurance/levels.js';
import { createInteraction, loginPageURL } from '../authorize/state/interaction.js';
import { clientIP } from '../http/client-ip.js';
import { takeInteractionSlot } from '../authorize/state/interaction-bound.js';
import { readSessionCookie } from '../authorize/state/session-cookie.js';
import { type LiveSession, readSession, type SessionRecord, touchSession } from '../authorize/state/session.js';
import { requestUiLocales } from '../i18n/page-locale.js';
import { keepUiLocales } from './account-links.js';
import { loadUserClaims } from '../userinfo/claims.js';

/**
 * The client id the account page's sign-in carries in its interaction and events. It contains `/`, which no
 * registered app's id may, so it can never be mistaken for an app; no code is ever issued for it.
 */
export const ACCOUNT_PAGE_CLIENT_ID = 'sentinel/account';

/** A signed-in visit of the account page. */
export interface AccountVisit {
  accountId: string;
  sessionId: string;
  session: SessionRecord;
  /** The page's CSRF token for this session. */
  csrfToken: string;
}

/**
 * The CSRF token of the account page's forms for one session.
 *
 * @example
 * accountCsrfToken(sessionId) // 43 base64url characters
 */
export function accountCsrfToken(sessionId: string): string {
  return digest(`sentinel account page\n${sessionId}`);
}

/**
 * Whether a posted token is the session's one (constant time).
 *
 * @example
 * if (!csrfTokenMatches(visit, single(form, 'csrf_token'))) throw formOutOfDate();
 */
export function csrfTokenMatches(visit: AccountVisit, presented: string | undefined): boolean {
  return presented !== undefined && constantTimeEqual(presented, visit.csrfToken);
}

/**
 * The account page's path as the browser sees it (the host's mount prefix included).
 *
 * @example
 * accountPagePath(context, request.mountPath, '123456') // '/sentinel/api/account/123456/account'
 */
export function accountPagePath(context: SentinelContext, mountPath: string | undefined, accountId: string): string {
  return `${mountPath ?? ''}${routePath(context.config, 'account', { accountId })}`;
}

/**
 * Whether the host's `users.claims` hook says the visit's user is gone (`null`: deleted, or disabled by the host), as
 * UserInfo, the token endpoint and the passkey sign-in read it. Without the hook no user is gone; a throwing hook
 * propagates (500, and nothing changes).
 *
 * @example
 * if (await userGone(context, visit)) throw refuse('user gone');
 */
export async function userGone(context: SentinelContext, visit: AccountVisit): Promise<boolean> {
  const { accountId, session } = visit;
  return (await loadUserClaims(context, { accountId, userId: session.userId, scopes: ['openid'] })) === null;
}

/** A visit read without extending its session, with the session as read (for {@link touchSession} once it is used). */
export interface UnusedVisit {
  visit: AccountVisit;
  live: LiveSession;
}

/**
 * The signed-in visit of this request without extending its session, or `null` without a live session of the
 * account. A post reads it this way, so that one refused for its CSRF token changes nothing, the session's idle
 * timeout included: a page on another site could otherwise keep a forgotten session alive by posting to it.
 *
 * @example
 * const unused = await peekVisit(context, request, accountId);
 * if (unused !== null && tokenIsRight) await touchSession(context, unused.live);
 */
export async function peekVisit(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<UnusedVisit | null> {
  const sessionId = readSessionCookie(context, request);
  if (sessionId === null) return null;
  const live = await readSession(context, sessionId, accountId);
  if (live === null) return null;
  return { visit: { accountId, sessionId, session: live.record, csrfToken: accountCsrfToken(sessionId) }, live };
}

/**
 * The signed-in visit of this request, or `null` without a live session of the account. Like `/authorize`, reading
 * the session extends its idle timeout.
 *
 * @example
 * const visit = await currentVisit(context, request, accountId);
 */
export async function currentVisit(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<AccountVisit | null> {
  const unused = await peekVisit(context, request, accountId);
  if (unused === null) return null;
  return (await touchSession(context, unused.live)) ? unused.visit : null;
}

/**
 * Sends the browser to the login page, in an interaction that comes back to the account page; with `acr`, a sign-in
 * that must reach that level; with `fresh`, one made during this interaction (`prompt=login`), which is what a
 * host's own login page (`login.url`) is told and `completeLogin()` enforces: an older sign-in handed over would
 * come back as old as it was, and the page would ask again. `browserSession`, the digest of the visit's session, is
 * kept with the interaction as /authorize keeps its own: `completeLogin()` has no cookie, and its new session must
 * replace that one (carry it over, or retire another user's) as the login form's does.
 *
 * @example
 * if (visit === null) return signInRedirect(context, request, accountId);
 */
export async function signInRedirect(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  step: { acr?: AcrValue | undefined; fresh?: boolean | undefined; browserSession?: string | undefined } = {},
): Promise<SentinelResponse> {
  const { acr, fresh = false, browserSession } = step;
  if (!(await context.apps.hasAccount(accountId))) {
    throw new OAuthError('invalid_request', 'The account in this link is unknown.', { status: 401 });
  }
  context.observation?.noteAccount(accountId);
  const uiLocales = requestUiLocales(request);
  const authorization: AuthorizationRequest = {
    accountId,
    clientId: ACCOUNT_PAGE_CLIENT_ID,
    // The page itself: the login form's CSP allows posting to the origin of this URI, which is the service's own.
    redirectUri: routeUrl(context.config, 'account', { accountId }),
    redirectUriInRequest: false,
    iss: context.accountIssuer(accountId),
    ...(uiLocales.length === 0 ? {} : { uiLocales }),
    // A step-up from the page (adding a passkey): the login page asks what reaches this level.
    ...(acr === undefined ? {} : { acr }),
    ...(fresh ? { prompt: ['login' as const] } : {}),
  };
  // Back in the language the page was asked in, not the browser's.
  const returnTo = keepUiLocales(accountPagePath(context, request.mountPath, accountId), request);
  // Counted per client address, as /authorize's (interaction-bound.ts): a visit without a session stores one. An
  // address over it gets a 429 page with Retry-After; there is no app to send it back to.
  const admit = () => takeInteractionSlot(context, clientIP(context.config, request));
  const interactionId = await createInteraction(context, authorization, request.mountPath, undefined, returnTo, browserSession, admit);
  return redirect(303, loginPageURL(context, request.mountPath, accountId, interactionId));
}
