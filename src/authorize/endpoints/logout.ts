/**
 * `POST {basePath}/api/account/{accountId}/logout` — ends the device session of the account.
 *
 * CSRF: a logout form can be posted by the application (cross-site by nature), so instead of a token the
 * request's browser-set `Sec-Fetch-Site`/`Origin` must say same-origin, or `Origin` must be the origin of one of
 * the named client's redirect URIs. The browser then goes to `post_logout_redirect_uri` (303) only when it is
 * one of that client's registered post-logout redirect URIs, or of its redirect URIs when it registered none (exact
 * match, as at the end-session endpoint); otherwise it sees a "signed out" page. A client named by a client ID
 * metadata document is treated as naming no client: same-origin only, and the "signed out" page.
 */
import { type App, postLogoutTargets } from '../../apps/app.js';
import { namesMetadataDocument } from '../../apps/client-id-metadata.js';
import { readForm } from '../../http/form-body.js';
import type { SentinelContext } from '../../http/context.js';
import { OAuthError } from '../../errors.js';
import { headerValue, redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { single, type ParamMap } from '../../http/params.js';
import { expiredSessionCookie, readSessionCookie } from '../state/session-cookie.js';
import { isCrossSiteRequest } from './cross-site.js';
import { isUsableRegisteredURI } from '../request/registered-uri.js';
import { originSource } from '../pages/security-headers.js';
import { signedOutResponse } from '../pages/signed-out.js';
import { useSession } from '../state/session.js';
import { endDeviceSession, finishDeviceSessionEnding } from '../../sessions/end-sessions.js';

async function readParams(context: SentinelContext, request: SentinelRequest): Promise<ParamMap> {
  // A bare `<form method="post">` without fields, or fetch('…/logout', { method: 'POST' }), sends no content type.
  if (headerValue(request, 'content-type') === undefined) return new Map();
  return readForm(request, context.config.bodyLimit);
}

async function findClient(context: SentinelContext, accountId: string, clientId: string | undefined): Promise<App | null> {
  // A client ID metadata document is not looked up: it is its client's own claim, so an origin or logout URI it lists
  // proves nothing (any site could publish one naming itself), and signing out must not wait on a third party's URL.
  if (clientId === undefined || namesMetadataDocument(context.config, clientId)) return null;
  const app = await context.apps.findApp(accountId, clientId);
  if (app !== null) context.observation?.noteAccount(app.accountId);
  return app !== null && app.accountId === accountId ? app : null;
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
  const target = single(params, 'post_logout_redirect_uri');
  const allowed = app === null ? [] : postLogoutTargets(app);
  if (target !== undefined && allowed.includes(target) && isUsableRegisteredURI(allowed, target)) {
    const state = single(params, 'state');
    const location = state === undefined ? target : `${target}${target.includes('?') ? '&' : '?'}state=${encodeURIComponent(state)}`;
    return redirect(303, location, headers);
  }
  return signedOutResponse(context, headers, request);
}
