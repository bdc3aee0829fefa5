/**
 * The device-session cookie: HttpOnly (scripts never see it), SameSite=Lax (sent on the top-level GET that
 * brings the user back to /authorize, not on cross-site POSTs), Secure unless the issuer is http on loopback,
 * and scoped to the service's path so the host application never receives it.
 */
import { serialize } from 'cookie';
import type { SentinelContext } from '../../http/context.js';
import type { SentinelRequest } from '../../http/messages.js';
import { readCookie } from '../../http/cookies.js';
import { sessionDigestOf } from './session.js';

/**
 * Path of the service's cookies: the host's mount prefix plus the base path.
 *
 * @example
 * serialize(name, value, { path: cookiePath(context, request.mountPath) });
 */
export function cookiePath(context: SentinelContext, mountPath: string | undefined): string {
  return `${mountPath ?? ''}${context.config.basePath}`;
}

/**
 * The value of the session cookie, or `null` when the request has none.
 *
 * @example
 * const sessionId = readSessionCookie(context, request);
 */
export function readSessionCookie(context: SentinelContext, request: SentinelRequest): string | null {
  return readCookie(request, context.config.session.cookieName);
}

/**
 * The digest of the session the browser's cookie names, in whichever account (`undefined` without a cookie), for an
 * interaction to keep: the cookie is one per browser, shared by every account, so a sign-in's new session replaces
 * whatever session it named, and `completeLogin()`, which gets no cookie, must end that session as the login form
 * does. A cookie that names no live session gives a digest that finds nothing then.
 *
 * @example
 * const browserSession = browserSessionDigest(context, request);
 */
export function browserSessionDigest(context: SentinelContext, request: SentinelRequest): string | undefined {
  const sessionId = readSessionCookie(context, request);
  return sessionId === null ? undefined : sessionDigestOf(sessionId);
}

/**
 * `Set-Cookie` for a new session id, living as long as the session's absolute lifetime.
 *
 * @example
 * headers['set-cookie'] = sessionCookie(context, request.mountPath, sessionId);
 */
export function sessionCookie(context: SentinelContext, mountPath: string | undefined, sessionId: string): string {
  const { config } = context;
  return serialize(config.session.cookieName, sessionId, {
    httpOnly: true,
    secure: !config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    maxAge: config.session.absoluteTtl,
  });
}

/**
 * `Set-Cookie` that removes the session cookie.
 *
 * @example
 * headers['set-cookie'] = expiredSessionCookie(context, request.mountPath);
 */
export function expiredSessionCookie(context: SentinelContext, mountPath: string | undefined): string {
  const { config } = context;
  return serialize(config.session.cookieName, '', {
    httpOnly: true,
    secure: !config.insecureLoopback,
    sameSite: 'lax',
    path: cookiePath(context, mountPath),
    maxAge: 0,
    expires: new Date(0),
  });
}
