/**
 * Whether a device session may answer an authorization request without showing the login page (OpenID Connect
 * Core §3.1.2.1 `prompt`, `max_age`, `id_token_hint`, `acr_values`), and the error when it may not but `prompt=none` forbids
 * asking the user (§3.1.2.6).
 */
import { AuthorizationError } from './authorization-error.js';
import type { SessionRecord } from '../state/session.js';
import type { AuthorizationRequest } from './validate-request.js';
import { meetsAcrRequirement } from '../../assurance/reported-acr.js';
import { namesMetadataDocument } from '../../apps/client-id-metadata.js';
import type { SentinelContext } from '../../http/context.js';

/** Why the login page must be shown, or `null` when the session answers the request. */
export function reauthenticationReason(
  authorization: AuthorizationRequest,
  session: Pick<SessionRecord, 'userId' | 'authTime' | 'amr'> | null,
  nowSeconds: number,
): string | null {
  if (session === null) return 'the user is not signed in';
  const prompt = authorization.prompt ?? [];
  if (prompt.includes('login')) return 'prompt=login asks for a new sign-in';
  // The service keeps one session per browser (one cookie for every account); choosing another account means
  // signing in again.
  if (prompt.includes('select_account')) return 'prompt=select_account asks for a sign-in';
  // max_age=0 must always re-authenticate, so an authentication in this very second is already too old. An
  // auth_time ahead of this clock (another instance's clock, or a host's within completeLogin()'s skew) is no
  // younger than now: counted as a negative age, it passed even max_age=0.
  if (authorization.maxAge !== undefined && Math.max(0, nowSeconds - session.authTime) >= authorization.maxAge) {
    return 'the last sign-in is older than max_age';
  }
  // A step-up (acr_values, the claims parameter's acr): a session below the level, or that no essential acr value
  // can report, signs in again, with a method that reaches it.
  if (!meetsAcrRequirement(authorization, session.amr)) {
    return 'the last sign-in does not reach the requested acr';
  }
  if (authorization.idTokenHintSubject !== undefined && authorization.idTokenHintSubject !== session.userId) {
    return 'the signed-in user is not the one named by id_token_hint';
  }
  // The claims parameter's sub (§3.1.2.2): a session of another user must not answer with that user's tokens.
  if (authorization.claimsSubject !== undefined && authorization.claimsSubject !== session.userId) {
    return 'the signed-in user is not the one the claims parameter asks for (sub)';
  }
  return null;
}

/**
 * Why a finished sign-in does not answer its request, or `null` when it does (§3.1.2.1). A sign-in made while the
 * interaction was open (`authTime` at or after `interactionCreatedAt`, in whole seconds as `auth_time` is) is the
 * new authentication the request asked for, whatever `prompt` and `max_age` say. An older one, which a host's own
 * page may hand to `completeLogin()`, must pass what {@link reauthenticationReason} asks of a session: not under
 * `prompt=login`, and younger than `max_age` with the same `>=` (so `max_age=0` takes only a new sign-in).
 * `prompt=select_account` is left to the host's page: choosing an account is not signing in again.
 *
 * @example
 * const reason = staleSignInReason(interaction.request, authTime, interaction.createdAt, Math.floor(Date.now() / 1000));
 */
export function staleSignInReason(
  authorization: Pick<AuthorizationRequest, 'prompt' | 'maxAge'>,
  authTime: number,
  interactionCreatedAt: number,
  nowSeconds: number,
): string | null {
  if (authTime >= Math.floor(interactionCreatedAt / 1000)) return null;
  if (authorization.prompt?.includes('login') === true)
    return 'the request asks for a sign-in made for it (prompt=login, or an app a session does not answer), and this one is older';
  if (authorization.maxAge !== undefined && nowSeconds - authTime >= authorization.maxAge) {
    return 'the sign-in is older than max_age';
  }
  return null;
}

/**
 * Why a live session must not answer the request by itself although it meets it, or `null`: nobody can tell the
 * client is who it says it is, so the user signs in to it on the login page, which names it; `prompt=none` gets
 * `consent_required` (OpenID Connect Core §3.1.2.6).
 *
 * - A client named by its metadata document (`clientIdMetadataDocuments`): installed by no administrator of the
 *   account, so the installation that stands for consent (see {@link refuseSilentSignIn}) is missing, and anyone can
 *   publish a document naming their own redirect URI; a signed-in user following a link to it would otherwise hand a
 *   code to that URI without seeing a page.
 * - A native app (a public client redirecting to a loopback port or a private-use scheme): any program on the
 *   device can listen on a loopback port (any port matches, RFC 8252 §7.3) or claim the scheme, and ask in the app's
 *   name with a PKCE challenge of its own. RFC 8252 §8.6: such a request is not processed without the user.
 *
 * @example
 * const reason = reauthenticationReason(authorization, session, now) ?? unconsentedClientReason(context, authorization);
 * @throws AuthorizationError consent_required under `prompt=none`.
 */
export function unconsentedClientReason(context: Pick<SentinelContext, 'config'>, authorization: AuthorizationRequest): string | null {
  const reason = namesMetadataDocument(context.config, authorization.clientId)
    ? 'a client named by its metadata document is answered only once the user signs in to it'
    : authorization.nativeClient === true
      ? 'the identity of a native app cannot be assured, so it is answered only once the user signs in to it'
      : null;
  if (reason === null) return null;
  if (authorization.prompt?.includes('none') === true) {
    throw new AuthorizationError('consent_required', `prompt=none, but ${reason}`, authorization);
  }
  return reason;
}

/**
 * The request as its interaction keeps it: for a client a session does not answer by itself
 * ({@link unconsentedClientReason}), with `login` added to its `prompt`. A host's own login page (`login.url`) may
 * hold a sign-in of its own, made before the request: `sentinel.interaction()` then tells the page to ask for a new
 * one, and `completeLogin()` refuses the earlier one ({@link staleSignInReason}), as under `prompt=login`. Otherwise
 * the host's page would hand the app the code the session alone may not. Called once `prompt=none` has been
 * answered (it never reaches an interaction).
 *
 * @example
 * await createInteraction(context, interactionRequest(context, authorization), mountPath);
 */
export function interactionRequest(context: Pick<SentinelContext, 'config'>, authorization: AuthorizationRequest): AuthorizationRequest {
  const prompt = authorization.prompt ?? [];
  if (prompt.includes('login') || prompt.includes('none') || unconsentedClientReason(context, authorization) === null) {
    return authorization;
  }
  return { ...authorization, prompt: [...prompt, 'login'] };
}

/**
 * `prompt=none` when the user would have to sign in: `login_required` back to the app (§3.1.2.6), so silent
 * sign-in in a hidden frame or popup fails fast instead of rendering a login page nobody sees.
 * `prompt=consent` needs nothing: an app is installed into an account by the account's administrator, and that
 * installation is the consent; the service has no per-user consent screen to show. A client that nobody installed (a
 * client ID metadata document) is never answered by the session alone ({@link unconsentedClientReason}).
 *
 * @example
 * const reason = reauthenticationReason(authorization, session, now);
 * if (reason !== null) refuseSilentSignIn(authorization, reason);
 */
export function refuseSilentSignIn(authorization: AuthorizationRequest, reason: string): void {
  if (authorization.prompt?.includes('none') === true) {
    throw new AuthorizationError('login_required', `prompt=none, but ${reason}`, authorization);
  }
}
