/**
 * `GET|POST {basePath}/api/account/{accountId}/authorize` — platform-operations.md §4.2, RFC 6749 §4.1.1–§4.1.2,
 * OpenID Connect Core §3.1.2.1 (POST with a form body).
 *
 * A browser with a session in the account goes straight back to the app with a code, unless `prompt`, `max_age` or
 * `id_token_hint` ask for a new sign-in; otherwise the validated request is parked in an interaction and the browser
 * goes to the login page carrying only the interaction id (or, with `prompt=none`, back with `login_required`).
 */
import type { SentinelContext } from '../../http/context.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../../http/messages.js';
import { redirectOnFailure } from '../request/authorization-error.js';
import { browserSessionDigest, readSessionCookie } from '../state/session-cookie.js';
import { codeRedirectURL } from './signed-in-response.js';
import { createInteraction, loginPageURL } from '../state/interaction.js';
import { interactionRequest, reauthenticationReason, refuseSilentSignIn, unconsentedClientReason } from '../request/prompt.js';
import { readSession, sessionDigestOfKey, touchSession } from '../state/session.js';
import { sessionSid } from '../../sessions/session-index.js';
import { validateAuthorizationRequest } from '../request/validate-request.js';
import { authorizationQuery, readAuthorizationParams } from '../request/request-params.js';
import { routePath } from '../../http/route-paths.js';
import { parkPostedRequest, resolvePostedRequest } from '../state/posted-request.js';
import { clientIP } from '../../http/client-ip.js';
import { isOAuthError } from '../../errors.js';
import { AuthorizationError, redirectStatus } from '../request/authorization-error.js';
import { takeInteractionSlot } from '../state/interaction-bound.js';
import { noteRequestedLocales } from '../../i18n/page-locale.js';
import type { AuthorizationRequest } from '../request/validate-request.js';

/** Thrown through issueCode when a silent sign-in's session ended while the request used it: its code goes unsent. */
const SESSION_ENDED = Symbol('session ended');

/**
 * Takes the request's slot of `interactionsPerAddress`. An address over it is sent back to the app with
 * `temporarily_unavailable` (RFC 6749 §4.1.2.1, the error code for this very case), as every other problem after the
 * redirect URI is validated: the app learns why and can say so in its own page, where a 429 page of ours would strand
 * the user with no way back. A failing store is the usual `server_error` redirect (reported), nothing stored: the
 * caller runs this inside `redirectOnFailure`.
 */
async function boundedInteraction(context: SentinelContext, request: SentinelRequest, authorization: AuthorizationRequest): Promise<void> {
  try {
    await takeInteractionSlot(context, clientIP(context.config, request));
  } catch (error) {
    if (isOAuthError(error) && error.code === 'temporarily_unavailable') {
      throw new AuthorizationError('temporarily_unavailable', error.description, authorization);
    }
    throw error;
  }
}

/**
 * Handles an authorization request.
 *
 * @example
 * { name: 'authorize', methods: ['GET', 'POST'], path: '/api/account/{accountId}/authorize', handler: (c, r, p) => handleAuthorize(c, r, p.accountId) }
 */
export async function handleAuthorize(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  if (request.method === 'POST' && readSessionCookie(context, request) === null) {
    // An app's form posts here from its own site, and the session cookie (SameSite=Lax) is never sent with a
    // cross-site POST: answered here, a signed-in user would sign in again and prompt=none would always fail. A 303
    // to a GET is a top-level navigation that carries it, as end_session does. The parameters are parked and the
    // GET carries only their handle (posted-request.ts): login_hint, id_token_hint and claims, posted to keep them
    // out of URLs, stay out of the browser's history and the logs. The GET validates them. A POST that carries the
    // cookie (same site) is answered directly.
    const params = await readAuthorizationParams(context, request);
    // Refused while it is parked (a 429 of the per-address bound), it is told in its ui_locales too.
    noteRequestedLocales(request, params);
    const query = new URLSearchParams(authorizationQuery(params));
    const handle = await parkPostedRequest(context, request, 'authorize', accountId, query);
    return redirect(303, `${request.mountPath ?? ''}${routePath(context.config, 'authorize', { accountId })}?${handle}`);
  }
  // A POST answered here (it carried the cookie) is answered with 303, never 302: RFC 9110 §15.4.3 lets a user agent
  // keep the method of a 302, and so post the form again, hints and any client credentials posted with it included,
  // to the app's redirect URI or the login page (RFC 9700 §4.12: 303 is the status that drops the body).
  const status = redirectStatus(request);
  const resolved = resolvePostedRequest(context, request, 'authorize', accountId);
  const effective = resolved === request ? request : await resolved;
  const authorization = await validateAuthorizationRequest(context, effective, accountId, { shownTo: request });
  const sessionId = readSessionCookie(context, request);
  const session = sessionId === null ? null : await redirectOnFailure(authorization, readSession(context, sessionId, accountId));
  // A session that meets the request still does not answer a client nobody installed (a metadata document's).
  const reason =
    reauthenticationReason(authorization, session?.record ?? null, Math.floor(Date.now() / 1000)) ??
    unconsentedClientReason(context, authorization);
  if (reason !== null) refuseSilentSignIn(authorization, reason);
  if (session !== null && reason === null) {
    // The code's write and the session's idle extension leave for the store together: one round trip, not two.
    // Either failing is a 500 that delivers no code. The code's code.issued waits for the extension: a code whose
    // session ended meanwhile is deleted unannounced (issueCode).
    const extended = touchSession(context, session);
    extended.catch(() => undefined); // Observed below, unless the code's write failed first.
    const location = await redirectOnFailure(
      authorization,
      codeRedirectURL(
        context,
        authorization,
        {
          userId: session.record.userId,
          authTime: session.record.authTime,
          amr: session.record.amr,
          sid: sessionSid(accountId, session.record.userId, sessionDigestOfKey(session.key)),
        },
        async () => {
          if (!(await extended)) throw SESSION_ENDED;
        },
      ).catch((error: unknown) => (error === SESSION_ENDED ? null : Promise.reject(error))),
    );
    if (location !== null) return redirect(status, location);
    // The session ended (a logout) while this request used it: no code is delivered, and the request goes on as one
    // without a session.
    refuseSilentSignIn(authorization, 'the session ended while this request used it');
  }
  // The browser's session, which the sign-in replaces: kept for completeLogin(), which gets no cookie. Whichever
  // account it is in: the new session's cookie overwrites it all the same, and the login form ends it.
  const browserSession = browserSessionDigest(context, request);
  // Anyone can start an interaction, and each is stored: counted per client address first (interaction-bound.ts),
  // unless its post was counted when it was parked (posted-request.ts).
  const admit = effective === request ? () => boundedInteraction(context, request, authorization) : undefined;
  const interactionId = await redirectOnFailure(
    authorization,
    // A client the session does not answer (a native app, a metadata document's) takes no earlier sign-in of a host's
    // own login page either: the interaction asks for a new one.
    createInteraction(context, interactionRequest(context, authorization), request.mountPath, undefined, undefined, browserSession, admit),
  );
  return redirect(status, loginPageURL(context, request.mountPath, accountId, interactionId));
}
