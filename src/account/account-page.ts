/**
 * `GET|POST {basePath}/api/account/{accountId}/account` — the end user's account page (`account: { enabled: true }`):
 * where they are signed in, their passkeys, and the apps holding access to their account, each with its one action.
 *
 * GET shows the page (or sends a browser without a session to the login page, which brings it back). POST runs one
 * action named by the form's `action` field after {@link readAccountPost}'s checks, then answers 303 back to the page
 * with a notice (post/redirect/get: reloading the page never repeats the action).
 */
import { OAuthError } from '../errors.js';
import type { SentinelContext } from '../http/context.js';
import { redirect, type SentinelRequest, type SentinelResponse } from '../http/messages.js';
import { single } from '../http/params.js';
import { routePath } from '../http/route-paths.js';
// The English text is the description, so that the error page shows it in the page's language (translate()).
import { en } from '../i18n/en.js';
import type { MessageKey } from '../i18n/messages.js';
import { pageLocale } from '../i18n/page-locale.js';
import { logoSources } from '../authorize/pages/logo-policy.js';
import { createStyleNonce, htmlResponse } from '../authorize/pages/security-headers.js';
import { renderAccountHtml, renderNotSignedInHtml } from './account-html.js';
import { addPasskey, listPasskeys, passkeyChangeRefusal, passkeyHooks, removePasskey } from './account-passkeys.js';
import { passkeyEnrolmentLevel } from '../second-factor/step-up-method.js';
import { listPage, pageSlice } from './account-paging.js';
import { keepUiLocales } from './account-links.js';
import { accountPageOff, readAccountPost } from './account-post.js';
import { connectedApps, disconnectApp, endOtherSessions, endOwnSession, sessionItems } from './account-sessions.js';
import { type AccountVisit, accountPagePath, currentVisit, signInRedirect, userGone } from './account-visit.js';
import { sessionDigestOf } from '../authorize/state/session.js';
import { browserSessionDigest } from '../authorize/state/session-cookie.js';
import { loadUserClaims } from '../userinfo/claims.js';

/** What `?done=` may name, and the message it shows: anything else shows nothing. */
const NOTICES: Readonly<Record<string, MessageKey>> = {
  'session-ended': 'accountSessionEnded',
  'others-ended': 'accountOthersEnded',
  'app-disconnected': 'accountAppDisconnected',
  'passkey-added': 'accountPasskeyAddedDone',
  'passkey-not-added': 'accountPasskeyNotAdded',
  'passkey-already-registered': 'accountPasskeyAlreadyRegistered',
  'passkey-limit': 'accountPasskeyLimit',
  'passkey-removed': 'accountPasskeyRemoved',
};

/**
 * The name to greet: the `name` claim when the host's claims hook gives one, else the user id; `null` when the hook
 * says the user is gone (account-visit.ts `userGone`). Asked as UserInfo asks (loadUserClaims): on the `users` object,
 * so a hook that is a method of the host's user store keeps its `this`.
 */
async function displayName(context: SentinelContext, visit: AccountVisit): Promise<string | null> {
  const found = await loadUserClaims(context, { accountId: visit.accountId, userId: visit.session.userId, scopes: ['openid', 'profile'] });
  if (found === null) return null;
  const name = found.name;
  return typeof name === 'string' && name.trim() !== '' ? name.slice(0, 200) : visit.session.userId;
}

async function showPage(context: SentinelContext, request: SentinelRequest, visit: AccountVisit): Promise<SentinelResponse> {
  const { accountId } = visit;
  // A user the host says is gone is signed in to nothing here: no page, no form (each post would be refused). Its
  // "Sign in" starts a new sign-in (SIGN_IN_AGAIN): the page itself would only show this again.
  const user = await displayName(context, visit);
  if (user === null) return notSignedIn(context, request, accountId, { signin: SIGN_IN_AGAIN });
  const locale = pageLocale(context, request);
  const styleNonce = createStyleNonce();
  const hooks = passkeyHooks(context);
  const scriptNonce = hooks === undefined ? undefined : createStyleNonce();
  const path = accountPagePath(context, request.mountPath, accountId);
  const action = keepUiLocales(path, request);
  const done = request.query.get('done') ?? undefined;
  const sessions = await sessionItems(context, visit, request.query.get('sessions'));
  const apps = await connectedApps(context, visit, request.query.get('apps'));
  const passkeys = hooks === undefined ? undefined : await listPasskeys(context, visit);
  const passkeysAt = listPage(request.query.get('passkeys'), passkeys?.length ?? 0);
  // A sign-in weaker than the user's strongest, or older than account.maxSignInAge, neither adds nor removes: the page
  // links to a new one at that level instead.
  const refusal = hooks === undefined ? null : await passkeyChangeRefusal(context, visit);
  const mayChange = hooks !== undefined && refusal === null;
  const html = renderAccountHtml(
    {
      user,
      action,
      logoutAction: keepUiLocales(`${request.mountPath ?? ''}${routePath(context.config, 'logout', { accountId })}`, request),
      csrfToken: visit.csrfToken,
      // Own names only: `?done=constructor` must not find what every object inherits.
      notice: done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done] : undefined,
      sessions: sessions.items,
      passkeys:
        hooks === undefined || passkeys === undefined
          ? undefined
          : {
              items: pageSlice(passkeys, passkeysAt),
              canRemove: typeof hooks.remove === 'function' && mayChange,
              optionsURL: `${request.mountPath ?? ''}${routePath(context.config, 'account-passkey-options', { accountId })}`,
              stepUpURL: mayChange ? undefined : keepUiLocales(path, request, { step_up: 'passkey' }),
              stepUpLabel: refusal === 'stale' ? 'accountPasskeyReauthenticate' : 'accountPasskeyStepUp',
              // At most `ACCOUNT_LIST_BOUND` read, and the limit is at most that: the count read is the user's.
              atLimit: passkeys.length >= context.config.passkeys.maxPerUser,
            },
      apps: apps.items,
      pages: { sessions: sessions.at, passkeys: passkeysAt, apps: apps.at },
      lang: locale.tag,
      dir: locale.dir,
      messages: locale.messages,
      styleNonce,
      scriptNonce,
    },
    context.config.branding,
  );
  return htmlResponse(200, html, { styleNonce, scriptNonce, imgSrc: logoSources(context.config.branding) });
}

/**
 * `?signin=` of the "Sign in" link shown to the browser of a user the host says is gone: its session is still live,
 * so the page alone would show that browser the same "not signed in" page again, and nobody could sign in on it
 * until the session ran out (each visit extending it).
 */
const SIGN_IN_AGAIN = 'again';

function notSignedIn(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  linkParams: Readonly<Record<string, string>> = {},
): SentinelResponse {
  const locale = pageLocale(context, request);
  const styleNonce = createStyleNonce();
  const html = renderNotSignedInHtml(
    {
      signInURL: keepUiLocales(accountPagePath(context, request.mountPath, accountId), request, linkParams),
      messages: locale.messages,
      lang: locale.tag,
      dir: locale.dir,
      styleNonce,
    },
    context.config.branding,
  );
  return htmlResponse(200, html, { styleNonce, imgSrc: logoSources(context.config.branding) });
}

async function runAction(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const { visit, form } = await readAccountPost(context, request, accountId);
  // The form posts to the page's URL with its ui_locales, so the page after the action keeps the language too.
  const back = (done: string): SentinelResponse =>
    redirect(303, keepUiLocales(accountPagePath(context, request.mountPath, accountId), request, { done }));
  switch (single(form, 'action')) {
    case 'add-passkey':
      return back(await addPasskey(context, visit, single(form, 'attestation')));
    case 'remove-passkey':
      if (!(await removePasskey(context, visit, single(form, 'credential_id')))) {
        throw new OAuthError('invalid_request', en.accountNotYourPasskey);
      }
      return back('passkey-removed');
    case 'end-session':
      if (!(await endOwnSession(context, visit, single(form, 'sid')))) {
        throw new OAuthError('invalid_request', en.accountNotYourSession);
      }
      return back('session-ended');
    case 'end-other-sessions':
      await endOtherSessions(context, visit);
      return back('others-ended');
    case 'disconnect':
      if (!(await disconnectApp(context, visit, single(form, 'client_id')))) {
        throw new OAuthError('invalid_request', en.accountAppNotConnected);
      }
      return back('app-disconnected');
    default:
      throw new OAuthError('invalid_request', 'The account page was posted without a known action.');
  }
}

/**
 * Handles the account page.
 *
 * @example
 * { name: 'account', methods: ['GET', 'POST'], path: '/api/account/{accountId}/account', handler: (c, r, p) => handleAccountPage(c, r, p.accountId) }
 */
export async function handleAccountPage(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  if (!context.config.account.enabled) throw accountPageOff();
  if (request.method === 'POST') return runAction(context, request, accountId);
  const visit = await currentVisit(context, request, accountId);
  if (visit !== null && request.query.get('step_up') === 'passkey' && passkeyHooks(context) !== undefined) {
    // Before a passkey can be added or removed: a new sign-in, as strong as any the user has (passkeyChangeRefusal).
    const level = await passkeyEnrolmentLevel(context, { accountId, userId: visit.session.userId });
    // The visit's session goes with it: a host's page (completeLogin(), no cookie) must end or carry it over too.
    const browserSession = sessionDigestOf(visit.sessionId);
    return signInRedirect(context, request, accountId, { acr: level, fresh: true, browserSession });
  }
  if (visit !== null && request.query.get('signin') === SIGN_IN_AGAIN && (await userGone(context, visit))) {
    // The browser of a user the host says is gone: a new sign-in (another person's, on a shared computer) replaces
    // that session, as any sign-in replaces the browser's session. A live user's page is shown as it is.
    return signInRedirect(context, request, accountId, { browserSession: sessionDigestOf(visit.sessionId) });
  }
  if (visit !== null) return showPage(context, request, visit);
  if (request.query.get('signin') === 'cancelled') return notSignedIn(context, request, accountId);
  // A session of another account, which the new one's cookie replaces: a host's page must end it too.
  return signInRedirect(context, request, accountId, { browserSession: browserSessionDigest(context, request) });
}
