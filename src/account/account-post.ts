/**
 * The checks every state-changing request of the account page passes before anything else runs: the page is on,
 * the browser does not say the post came from another site, the session is live, the form carries this session's
 * CSRF token (RFC 6749 §10.12 for the sign-in form; the same defence here), and the host's claims hook does not say
 * the user is gone. A refusal changes nothing, is answered 403 with one message, and emits `account.denied`; a post
 * naming an account that does not exist is a 404 with no event.
 */
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import { readForm } from '../http/form-body.js';
import type { SentinelRequest } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { isCrossSiteRequest } from '../authorize/endpoints/cross-site.js';
import { touchSession } from '../authorize/state/session.js';
import { type AccountVisit, csrfTokenMatches, peekVisit, userGone } from './account-visit.js';

/** The one message of a refused post (translated on the page). */
export const FORM_OUT_OF_DATE = 'The page is out of date. Nothing was changed; try again.';

/**
 * The 404 of a service whose account page is off: the path is then not a page at all.
 *
 * @example
 * if (!context.config.account.enabled) throw accountPageOff();
 */
export function accountPageOff(): OAuthError {
  return new OAuthError('invalid_request', 'There is no account page here.', { status: 404 });
}

/** The 404 of an account the AppStore does not know: answered with no event. */
function unknownAccount(): OAuthError {
  return new OAuthError('invalid_request', 'The account in this link is unknown.', { status: 404 });
}

/**
 * The form's one CSRF token, or `undefined` when there is not exactly one string. A repeated or malformed token is a
 * wrong one (403, `account.denied`), as the guide promises for any token that is not the page's; `single()` would
 * answer it 400 without the event.
 */
function presentedToken(form: ParamMap): string | undefined {
  const values = form.get('csrf_token');
  return values?.length === 1 ? values[0] : undefined;
}

/**
 * The checked post: the signed-in visit and its form.
 *
 * @throws OAuthError 404 (no event) for an account the AppStore does not know; 403 (and emits `account.denied`) for
 * a cross-site post, no live session, a wrong CSRF token, or a user the claims hook says is gone.
 * @example
 * const { visit, form } = await readAccountPost(context, request, accountId);
 */
export async function readAccountPost(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
): Promise<{ visit: AccountVisit; form: ParamMap }> {
  if (!context.config.account.enabled) throw accountPageOff();
  // Before any event: a made-up account has no page, no user and no operator to read its audit. Anyone can post
  // naming any number of them, and an event each would grow the audit log without bound (PostgreSQL's is append-only
  // for its retention) and push real accounts' events out of the in-memory buffer. An AppStore that fails is a 500.
  if (!(await context.apps.hasAccount(accountId))) throw unknownAccount();
  context.observation?.noteAccount(accountId);
  const refuse = (reason: string, userId?: string): OAuthError => {
    context.emit({ type: 'account.denied', accountId, userId, reason });
    return new OAuthError('invalid_request', FORM_OUT_OF_DATE, { status: 403 });
  };
  // Before the body is read: a forged post costs nothing more than this.
  if (isCrossSiteRequest(context, request, [])) throw refuse('posted from another site');
  const form = await readForm(request, context.config.bodyLimit);
  // Read without extending the session: only a post whose token is right uses it (a refusal changes nothing).
  const unused = await peekVisit(context, request, accountId);
  if (unused === null) throw refuse('no live session');
  const { visit, live } = unused;
  if (!csrfTokenMatches(visit, presentedToken(form))) throw refuse('wrong CSRF token', visit.session.userId);
  // A user the host says is gone (deleted or disabled) changes nothing through a session left open: no passkey of
  // their choosing that outlives the host's clean-up and signs in once the user is enabled again.
  if (await userGone(context, visit)) throw refuse('user gone', visit.session.userId);
  // Ended (signed out elsewhere) between the read and now: not brought back, and nothing runs.
  if (!(await touchSession(context, live))) throw refuse('no live session', visit.session.userId);
  return { visit, form };
}
