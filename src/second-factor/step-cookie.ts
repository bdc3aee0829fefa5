/**
 * The cookie that ties a sign-in parked at a step to the browser that passed the password. The interaction id is in
 * the login page's URL, and whoever started the authorization request holds it: they may send the real login link to
 * someone else. Without this tie, once that person passed the password, the sender could open the step page from
 * their own browser, read its CSRF token and answer the step — "Not now" on the passkey offer handed them the
 * session and the code, and the offer itself let them add their own passkey to the other person's account.
 *
 * The cookie holds a random value and the pending record its digest. One value serves every sign-in of the browser
 * (two tabs signing in at once each keep theirs), and it carries nothing but that tie.
 */
import { serialize } from 'cookie';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { cookiePath } from '../authorize/state/session-cookie.js';
import { readRandomCookie } from '../http/cookies.js';
import { digest, digestsEqual, randomSecret } from '../lib/random-secrets.js';

function cookieName(context: SentinelContext): string {
  return `${context.config.session.cookieName}_step`;
}

/** The value the browser holds, when it is one this module made (anything else is replaced, never taken). */
function presented(context: SentinelContext, request: SentinelRequest): string | undefined {
  return readRandomCookie(request, cookieName(context));
}

/**
 * The tie for a sign-in about to be parked: the digest the pending record keeps, and the `Set-Cookie` that gives
 * (or renews) the browser its value, living as long as an interaction.
 *
 * @example
 * const tie = browserTie(context, request, interaction.record.mountPath);
 * await startPending(context, interaction.id, { ...subject, stage: 'totp', browser: tie.digest });
 * return redirect(303, stepURL, { 'set-cookie': tie.cookie });
 */
export function browserTie(
  context: SentinelContext,
  request: SentinelRequest,
  mountPath: string | undefined,
): { digest: string; cookie: string } {
  const value = presented(context, request) ?? randomSecret();
  const cookie = serialize(cookieName(context), value, {
    httpOnly: true,
    secure: !context.config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    maxAge: context.config.interactionTtl,
  });
  return { digest: digest(value), cookie };
}

/**
 * Whether the request comes from the browser whose tie is `expected` (a pending record's digest).
 *
 * @example
 * if (!fromTiedBrowser(context, request, pending.browser)) throw expiredSignIn();
 */
export function fromTiedBrowser(context: SentinelContext, request: SentinelRequest, expected: string): boolean {
  const value = presented(context, request);
  return value !== undefined && digestsEqual(digest(value), expected);
}
