/**
 * The host's hooks and the shapes they exchange with the service: who the user is (`users`), what the login page
 * shows (`login.render`), which claims a user releases (`users.claims`), which consumers exist, and what `onError`
 * is told. Types only; the options that carry them are validated in config/.
 */
import type { Messages } from './i18n/messages.js';
import type { SentinelRequest } from './http/messages.js';
import type { PasskeyHooks } from './passkeys/hooks.js';
import type { SecondFactorHooks } from './second-factor/hooks.js';

/**
 * What `users.claims` is asked for: the user, the scopes granted to the app (RFC 6749 §3.3 scope tokens), and the
 * claims the app asked for by name with the `claims` parameter (OpenID Connect Core §5.5) for the place being
 * answered (UserInfo, or the ID token), so a hook may skip lookups that neither needs.
 * @example const input: UserClaimsInput = { accountId: '123456', userId: 'u-42', scopes: ['openid'], claims: ['email'] };
 */
export interface UserClaimsInput {
  accountId: string;
  userId: string;
  scopes: readonly string[];
  /** Claims asked for by name beyond the scopes' (standard claim names only); absent when none were. */
  claims?: readonly string[] | undefined;
}

/**
 * Standard claims of OpenID Connect Core §5.1 as the `users.claims` hook returns them (`email` an RFC 5322
 * addr-spec, `phone_number` E.164 where possible); `sub` always comes from the token and cannot be overridden.
 * @example const claims: UserClaims = { name: 'Alice Liddell', email: 'alice@example.com', email_verified: true };
 */
export interface UserClaims {
  name?: string;
  given_name?: string;
  family_name?: string;
  middle_name?: string;
  nickname?: string;
  preferred_username?: string;
  profile?: string;
  picture?: string;
  website?: string;
  email?: string;
  email_verified?: boolean;
  gender?: string;
  birthdate?: string;
  zoneinfo?: string;
  locale?: string;
  phone_number?: string;
  phone_number_verified?: boolean;
  address?: {
    formatted?: string;
    street_address?: string;
    locality?: string;
    region?: string;
    postal_code?: string;
    country?: string;
  };
  /** Seconds since the epoch. */
  updated_at?: number;
  [claim: string]: unknown;
}

/**
 * What the login page shows and posts. A custom page must post `application/x-www-form-urlencoded` to
 * `action` with the fields `csrf_token`, `username`, `password`, or `csrf_token` and `cancel` to cancel; and
 * it must put `styleNonce` on its `<style>` element (the CSP allows no other styles, and no scripts).
 * platform-operations.md §5 item 2 (the user authenticates on the service's login page); RFC 6749 §10.12 (the CSRF
 * token).
 *
 * @example
 * createSentinel({ ..., login: { render: (view) => myTemplate({ ...view, title: `Sign in to ${view.appName}` }) } })
 */
export interface LoginView {
  /** Branding `productName`. */
  productName: string;
  /** Branding `logoUrl`, if any. */
  logoUrl?: string | undefined;
  /** Branding colours (CSS custom property name without `--` → value), defaults not included. */
  colors: Readonly<Record<string, string>>;
  /** The application's display name (its client id when it has none). */
  appName: string;
  accountId: string;
  /** The URL the form posts to (path-absolute, interaction id included). */
  action: string;
  interactionId: string;
  /** Value of the hidden `csrf_token` field. */
  csrfToken: string;
  /** The username of a failed attempt, or the app's `login_hint`, to fill the field (never the password). */
  username?: string | undefined;
  /** A message for the user, e.g. "Incorrect username or password". */
  error?: string | undefined;
  /** Nonce for the page's `<style>` element. */
  styleNonce: string;
  /**
   * The app's `ui_locales` (OpenID Connect Core §3.1.2.1), most preferred first: BCP 47 tags. The built-in page
   * already speaks the language chosen from them (`lang`); a custom `render` may use them for its own catalogue.
   */
  uiLocales?: readonly string[] | undefined;
  /** The page language (`<html lang>`), chosen from `ui_locales`, `Accept-Language` and the `i18n` option. */
  lang?: string | undefined;
  /** `rtl` for right-to-left languages. */
  dir?: 'ltr' | 'rtl' | undefined;
  /** Every string of the page, in `lang`; `error` is already translated when the catalogue has it. */
  messages?: Messages | undefined;
  /**
   * Present when the user store keeps passkeys: the page may offer "Sign in with a passkey". `optionsURL` answers
   * a POST of `csrf_token` with the WebAuthn request options (JSON); the assertion is posted as the form field
   * `assertion` (JSON) with `csrf_token` to `action`. `scriptNonce` is the CSP nonce for the page's script.
   */
  passkey?: { optionsURL: string; action: string; scriptNonce: string } | undefined;
}

/**
 * The signed-in user as the host's user store describes it (the resource owner of RFC 6749 §1.1).
 * @example const user: AuthenticatedUser = { id: 'u-42' };
 */
export interface AuthenticatedUser {
  /** Stable user id; becomes `sub` of the user's tokens. */
  id: string;
  /** `'totp'` asks for a TOTP code before the sign-in completes (the code is checked against `users.totpSecret`). */
  secondFactor?: 'totp' | undefined;
  [claim: string]: unknown;
}

/**
 * The host's user store (RFC 6749 §3.1: the authorization server authenticates the resource owner).
 *
 * @example
 * const users: UserAuthenticator = {
 *   async authenticate({ accountId, username, password }) {
 *     const user = await db.users.find(accountId, username);
 *     return user && (await verifyPassword(user.hash, password)) ? { id: user.id } : null;
 *   },
 * };
 */
export interface UserAuthenticator extends SecondFactorHooks {
  /** The user's passkeys; with it the login page offers "Sign in with a passkey". */
  passkeys?: PasskeyHooks | undefined;
  /**
   * Checks a username and password: the user (`{ id, … }`, a non-empty string id of at most 256 characters), or
   * `null` for a failure the throttle counts. Any other answer is a 500 `server_error`, as a throw is.
   */
  authenticate(input: {
    accountId: string;
    username: string;
    password: string;
    request: SentinelRequest;
  }): AuthenticatedUser | null | Promise<AuthenticatedUser | null>;
  /**
   * The user's OpenID Connect claims (`name`, `email`, `email_verified`, …) for UserInfo and, with
   * `idTokenClaims`, the ID token; only those the granted scopes cover are released. `null` when the user is gone
   * (deleted, or disabled by the host): it ends the user's tokens at refresh and UserInfo, refuses a passkey
   * sign-in, which never asks `authenticate`, and refuses every change on the account page. Asked also when the
   * scopes release nothing (`openid` alone, as a passkey sign-in asks): then only whether the user exists and may
   * sign in matters.
   *
   * @example
   * claims: async ({ accountId, userId }) => {
   *   const user = await db.users.byId(accountId, userId);
   *   return user === null || user.disabled ? null : { name: user.name, email: user.email, email_verified: true };
   * }
   */
  claims?(input: UserClaimsInput): UserClaims | null | Promise<UserClaims | null>;
}

/**
 * Decides whether a consumer id (`state` of the v2 app token request, platform-operations.md §4.1) is acceptable. May be async;
 * runs after client authentication. Anything but `true` or `false` is a `server_error` (reported to `onError`), never a yes;
 * so is a throw, whatever it throws: an `OAuthError` (the service's verifier refusing a token the hook asked about) is
 * reported as the cause of the `500`, not answered to the client.
 * @example const consumerId: ConsumerIdValidator = async (id, { accountId }) => consumers.exists(accountId, id);
 */
export type ConsumerIdValidator = (consumerId: string, context: { accountId: string; clientId: string }) => boolean | Promise<boolean>;

/**
 * Context handed to `onError` along with the failure behind a `500 server_error` (RFC 6749 §5.2).
 * @example createSentinel({ …, onError: (error, { route, accountId }) => log.error({ route, accountId }, error) });
 */
export interface ErrorContext {
  route: string;
  /**
   * The account, often the one the request's path names (the caller's text): control characters are written as
   * `\uXXXX`, as in audit events, and one over 256 characters is cut there and ends in `…`.
   */
  accountId?: string | undefined;
}

// --- Token exchange (RFC 8693): the host's say over delegation ---

/**
 * Whose token a delegation's subject is, read from that token's own signed claims: `'user'` for a user's (issued by
 * the authorization code, refresh token or device grant, on a grant of the user's), `'consumer'` for a consumer-bound
 * one (the v2 app-token endpoint, or a trusted brand's JWT exchanged by JWT bearer or token exchange). A delegated
 * token keeps its subject's kind, so every hop of a chain has the kind of the token the chain began with.
 * @example const kind: DelegationSubjectKind = 'consumer';
 */
export type DelegationSubjectKind = 'user' | 'consumer';

/**
 * A delegation the service is about to make (RFC 8693 §4.1): `clientId` asks for a token that lets it act for
 * `subject`, whose token was issued to `subjectClientId`; `actors` are the parties already acting in the subject
 * token's `act` chain, nearest first. Every field but `clientId` and `scope` comes from the subject token's signed
 * claims, never from the request's parameters.
 * @example
 * // A second hop: bot-2 asks to act for consumer c-7, whose token bot-1 got from the messaging app 'web'.
 * const request: DelegationRequest = {
 *   accountId: '123456',
 *   clientId: 'bot-2',
 *   subject: 'c-7',
 *   subjectKind: 'consumer',
 *   subjectClientId: 'bot-1',
 *   originClientId: 'web',
 *   actors: ['bot-1'],
 *   scope: 'read',
 *   audience: ['https://api.example.com/messaging'],
 * };
 */
export interface DelegationRequest {
  accountId: string;
  /** The requesting client: the new actor. */
  clientId: string;
  /** `sub` of the subject token: a user id or a consumer id (`subjectKind` says which). */
  subject: string;
  /** Whether `subject` is a user or a consumer: a policy such as "bots act only for consumers" reads this. */
  subjectKind: DelegationSubjectKind;
  /**
   * The client the subject token was issued to: for a first delegation the user's or consumer's app, for a
   * delegation of a delegated token the actor of that token (the previous bot, `actors[0]`).
   */
  subjectClientId: string;
  /**
   * The app the chain began with: the one the user's or consumer's own token was issued to, whatever the number of
   * hops since (the same as `subjectClientId` for a first delegation). The delegated token names it in
   * `grant_client_id` and stops when it is deleted.
   */
  originClientId: string;
  /** `sub` of each actor already in the subject token's `act` chain, nearest first; empty for a first delegation. */
  actors: readonly string[];
  /** The scope the delegated token would carry. */
  scope?: string | undefined;
  /**
   * The audiences the delegated token would carry (`aud`, RFC 8707 resources among them): what the subject token was
   * for, or the part of it the request's `audience` and `resource` narrowed to. A policy such as "bots reach only the
   * messaging API" reads this.
   */
  audience: readonly string[];
}

/**
 * Decides whether a client may act for a subject (`authorizeDelegation` option). `false` refuses the exchange with
 * `invalid_request` (RFC 8693 §2.2.2: unacceptable by policy); a throw, or an answer that is not a boolean, is a
 * `server_error`. May be async. Asked after the service's own checks of the request (the client's authentication
 * and its DPoP proof among them; the proof's single use is recorded once the policy agrees), so a request the service
 * refuses anyway never costs it a decision.
 * @example
 * // Bots act only for consumers, and only for those of the messaging app, at any hop.
 * const authorizeDelegation: DelegationPolicy = ({ clientId, subjectKind, originClientId }) =>
 *   bots.has(clientId) && subjectKind === 'consumer' && originClientId === 'web';
 */
export type DelegationPolicy = (request: DelegationRequest) => boolean | Promise<boolean>;
