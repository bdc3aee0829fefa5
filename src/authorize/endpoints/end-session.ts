/**
 * `GET|POST {basePath}/api/account/{accountId}/end_session` — RP-Initiated Logout 1.0: the app sends the browser
 * here with `id_token_hint`, `client_id`, `post_logout_redirect_uri` and `state`.
 *
 * - The request is tied to the browser's session when `id_token_hint` is an ID token of this account for the
 *   session's user and authentication (`sub` and `auth_time` match), or for an earlier sign-in of the same user in
 *   this browser that the session carries (its `sid`): the session ends at once.
 * - Otherwise the user confirms on a page whose form carries a CSRF token bound to the session being ended, and
 *   is accepted only same-origin: no link elsewhere can sign a user out unasked. Each pending confirmation is
 *   stored, so it counts against the client address's `interactionsPerAddress` (429 past it, nothing stored).
 * - A hint naming (by `sid`) a session that lapsed while grants issued through it live ends those grants and tells
 *   their apps (`endLapsedSession`): at once when the browser has no live session, once the user confirms when it
 *   holds another one.
 * - The browser goes back to `post_logout_redirect_uri` (with `state`) only when the app registered it (exact
 *   match, §3); else it sees the "signed out" page. An unregistered value is an error page, never a redirect. A
 *   client named by its metadata document is taken back only with an `id_token_hint` (documentClientTarget), and
 *   when this browser holds no session, by a link only (finish); an app the hint was issued to that is gone
 *   since (disabled, deleted) is not taken back, and the logout goes on.
 * - A hint signed by a key the service no longer holds (revoked) is taken as none: the user confirms, and only
 *   `client_id` can name the app to go back to (docs/guides/sessions-and-logout.md).
 */
import { type App, postLogoutTargets } from '../../apps/app.js';
import { namesMetadataDocument } from '../../apps/client-id-metadata.js';
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { single, type ParamMap } from '../../http/params.js';
import { readLogoutParams } from '../request/logout-params.js';
import { constantTimeEqual, digestsEqual, randomSecret } from '../../lib/random-secrets.js';
import { signedByUnknownKey, verifyIDTokenHint, type IDTokenHint } from '../../token/id-token-hint.js';
import { expiredSessionCookie, readSessionCookie } from '../state/session-cookie.js';
import { endSessionConfirmationResponse } from '../pages/end-session-confirmation.js';
import { signedOutResponse } from '../pages/signed-out.js';
import { isCrossSiteRequest } from './cross-site.js';
import { isUsableRegisteredURI } from '../request/registered-uri.js';
import { returnableApp, stillReturnable } from '../request/still-returnable.js';
import {
  findLogoutConfirmation,
  type LogoutConfirmation,
  saveLogoutConfirmation,
  spendLogoutConfirmation,
} from '../state/logout-confirmation.js';
import { takeInteractionSlot } from '../state/interaction-bound.js';
import { clientIP } from '../../http/client-ip.js';
import { parkPostedRequest, resolvePostedRequest } from '../state/posted-request.js';
import { type SessionRecord, sessionDigestOf, useSession } from '../state/session.js';
import { carriesSession } from '../../sessions/carry-over.js';
import { parseSid, sessionSid, userPart } from '../../sessions/session-index.js';
import { endDeviceSession, endLapsedSession, finishDeviceSessionEnding } from '../../sessions/end-sessions.js';
import { routePath } from '../../http/route-paths.js';
import { noteRequestedLocales, splitUiLocales, withUiLocales } from '../../i18n/page-locale.js';

/** Where to go after signing out, once validated. */
interface LogoutTarget {
  app: App | null;
  returnTo?: string | undefined;
  state?: string | undefined;
  /** `ui_locales` for the "signed out" page. */
  uiLocales?: string | undefined;
}

function badRequest(description: string): OAuthError {
  return new OAuthError('invalid_request', description);
}

/**
 * The verified hint; `null` without one. A hint signed by a key the service no longer holds (revoked after a
 * compromise) is taken as none (`dropped`), or nobody could sign out through the app until it signed in again: the
 * user confirms, and its `post_logout_redirect_uri` needs `client_id` (§4: what failed to validate is not used).
 */
async function readHint(
  context: SentinelContext,
  params: ParamMap,
  accountId: string,
): Promise<{ hint: IDTokenHint | null; dropped: boolean }> {
  const token = single(params, 'id_token_hint');
  if (token === undefined) return { hint: null, dropped: false };
  const hint = await verifyIDTokenHint(context, token, accountId);
  if (hint !== null) return { hint, dropped: false };
  if (signedByUnknownKey(context, token)) return { hint: null, dropped: true };
  throw badRequest('id_token_hint is not an ID token issued by this account.');
}

async function findTarget(
  context: SentinelContext,
  params: ParamMap,
  accountId: string,
  { hint, dropped }: { hint: IDTokenHint | null; dropped: boolean },
): Promise<LogoutTarget> {
  const requestedClient = single(params, 'client_id');
  if (requestedClient !== undefined && hint !== null && !hint.audiences.includes(requestedClient)) {
    throw badRequest('id_token_hint was not issued to client_id.');
  }
  const clientId = requestedClient ?? (hint?.audiences.length === 1 ? hint.audiences[0] : undefined);
  if (clientId !== undefined && namesMetadataDocument(context.config, clientId)) {
    return documentClientTarget(context, params, accountId, clientId, hint);
  }
  const found = clientId === undefined ? null : await context.apps.findApp(accountId, clientId);
  const app = found !== null && found.accountId === accountId ? found : null;
  const uiLocales = single(params, 'ui_locales');
  if (app === null && clientId !== undefined && hint !== null) {
    // The hint was issued to this app, which is gone since (disabled or deleted): there is no registration left to
    // confirm a return address against, but the logout must not fail for it and keep the user signed in. It goes
    // on, with no return to the app.
    return { app: null, uiLocales };
  }
  if (requestedClient !== undefined && app === null) throw badRequest('The application in this link is not registered for this account.');
  const returnTo = single(params, 'post_logout_redirect_uri');
  // A dropped hint named the app the URI is for: without client_id no app does, and the logout goes on without a return.
  if (returnTo === undefined || (dropped && app === null)) return { app, uiLocales };
  if (app === null) throw badRequest('post_logout_redirect_uri needs client_id or id_token_hint to name the application.');
  return returnTarget(params, app, returnTo, uiLocales);
}

/** The target that goes back to `returnTo`: an exact match of what the app registered (its redirect URIs when it registered no logout URIs). */
function returnTarget(params: ParamMap, app: App, returnTo: string, uiLocales: string | undefined): LogoutTarget {
  const allowed = postLogoutTargets(app);
  if (!allowed.includes(returnTo)) throw badRequest('post_logout_redirect_uri is not registered for this application.');
  if (!isUsableRegisteredURI(allowed, returnTo)) {
    throw badRequest('The post_logout_redirect_uri registered for this application is not a valid redirect URI.');
  }
  return { app, returnTo, state: single(params, 'state'), uiLocales };
}

/**
 * The target of a logout naming a client by its metadata document. The document is the client's own claim: anyone
 * can publish one listing any address, so it confirms a return address only beside an ID token this service issued
 * to that client (RP-Initiated Logout §3: without `id_token_hint`, no redirection unless the OP can otherwise confirm
 * the target). And a document that cannot be fetched must not keep anyone signed in: the logout goes on, with no
 * return to the client.
 */
async function documentClientTarget(
  context: SentinelContext,
  params: ParamMap,
  accountId: string,
  clientId: string,
  hint: IDTokenHint | null,
): Promise<LogoutTarget> {
  const uiLocales = single(params, 'ui_locales');
  const returnTo = single(params, 'post_logout_redirect_uri');
  if (hint === null || returnTo === undefined) return { app: null, uiLocales };
  const app = await returnableApp(context, accountId, clientId);
  if (app === null) return { app: null, uiLocales };
  return returnTarget(params, app, returnTo, uiLocales);
}

/**
 * The answer once signed out: a redirect to the target's return address (with `state`), else the "signed out" page.
 * `unasked`: this browser holds no session, so nobody signing out here was asked or shown anything. A
 * client named by its metadata document is then not redirected to but offered as a link on that page: its hint proves
 * only that someone signed in to it once (expiry is not checked), and whoever publishes a document can sign in to
 * their own agent, so a redirect would make this endpoint an open redirector for any link they send.
 */
function finish(
  context: SentinelContext,
  target: LogoutTarget,
  headers: Record<string, string>,
  request: SentinelRequest,
  unasked = false,
): SentinelResponse {
  if (target.returnTo === undefined) return signedOutResponse(context, headers, request, target.uiLocales);
  const { returnTo, state } = target;
  const location = state === undefined ? returnTo : `${returnTo}${returnTo.includes('?') ? '&' : '?'}state=${encodeURIComponent(state)}`;
  if (unasked && target.app !== null && namesMetadataDocument(context.config, target.app.clientId)) {
    return signedOutResponse(context, headers, request, target.uiLocales, { href: location, host: new URL(returnTo).host });
  }
  return redirect(303, location, headers);
}

async function signOut(
  context: SentinelContext,
  request: SentinelRequest,
  input: { accountId: string; clientId?: string | undefined; sessionId: string },
): Promise<Record<string, string>> {
  const ended = await endDeviceSession(context, input.sessionId);
  if (ended === null) {
    // Its record gone meanwhile (another tab's sign-out, cut short by the store): the same cookie finishes that.
    await finishSignOut(context, request, input);
  } else {
    // Ended already: committed, so a throwing onEvent cannot answer 500 for a sign-out that happened.
    context.emit(
      {
        type: 'session.ended',
        accountId: input.accountId,
        clientId: input.clientId,
        userId: ended.userId,
        reason: 'logout',
      },
      'committed',
    );
  }
  return { 'set-cookie': expiredSessionCookie(context, request.mountPath) };
}

/**
 * The retry of a sign-out that a store failure cut short after the session record went (answered 500): the user's
 * index may still list the session, where a code issued just before the sign-out could still attach a grant. The
 * same cookie ends that entry, as at the logout endpoint; the cookie is cleared when an ending of it was under way.
 */
async function finishSignOut(
  context: SentinelContext,
  request: SentinelRequest,
  input: { accountId: string; clientId?: string | undefined; sessionId: string },
): Promise<Record<string, string>> {
  const finished = await finishDeviceSessionEnding(context, input.sessionId, input.accountId);
  if (finished === null) return {};
  if (finished.ended) {
    const { accountId, clientId } = input;
    context.emit({ type: 'session.ended', accountId, clientId, userId: finished.userId, reason: 'logout' }, 'committed');
  }
  return { 'set-cookie': expiredSessionCookie(context, request.mountPath) };
}

/**
 * Whether the hint was issued from this very sign-in: its user and `auth_time`, and its `sid` when it carries one.
 * Without the `sid`, another session of the same user begun in the same second would pass for this one and be ended
 * without the confirmation RP-Initiated Logout §2 asks for. Or from an earlier sign-in of the same user in this
 * browser that the session carries (its `sid` and `auth_time`): an app signed in before the user signed in again
 * holds only that ID token, and the browser's session is the one that ends its session now.
 */
async function hintNamesSession(
  context: SentinelContext,
  hint: IDTokenHint,
  accountId: string,
  session: SessionRecord,
  sessionId: string,
): Promise<boolean> {
  if (hint.sub !== session.userId) return false;
  const sessionDigest = sessionDigestOf(sessionId);
  const sid = sessionSid(accountId, session.userId, sessionDigest);
  if (hint.authTime === session.authTime && (hint.sid === undefined || hint.sid === sid)) return true;
  // Only a hint with a sid of this user can name a carried session: the index is read for those alone.
  const parts = hint.sid === undefined ? null : parseSid(hint.sid);
  if (parts === null || hint.authTime === undefined || parts.userPart !== userPart(accountId, session.userId)) return false;
  const earlier = { sessionDigest: parts.sessionDigest, authTime: hint.authTime };
  return carriesSession(context, accountId, session.userId, sessionDigest, earlier);
}

async function endLapsedSessionOf(
  context: SentinelContext,
  accountId: string,
  clientId: string | undefined,
  hint: { sub: string; sid: string; authTime?: number | undefined },
): Promise<void> {
  const ended = await endLapsedSession(context, accountId, hint);
  if (ended === null) return;
  context.emit({ type: 'session.ended', accountId, clientId, userId: hint.sub, reason: 'logout' }, 'committed');
}

/**
 * The hint's session, to end on confirmation, when its `sid` names another session than the browser's
 * (`sessionDigest`); `undefined` otherwise. Whether it lapsed is asked only then: it may lapse in the meantime.
 */
function otherHintedSession(hint: IDTokenHint | null, sessionDigest: string): LogoutConfirmation['lapsedHint'] {
  if (hint?.sid === undefined) return undefined;
  const parts = parseSid(hint.sid);
  if (parts === null || parts.sessionDigest === sessionDigest) return undefined;
  return { sub: hint.sub, sid: hint.sid, authTime: hint.authTime };
}

async function confirm(context: SentinelContext, request: SentinelRequest, accountId: string, params: ParamMap): Promise<SentinelResponse> {
  if (isCrossSiteRequest(context, request, []))
    throw new OAuthError('invalid_request', 'Sign-out was confirmed from another site.', { status: 403 });
  const id = single(params, 'confirmation') ?? '';
  const record = await findLogoutConfirmation(context, id);
  const expired = () => badRequest('This sign-out link is invalid or has expired. Go back to the application and start again.');
  if (record === null || record.accountId !== accountId) throw expired();
  const csrfToken = single(params, 'csrf_token');
  const sessionId = readSessionCookie(context, request);
  if (
    csrfToken === undefined ||
    !constantTimeEqual(csrfToken, record.csrfToken) ||
    sessionId === null ||
    !digestsEqual(sessionDigestOf(sessionId), record.sessionDigest)
  ) {
    throw new OAuthError('invalid_request', 'The sign-out form is out of date. Go back to the application and start again.', {
      status: 403,
    });
  }
  // Checked before it is spent, so a refused post changes nothing; the take keeps it single use under concurrency.
  const back = await stillReturnable(context, accountId, record.clientId, record.returnTo);
  if (!(await spendLogoutConfirmation(context, id))) throw expired();
  const headers = await signOut(context, request, { accountId, clientId: record.clientId, sessionId });
  const { returnTo, state, uiLocales } = back ? record : { ...record, returnTo: undefined, state: undefined };
  const target: LogoutTarget = { app: null, returnTo, state, uiLocales };
  const lapsed = record.lapsedHint;
  if (lapsed !== undefined && typeof lapsed.sub === 'string' && typeof lapsed.sid === 'string') {
    // The app's own session lapsed and the browser signed in again since: signing out of the app must end the
    // lapsed session's grants too, or the app's refresh token would outlive the logout the user just confirmed.
    await endLapsedSessionOf(context, accountId, record.clientId, lapsed);
  }
  return finish(context, target, headers, request);
}

/** The RP-Initiated Logout parameters of a posted request (already validated above), to park for its GET. */
function forwardedParams(params: ParamMap): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales']) {
    const value = single(params, name);
    if (value !== undefined) query.set(name, value);
  }
  return query;
}

function endSessionAction(context: SentinelContext, request: SentinelRequest, accountId: string): string {
  return `${request.mountPath ?? ''}${routePath(context.config, 'end-session', { accountId })}`;
}

/**
 * Handles RP-initiated logout.
 *
 * @example
 * { name: 'end-session', methods: ['GET', 'POST'], path: '/api/account/{accountId}/end_session', handler: (c, r, p) => handleEndSession(c, r, p.accountId) }
 */
export async function handleEndSession(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  if (!(await context.apps.hasAccount(accountId))) {
    throw new OAuthError('invalid_request', 'The account in this link is unknown.', { status: 404 });
  }
  context.observation?.noteAccount(accountId);
  const effective = await resolvePostedRequest(context, request, 'end-session', accountId);
  const params = await readLogoutParams(context, effective);
  // Its refusals are shown in the language it asks for, posted or parked as much as in a GET's query.
  noteRequestedLocales(request, params);
  if (request.method === 'POST' && params.has('confirmation')) return confirm(context, request, accountId, params);
  const read = await readHint(context, params, accountId);
  const { hint } = read;
  const target = await findTarget(context, params, accountId, read);
  const sessionId = readSessionCookie(context, request);
  if (sessionId === null && request.method === 'POST') {
    // A logout form posted by the app is cross-site, and SameSite=Lax keeps the session cookie off cross-site
    // POSTs: send the browser to the GET of the same request, a top-level navigation that carries it. The request
    // is parked and the URL carries only its handle: id_token_hint and state stay out of histories and logs.
    const handle = await parkPostedRequest(context, request, 'end-session', accountId, forwardedParams(params));
    return redirect(303, `${endSessionAction(context, request, accountId)}?${handle}`);
  }
  const session = sessionId === null ? null : await useSession(context, sessionId, accountId);
  if (sessionId === null || session === null) {
    // No live session in this browser of this account (a sign-out of it cut short may be left to finish); the one
    // the hint names may have lapsed with grants still alive.
    const clientId = target.app?.clientId;
    const headers = sessionId === null ? {} : await finishSignOut(context, request, { accountId, clientId, sessionId });
    if (hint?.sid !== undefined) await endLapsedSessionOf(context, accountId, clientId, { ...hint, sid: hint.sid });
    return finish(context, target, headers, request, true);
  }
  if (hint !== null && (await hintNamesSession(context, hint, accountId, session, sessionId))) {
    return finish(context, target, await signOut(context, request, { accountId, clientId: target.app?.clientId, sessionId }), request);
  }
  // Any signed-in browser can ask for this page, and each stores a confirmation (up to the 8 KiB of its request):
  // counted per client address as an interaction (interaction-bound.ts), unless its post was counted when it was
  // parked (posted-request.ts). Over the bound: a 429 page with Retry-After, nothing stored, the user still signed in.
  if (effective === request) await takeInteractionSlot(context, clientIP(context.config, request));
  const record: LogoutConfirmation = {
    accountId,
    clientId: target.app?.clientId,
    returnTo: target.returnTo,
    state: target.state,
    sessionDigest: sessionDigestOf(sessionId),
    csrfToken: randomSecret(),
    uiLocales: target.uiLocales,
    lapsedHint: otherHintedSession(hint, sessionDigestOf(sessionId)),
  };
  const confirmationId = await saveLogoutConfirmation(context, record);
  return endSessionConfirmationResponse(
    context,
    {
      // The post keeps the page's language: its refusals (an out-of-date form, another site) are shown in it.
      action: withUiLocales(endSessionAction(context, request, accountId), splitUiLocales(target.uiLocales)),
      confirmationId,
      csrfToken: record.csrfToken,
      appName: target.app === null ? undefined : (target.app.name ?? target.app.clientId),
      returnTo: target.returnTo,
      uiLocales: target.uiLocales,
    },
    request,
  );
}
