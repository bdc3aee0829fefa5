/**
 * The CSRF token of the code entry form (RFC 8628 §3.3, RFC 6749 §10.12). The form comes before any sign-in, so
 * there is no session or interaction record to keep a token in, and storing one per page view would let anyone fill
 * the store with GETs. The token is bound to a cookie instead (double submit): the page gives the browser a random
 * value in an HttpOnly, SameSite=Lax cookie scoped to the verification pages, and its form carries a digest of that
 * value. A post is taken only when the two match.
 *
 * Another site cannot read the cookie, nor make the browser send it with a cross-site post (SameSite=Lax), so it
 * cannot post a matching pair: a forged code entry is refused before it spends a slot of the throttle it shares with
 * the password (a victim's address locked out of signing in) or sends the browser to a sign-in it did not ask for.
 * One value serves every page of the browser, so two tabs keep theirs, and it carries nothing but that tie.
 */
import { serialize } from 'cookie';
import type { SentinelContext } from '../http/context.js';
import { readRandomCookie } from '../http/cookies.js';
import type { SentinelRequest } from '../http/messages.js';
import { routePath } from '../http/route-paths.js';
import { constantTimeEqual, digest, randomSecret } from '../lib/random-secrets.js';

function cookieName(context: SentinelContext): string {
  return `${context.config.session.cookieName}_device`;
}

/** The value the browser holds, when it is one this module made (anything else is replaced, never taken). */
function presented(context: SentinelContext, request: SentinelRequest): string | undefined {
  return readRandomCookie(request, cookieName(context));
}

/** The form's token for a cookie value: its digest, so the page never shows the cookie itself. */
function tokenOf(value: string): string {
  return digest(`device-entry-form\n${value}`);
}

/**
 * The token for a code entry page and the `Set-Cookie` that gives (or renews) the browser the value it is bound to,
 * scoped to the verification pages (`…/device`, and so `…/device/confirm`, whose answers may show the form again)
 * and living as long as a user code (`deviceFlow.expiresIn`).
 *
 * @example
 * const tie = entryFormTie(context, request, accountId);
 * return htmlResponse(200, formWith(tie.token), policy, { 'set-cookie': tie.cookie });
 */
export function entryFormTie(context: SentinelContext, request: SentinelRequest, accountId: string): { token: string; cookie: string } {
  const value = presented(context, request) ?? randomSecret();
  const cookie = serialize(cookieName(context), value, {
    httpOnly: true,
    secure: !context.config.insecureLoopback,
    sameSite: 'lax',
    path: `${request.mountPath ?? ''}${routePath(context.config, 'device', { accountId })}`,
    // As long as a user code lasts: a page kept open longer has no code left to take.
    maxAge: context.config.deviceFlow.expiresIn,
  });
  return { token: tokenOf(value), cookie };
}

/**
 * Whether a posted code entry carries the token of the cookie the browser sends with it.
 *
 * @example
 * if (!entryFormTokenMatches(context, request, single(form, 'csrf_token'))) throw formOutOfDate();
 */
export function entryFormTokenMatches(context: SentinelContext, request: SentinelRequest, token: string | undefined): boolean {
  const value = presented(context, request);
  return value !== undefined && token !== undefined && constantTimeEqual(token, tokenOf(value));
}
