/**
 * `POST {basePath}/api/account/{accountId}/logout` — ends the device session of the account.
 *
 * CSRF: a logout form can be posted by the application (cross-site by nature), so instead of a token the
 * request's browser-set `Sec-Fetch-Site`/`Origin` must say same-origin, or `Origin` must be the origin of one of
 * the named client's redirect URIs; a post that says neither (`Origin: null` alone) is confirmed by the user. The
 * browser then goes to `post_logout_redirect_uri` (303) only when it is one of that client's registered post-logout
 * redirect URIs, or of its redirect URIs when it registered none (exact match, as at the end-session endpoint);
 * otherwise it sees a "signed out" page. A client named by a client ID
 * metadata document is treated as naming no client: same-origin only, and the "signed out" page.
 *
 * A post from the app's site carries no session cookie (SameSite=Lax): it is forwarded to RP-initiated logout's GET
 * (parked, as a cookieless post there is), where the cookie comes along and the user confirms.
 */
import { type App, postLogoutTargets } from '../../apps/app.js';
import { namesMetadataDocument } from '../../apps/client-id-metadata.js';
import { readForm } from '../../http/form-body.js';
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { headerValue, redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { single, type ParamMap } from '../../http/params.js';
import { expiredSessionCookie, readSessionCookie } from '../state/session-cookie.js';
import { isCrossSiteRequest, isUnlabelledPost } from './cross-site.js';
import { isUsableRegisteredURI } from '../request/registered-uri.js';
import { MAX_AUTHORIZATION_REQUEST_LENGTH } from '../request/request-params.js';
import { originSource } from '../pages/security-headers.js';
import { signedOutResponse } from '../pages/signed-out.js';
import { parkPostedRequest } from '../state/posted-request.js';
import { useSession } from '../state/session.js';
import { routePath } from '../../http/route-paths.js';
import { endDeviceSession, finishDeviceSessionEnding } from '../../sessions/end-sessions.js';

async function readParams(context: SentinelContext, request: SentinelRequest): Promise<ParamMap> {
  // A bare `<form method="post">` without fields, or fetch('…/logout', { method: 'POST' }), sends no content type.
  if (headerValue(request, 'content-type') === undefined) return new Map();
  const params = await readForm(request, context.config.bodyLimit);
  // end_session's cap, as a cookieless post goes there, parked in the store (forwardToEndSession): a longer form
  // parked more than a parked request may hold (`bodyLimit`, up to 1 MiB, from anyone), and then failed there (414).
  let length = 0;
  for (const [name, values] of params) for (const value of values ?? ['']) length += name.length + value.length + 2;
  if (length > MAX_AUTHORIZATION_REQUEST_LENGTH) throw new OAuthError('invalid_request', 'The request is too long.', { status: 413 });
  return params;
}

async function findClient(context: SentinelContext, accountId: string, clientId: string | undefined): Promise<App | null> {
  // A client ID metadata document is not looked up: it is its client's own claim, so an origin or logout URI it lists
  // proves nothing (any site could publish one naming itself), and signing out must not wait on a third party's URL.
  if (clientId === undefined || namesMetadataDocument(context.config, clientId)) return null;
  const app = await context.apps.findApp(accountId, clientId);
  if (app !== null) context.observation?.noteAccount(app.accountId);
  return app !== null && app.accountId === accountId ? app : null;
}

/** The request's `post_logout_redirect_uri` when it is one the app registered (exact match), else `undefined`. */
function returnTarget(app: App | null, params: ParamMap): string | undefined {
  const target = single(params, 'post_logout_redirect_uri');
  const allowed = app === null ? [] : postLogoutTargets(app);
  return target !== undefined && allowed.includes(target) && isUsableRegisteredURI(allowed, target) ? target : undefined;
}

/**
 * A 303 to RP-initiated logout's GET for this request, parked: the app, and its return address and `state` when
 * this endpoint would have gone there (an address it would drop is dropped, not left for `end_session` to refuse).
 */
async function forwardToEndSession(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  app: App | null,
  params: ParamMap,
): Promise<SentinelResponse> {
  const forwarded = new URLSearchParams();
  if (app !== null) forwarded.set('client_id', app.clientId);
  const target = returnTarget(app, params);
  const state = single(params, 'state');
  if (target !== undefined) forwarded.set('post_logout_redirect_uri', target);
  if (target !== undefined && state !== undefined) forwarded.set('state', state);
  const handle = await parkPostedRequest(context, request, 'end-session', accountId, forwarded);
  return redirect(303, `${request.mountPath ?? ''}${routePath(context.config, 'end-session', { accountId })}?${handle}`);
}

/**
 * Handles logout.
 *
 * @example
 * { name: 'logout', methods: ['POST'], path: '/api/account/{accountId}/logout', handler: (c, r, p) => handleLogout(c, r, p.accountId) }
 */
export async function handleLogout(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const params = await readParams(context, request);
  const app = await findClient(context, accountId, single(params, 'client_id'));
  const appOrigins = (app?.redirectUris ?? []).map(originSource).filter((origin): origin is string => origin !== null);
  if (isCrossSiteRequest(context, request, appOrigins)) {
    throw new OAuthError('invalid_request', 'Sign-out was requested from another site.', { status: 403 });
  }
  const headers: Record<string, string> = {};
  const sessionId = readSessionCookie(context, request);
  if ((sessionId === null && isCrossSiteRequest(context, request, [])) || isUnlabelledPost(request)) {
    // The app's own form, posted from its site: SameSite=Lax keeps the session cookie off this post, so the session
    // cannot be seen (let alone ended) here, and a 303 back to the app would tell it the user is signed out while
    // the session lives on. RP-initiated logout's GET, a top-level navigation, carries the cookie: the request goes
    // there, parked (nothing of it in the URL), and the user confirms there as for any logout without an ID token.
    // So does a post that does not say where it came from: a same-site page's sandboxed frame sends one with the
    // cookie, and ending the session on its word would let that page sign the user out.
    return forwardToEndSession(context, request, accountId, app, params);
  }
  // Only a session of this account is ended here: logging out of account A leaves account B alone.
  if (sessionId !== null && (await useSession(context, sessionId, accountId)) !== null) {
    const ended = await endDeviceSession(context, sessionId);
    headers['set-cookie'] = expiredSessionCookie(context, request.mountPath);
    if (ended !== null) {
      // Ended already: committed, so a throwing onEvent cannot answer 500 and keep the cookie of a session that is gone.
      context.emit({ type: 'session.ended', accountId, clientId: app?.clientId, userId: ended.userId, reason: 'logout' }, 'committed');
    }
  } else if (sessionId !== null) {
    // The retry of a logout that a store failure cut short after the session record went: the user's index may still
    // list the session, which the same cookie now ends.
    const finished = await finishDeviceSessionEnding(context, sessionId, accountId);
    if (finished !== null) headers['set-cookie'] = expiredSessionCookie(context, request.mountPath);
    if (finished?.ended === true) {
      context.emit({ type: 'session.ended', accountId, clientId: app?.clientId, userId: finished.userId, reason: 'logout' }, 'committed');
    }
  }
  const target = returnTarget(app, params);
  if (target !== undefined) {
    const state = single(params, 'state');
    const location = state === undefined ? target : `${target}${target.includes('?') ? '&' : '?'}state=${encodeURIComponent(state)}`;
    return redirect(303, location, headers);
  }
  return signedOutResponse(context, headers, request);
}
