/**
 * The cookie that ties a sign-in parked at a step to the browser that passed the password. The interaction id is in
 * the login page's URL, and whoever started the authorization request holds it: they may send the real login link to
 * someone else. Without this tie, once that person passed the password, the sender could open the step page from
 * their own browser, read its CSRF token and answer the step — "Not now" on the passkey offer handed them the
 * session and the code, and the offer itself let them add their own passkey to the other person's account.
 *
 * The cookie holds a random value made when the sign-in is parked, never one the browser already had, and the
 * pending record its digest. A value taken over from the request would let whoever can plant a cookie in the
 * victim's browser (a sibling host of the same site, or a network attacker on a plain-http one: "cookie tossing")
 * choose the tie and answer the step from their own browser. Each interaction has a cookie of its own (its name
 * carries a digest of the interaction id), so two tabs signing in at once each keep theirs. It carries nothing
 * but that tie.
 */
import { serialize } from 'cookie';
import type { SentinelContext } from '../http/context.js';
import type { SentinelRequest } from '../http/messages.js';
import { cookiePath } from '../authorize/state/session-cookie.js';
import { readRandomCookie } from '../http/cookies.js';
import { digest, digestsEqual, randomSecret } from '../lib/random-secrets.js';

/** The tie's cookie of one interaction: the session cookie's name, `_step_`, and 16 characters of a digest of the id. */
function cookieName(context: SentinelContext, interactionId: string): string {
  return `${context.config.session.cookieName}_step_${digest(interactionId).slice(0, 16)}`;
}

/**
 * The tie for a sign-in about to be parked: the digest the pending record keeps, and the `Set-Cookie` that gives
 * the browser a fresh value for this interaction, living as long as an interaction.
 *
 * @example
 * const tie = browserTie(context, interaction.id, interaction.record.mountPath);
 * await startPending(context, interaction.id, { ...subject, stage: 'totp', browser: tie.digest });
 * return redirect(303, stepURL, { 'set-cookie': tie.cookie });
 */
export function browserTie(
  context: SentinelContext,
  interactionId: string,
  mountPath: string | undefined,
): { digest: string; cookie: string } {
  const value = randomSecret();
  const cookie = serialize(cookieName(context, interactionId), value, {
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
 * if (!fromTiedBrowser(context, request, interactionId, pending.browser)) throw expiredSignIn();
 */
export function fromTiedBrowser(context: SentinelContext, request: SentinelRequest, interactionId: string, expected: string): boolean {
  const value = readRandomCookie(request, cookieName(context, interactionId));
  return value !== undefined && digestsEqual(digest(value), expected);
}
