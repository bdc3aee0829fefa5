/**
 * The language of one response, from what the request and its interaction say. The handlers write their
 * error descriptions in English (that is what `error_description` carries to developers, RFC 6749 §5.2); the
 * pages show the person the same message in their language when the catalogue has it.
 */
import type { SentinelContext } from '../http/context.js';
import { headerValue, type SentinelRequest } from '../http/messages.js';
import { catalogueSet } from './catalogues.js';
import { en } from './en.js';
import type { MessageKey, Messages } from './messages.js';
import { chooseLocale, parseAcceptLanguage, type PageLocale } from './negotiate.js';

/** `ui_locales` is a space-separated list (OpenID Connect Core §3.1.2.1). */
function splitUiLocales(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? value.split(' ') : [...value];
  return list.filter((tag) => tag !== '' && tag.length <= 35).slice(0, 20);
}

/**
 * The `ui_locales` of a request's query, checked as the pages check it (at most 20 tags of at most 35 characters);
 * empty without one.
 *
 * @example
 * requestUiLocales(request) // ['de', 'fr'] for ?ui_locales=de%20fr
 */
export function requestUiLocales(request: SentinelRequest): string[] {
  return splitUiLocales(request.query.get('ui_locales') ?? undefined);
}

/**
 * The page language for a request: `uiLocales` (from the interaction, or the request's own `ui_locales`
 * parameter), then `Accept-Language`, then the configured default.
 *
 * @example
 * const locale = pageLocale(context, request, interaction.request.uiLocales);
 */
export function pageLocale(
  context: SentinelContext,
  request: SentinelRequest | undefined,
  uiLocales?: string | readonly string[] | undefined,
): PageLocale {
  const fromQuery = uiLocales ?? request?.query.get('ui_locales') ?? undefined;
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
  'postedFromAnotherSite',
  'passkeyFailed',
  'stepUpPasskey',
  'passkeyNotAdded',
  'totpWrong',
  'totpMissing',
  'deviceCodeWrong',
  'deviceCodeUsed',
  'deviceConfirmExpired',
  'deviceTooManyCodes',
  // The account page (issue #35).
  'accountFormOutOfDate',
  'accountPasskeyNotAdded',
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
