/**
 * The cookie that ties an interaction's login form to the browser the login page was served to, against login CSRF
 * (RFC 6749 §10.12: a forged post signs the victim's browser into the attacker's account).
 *
 * The form's CSRF token alone does not do it: it belongs to the interaction, and whoever starts an authorization
 * request reads it from their own copy of the page. The cross-site check (`cross-site.ts`) refuses the forged post on
 * browsers that send `Sec-Fetch-Site`, and on those that send the attacker's `Origin`; but a browser without
 * `Sec-Fetch-Site` (Safari before 16.4) sends `Origin: null` from a sandboxed frame or a `no-referrer` page, and so
 * does it on our own form (our pages are `no-referrer`), so that header cannot tell them apart. The cookie can: the
 * page sets it, the interaction keeps its digest, and it is SameSite=Lax, so a cross-site post never carries it.
 *
 * Serving the page to a browser whose cookie is not the one the interaction keeps re-ties the interaction to that
 * browser with a new CSRF token (`bindInteraction`): the link still works when it is opened elsewhere, and a token
 * read before is worthless. One cookie per browser, shared by its interactions (two tabs signing in at once keep both
 * ties), living as long as an interaction; its value is taken over from the browser when it is one the service
 * makes, since whoever could plant it (a sibling host) could as well plant a session cookie of their own.
 */
import { serialize } from 'cookie';
import type { SentinelContext } from '../../http/context.js';
import { headerValue, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { readRandomCookie } from '../../http/cookies.js';
import { OAuthError } from '../../errors.js';
import { digest, digestsEqual, randomSecret } from '../../lib/random-secrets.js';
import { cookiePath } from './session-cookie.js';
import { bindInteraction, type InteractionRecord } from './interaction.js';

function cookieName(context: SentinelContext): string {
  return `${context.config.session.cookieName}_login`;
}

/**
 * Ties the interaction to the requesting browser before its login page is served: the record to render (with the
 * CSRF token of this tie), and the `Set-Cookie` the page must carry. `null` when the interaction is gone.
 *
 * @example
 * const tie = await tieLoginPage(context, request, interaction.id, interaction.record.mountPath);
 * if (tie === null) throw expired();
 * return withLoginCookie(await loginPageResponse(context, interaction.id, tie.record, { request }), tie.cookie);
 */
export async function tieLoginPage(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  mountPath: string | undefined,
): Promise<{ record: InteractionRecord; cookie: string } | null> {
  const value = readRandomCookie(request, cookieName(context)) ?? randomSecret();
  const record = await bindInteraction(context, interactionId, digest(value));
  if (record === null) return null;
  const cookie = serialize(cookieName(context), value, {
    httpOnly: true,
    secure: !context.config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    // Renewed on every page it serves, so it outlives the interaction it was last served for.
    maxAge: context.config.interactionTtl,
  });
  return { record, cookie };
}

/**
 * `response` with the login-page cookie added to its `Set-Cookie` lines.
 *
 * @example
 * return withLoginCookie(page, tie.cookie);
 */
export function withLoginCookie(response: SentinelResponse, cookie: string): SentinelResponse {
  const existing = response.headers['set-cookie'];
  const lines = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  return { ...response, headers: { ...response.headers, 'set-cookie': [...lines, cookie] } };
}

/**
 * Refuses (403, the out-of-date form's message) a post of the login form whose browser signals cannot tell a
 * same-origin post from a forged one — no `Sec-Fetch-Site` and `Origin: null` — unless it carries the cookie of the
 * browser the interaction's page was served to. `Sec-Fetch-Site` and a real `Origin` are set by the browser, never by a
 * page, so `cross-site.ts` has already decided those; a request with neither comes from no browser, and carries no
 * victim's cookies.
 *
 * @example
 * assertLoginBrowser(context, request, interaction.record); // after the cross-site check and the CSRF token
 */
export function assertLoginBrowser(context: SentinelContext, request: SentinelRequest, record: InteractionRecord): void {
  if (headerValue(request, 'sec-fetch-site') !== undefined || headerValue(request, 'origin') !== 'null') return;
  const value = readRandomCookie(request, cookieName(context));
  if (value !== undefined && record.browser !== undefined && digestsEqual(digest(value), record.browser)) return;
  throw new OAuthError('invalid_request', 'The sign-in form is out of date. Go back to the application and start again.', {
    status: 403,
  });
}
