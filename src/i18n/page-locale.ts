/**
 * The language of one response, from what the request and its interaction say. The handlers write their
 * error descriptions in English (that is what `error_description` carries to developers, RFC 6749 §5.2); the
 * pages show the person the same message in their language when the catalogue has it.
 */
import type { SentinelContext } from '../http/context.js';
import { headerValue, type SentinelRequest } from '../http/messages.js';
import type { ParamMap } from '../http/params.js';
import { catalogueSet } from './catalogues.js';
import { en } from './en.js';
import type { MessageKey, Messages } from './messages.js';
import { chooseLocale, parseAcceptLanguage, type PageLocale } from './negotiate.js';

/**
 * A BCP 47 language tag as far as a page needs one (letters, digits, hyphens; at most 35 characters, RFC 5646 §4.4.1),
 * the shape the authorization endpoint keeps too (authorize/request/oidc-params.ts). The tags of a link to the account
 * or device page go on into the sign-in's interaction, where a host's `login.render` and `sentinel.interaction()`
 * read them as language tags: a link anyone can craft must not hand them markup instead.
 */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

/**
 * The language tags of a `ui_locales` value, a space-separated list (OpenID Connect Core §3.1.2.1): at most 20 tags of
 * at most 35 characters; anything else is dropped.
 *
 * @example
 * splitUiLocales('fr-CA "><x> de') // ['fr-CA', 'de']
 */
export function splitUiLocales(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(' ') : [...value];
  return list.filter((tag) => tag.length <= 35 && LANGUAGE_TAG.test(tag)).slice(0, 20);
}

/**
 * The `ui_locales` of a request's query, checked as the pages check it (at most 20 language tags of at most 35
 * characters); empty without one.
 *
 * @example
 * requestUiLocales(request) // ['de', 'fr'] for ?ui_locales=de%20fr
 */
export function requestUiLocales(request: SentinelRequest): string[] {
  return splitUiLocales(request.query.get('ui_locales') ?? undefined);
}

// The `ui_locales` of the sign-in each request belongs to, noted by its handler once it has read the interaction.
const signInLocales = new WeakMap<SentinelRequest, readonly string[]>();

/**
 * Notes that `request` belongs to a sign-in whose app asked for `uiLocales`. Every page then answered to it is in the
 * sign-in's language, error pages too: a 429 or an out-of-date form is thrown, and the route's `renderError` renders
 * it knowing only the request (the edge hands the handler and `renderError` the same request object).
 *
 * @example
 * noteSignInLocales(request, interaction.request.uiLocales);
 */
export function noteSignInLocales(request: SentinelRequest, uiLocales: readonly string[] | undefined): void {
  if (uiLocales !== undefined && uiLocales.length > 0) signInLocales.set(request, uiLocales);
}

/**
 * Notes the `ui_locales` among a request's parameters (OpenID Connect Core §3.1.2.1) for the pages answered to it,
 * error pages included, when they are not in its query: an authorization or logout request posted as a form, or the
 * parked post a GET names by its handle. Without it their refusals would be in the browser's `Accept-Language`,
 * where the same request sent as a GET is answered in the language the app asked for. A repeated `ui_locales` notes
 * nothing (RFC 6749 §3.1: the request is refused).
 *
 * @example
 * noteRequestedLocales(request, params);
 */
export function noteRequestedLocales(request: SentinelRequest, params: ParamMap): void {
  const values = params.get('ui_locales');
  if (values?.length === 1) noteSignInLocales(request, splitUiLocales(values[0]));
}

/**
 * The `ui_locales` a page's form must carry on: the sign-in's the request belongs to ({@link noteSignInLocales}),
 * else the request's own query's. A page answered to a post of the login form (whose query names only the
 * interaction) would otherwise post its next form without them, and that answer fall back to `Accept-Language`.
 *
 * @example
 * withUiLocales(action, flowUiLocales(request))
 */
export function flowUiLocales(request: SentinelRequest): readonly string[] {
  return signInLocales.get(request) ?? requestUiLocales(request);
}

/**
 * `url` with `ui_locales` added to its query (unchanged without any), so that the next page of a flow keeps the
 * language the flow was opened in rather than fall back to `Accept-Language`.
 *
 * @example
 * withUiLocales('/sentinel/api/account/123456/device', ['fr']) // '/sentinel/api/account/123456/device?ui_locales=fr'
 */
export function withUiLocales(url: string, uiLocales: readonly string[] | undefined): string {
  if (uiLocales === undefined || uiLocales.length === 0) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams({ ui_locales: uiLocales.join(' ') })}`;
}

/**
 * The page language for a request: `uiLocales` (from the interaction, else the sign-in the request belongs to, see
 * {@link noteSignInLocales}, else the request's own `ui_locales` parameter), then `Accept-Language`, then the
 * configured default.
 *
 * @example
 * const locale = pageLocale(context, request, interaction.request.uiLocales);
 */
export function pageLocale(
  context: SentinelContext,
  request: SentinelRequest | undefined,
  uiLocales?: string | readonly string[] | undefined,
): PageLocale {
  const noted = request === undefined ? undefined : signInLocales.get(request);
  const fromQuery = uiLocales ?? noted ?? request?.query.get('ui_locales') ?? undefined;
  const accept = request === undefined ? [] : parseAcceptLanguage(headerValue(request, 'accept-language'));
  return chooseLocale(catalogueSet(context.config.i18n), [...splitUiLocales(fromQuery), ...accept]);
}

/** The English messages the handlers use as descriptions, so a page can show them translated. */
const TRANSLATABLE: readonly MessageKey[] = [
  'wrongCredentials',
  'missingCredentials',
  'tooManyAttempts',
  'linkExpired',
  'formOutOfDate',
  'loginPageBusy',
  'postedFromAnotherSite',
  'passkeyFailed',
  'stepUpPasskey',
  'passkeyNotAdded',
  'passkeyAlreadyRegistered',
  'totpWrong',
  'totpMissing',
  'deviceCodeWrong',
  'deviceCodeUsed',
  'deviceConfirmExpired',
  'deviceTooManyCodes',
  'deviceDecisionBusy',
  // The account page (issue #35).
  'accountFormOutOfDate',
  'accountPasskeyNotAdded',
  'accountPasskeyAlreadyRegistered',
  'accountPasskeyLimit',
  'accountPasskeyStepUp',
  'accountPasskeyReauthenticate',
  'accountNotYourPasskey',
  'accountNotYourSession',
  'accountAppNotConnected',
];
const BY_ENGLISH = new Map<string, MessageKey>(TRANSLATABLE.map((key) => [en[key], key]));

/**
 * The translation of a handler's English message, or `null` when it is not one the catalogues carry.
 *
 * @example
 * translate(locale.messages, 'Incorrect username or password.') // 'Nome de usuário ou senha incorretos.'
 */
export function translate(messages: Messages, english: string): string | null {
  const key = BY_ENGLISH.get(english);
  return key === undefined ? null : messages[key];
}
