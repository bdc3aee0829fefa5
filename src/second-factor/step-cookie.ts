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
 *
 * Every request to the service's path carries these cookies, and a browser keeps only so many per site (RFC 6265
 * §6.1 asks for at least 50; Chrome and Firefox keep 180 and then evict): they must not pile up. A sign-in that ends
 * (signed in, cancelled, or its link found gone) removes its own, and a new tie removes all but the newest
 * {@link MAX_STEP_COOKIES} − 1 others the browser holds (sign-ins left at a step, each behind a right password), so
 * the service never makes a browser hold more than that many, whatever the user does within `interactionTtl`.
 */
import { parse, serialize } from 'cookie';
import type { SentinelContext } from '../http/context.js';
import { headerValue, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { cookiePath } from '../authorize/state/session-cookie.js';
import { readCookie, readRandomCookie } from '../http/cookies.js';
import { digest, digestsEqual, randomSecret } from '../lib/random-secrets.js';

/**
 * The most step cookies a browser holds from the service: sign-ins parked at a step at once in one browser (tabs).
 * Far under any browser's per-site limit, so they never push out the session cookie (nor the host's own cookies).
 */
export const MAX_STEP_COOKIES = 8;

function namePrefix(context: SentinelContext): string {
  return `${context.config.session.cookieName}_step_`;
}

/** The tie's cookie of one interaction: the session cookie's name, `_step_`, and 16 characters of a digest of the id. */
function cookieName(context: SentinelContext, interactionId: string): string {
  return `${namePrefix(context)}${digest(interactionId).slice(0, 16)}`;
}

/** What follows the prefix in the name of a step cookie the service made: 16 base64url characters of a digest. */
const NAME_SUFFIX = /^[A-Za-z0-9_-]{16}$/;

/** `Set-Cookie` that removes the step cookie `name` (same attributes as the one that set it, expired). */
function removal(context: SentinelContext, name: string, mountPath: string | undefined): string {
  return serialize(name, '', {
    httpOnly: true,
    secure: !context.config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    expires: new Date(0),
  });
}

/**
 * Removals for the other step cookies the request carries beyond the newest `MAX_STEP_COOKIES - 1`. Browsers send
 * cookies of one path oldest first (RFC 6265 §5.4), so the first ones go: the sign-ins left longest ago. Only names
 * of the shape the service makes count: the `Cookie` header is the client's to write, and a name the serializer
 * refuses (a space, a byte outside ASCII) would throw while the removal is written, a 500 after a right password.
 */
function prunedOthers(context: SentinelContext, request: SentinelRequest, keep: string, mountPath: string | undefined): string[] {
  const header = headerValue(request, 'cookie');
  if (header === undefined) return [];
  const prefix = namePrefix(context);
  const others = Object.keys(parse(header)).filter(
    (name) => name.startsWith(prefix) && name !== keep && NAME_SUFFIX.test(name.slice(prefix.length)),
  );
  const excess = others.length - (MAX_STEP_COOKIES - 1);
  return excess > 0 ? others.slice(0, excess).map((name) => removal(context, name, mountPath)) : [];
}

/**
 * The tie for a sign-in about to be parked: the digest the pending record keeps, and the `Set-Cookie` lines: the
 * one that gives the browser a fresh value for this interaction, living as long as an interaction, and the removals
 * of the oldest other step cookies beyond {@link MAX_STEP_COOKIES}.
 *
 * @example
 * const tie = browserTie(context, request, interaction.id, interaction.record.mountPath);
 * await startPending(context, interaction.id, { ...subject, stage: 'totp', browser: tie.digest });
 * return redirect(303, stepURL, { 'set-cookie': tie.cookies });
 */
export function browserTie(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  mountPath: string | undefined,
): { digest: string; cookies: string[] } {
  const value = randomSecret();
  const name = cookieName(context, interactionId);
  const cookie = serialize(name, value, {
    httpOnly: true,
    secure: !context.config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    maxAge: context.config.interactionTtl,
  });
  return { digest: digest(value), cookies: [...prunedOthers(context, request, name, mountPath), cookie] };
}

/**
 * The `Set-Cookie` that removes the step cookie of a sign-in that has ended, when the request carries one
 * (`undefined` otherwise: a sign-in without a step sets no cookie and removes none).
 *
 * @example
 * throw expiredSignIn(stepTieRemoval(context, request, interactionId, request.mountPath));
 */
export function stepTieRemoval(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  mountPath: string | undefined,
): string | undefined {
  const name = cookieName(context, interactionId);
  return readCookie(request, name) === null ? undefined : removal(context, name, mountPath);
}

/**
 * `response` with the removal of the interaction's step cookie added to its `Set-Cookie` lines, when the request
 * carries one: the answer that ends a sign-in (signed in, cancelled).
 *
 * @example
 * return withStepTieRemoved(context, request, interactionId, record.mountPath, await signedInResponse(…));
 */
export function withStepTieRemoved(
  context: SentinelContext,
  request: SentinelRequest,
  interactionId: string,
  mountPath: string | undefined,
  response: SentinelResponse,
): SentinelResponse {
  const removed = stepTieRemoval(context, request, interactionId, mountPath);
  if (removed === undefined) return response;
  const existing = response.headers['set-cookie'];
  const lines = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  return { ...response, headers: { ...response.headers, 'set-cookie': [...lines, removed] } };
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
