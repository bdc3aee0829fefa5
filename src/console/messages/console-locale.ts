/**
 * The console's language for a request: the `Accept-Language` preferences (RFC 9110 §12.5.4) matched against the
 * bundled catalogues and the host's, English for what a host catalogue leaves out.
 */
import { ConfigurationError } from '../../errors.js';
import { matchTag } from '../../i18n/match-tag.js';
import { direction, parseAcceptLanguage } from '../../i18n/negotiate.js';
import type { ConsoleMessages } from './console-messages.js';
import { consoleEn } from './en.js';
import { consoleFr } from './fr.js';

/**
 * The bundled console catalogues: English and French.
 *
 * @example
 * createConsole(sentinel, { authorize, i18n: { catalogues: { de: { ...CONSOLE_CATALOGUES.en, navApps: 'Anwendungen' } } } });
 */
export const CONSOLE_CATALOGUES: Readonly<Record<string, ConsoleMessages>> = Object.freeze({ en: consoleEn, fr: consoleFr });

/** A language of the console: its tag, its writing direction and its complete messages. */
export interface ConsoleLocale {
  tag: string;
  /** `rtl` for a right-to-left tag (the service's rule: `ar`, `he`, `ku-Arab`), so `<html dir>` mirrors the page. */
  dir: 'ltr' | 'rtl';
  messages: ConsoleMessages;
}

/** Language tags as the service's own `i18n` takes them (letters, digits, hyphens): they go into `<html lang>`. */
const TAG = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/;

/** The longest text a host's message may be, as for the service's own catalogues. */
const MAX_MESSAGE = 1000;

/**
 * True for an object of named values (not `null`, not an array): the shape of the `i18n` option and its catalogues.
 *
 * @example isPlainObject({ de: {} }); // true; isPlainObject(null), isPlainObject([]) are false
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A language tag of the console's `i18n` option, checked at startup.
 *
 * @example checkConsoleTag('pt-BR', 'console.i18n.defaultLocale'); // 'pt-BR'
 * @throws ConfigurationError when it is not shaped like a language tag.
 */
export function checkConsoleTag(tag: string, option: string): string {
  if (typeof tag !== 'string' || !TAG.test(tag)) throw new ConfigurationError(option, 'must be a language tag such as "en" or "pt-BR"');
  return tag;
}

/**
 * The host's strings of one language, checked at startup as the service's own catalogues are: a name the console
 * does not have (a typo) or a value that is not text is refused, rather than every page of that language failing
 * when it is shown. A name given as `undefined` is left out (English), as an i18n library answers a missing key.
 */
function checkedMessages(tag: string, messages: Readonly<Record<string, unknown>>): Partial<ConsoleMessages> {
  const option = `console.i18n.catalogues.${tag}`;
  if (!isPlainObject(messages)) throw new ConfigurationError(option, 'must be an object of messages');
  const checked: Partial<Record<keyof ConsoleMessages, string>> = {};
  for (const [name, value] of Object.entries(messages)) {
    if (!Object.hasOwn(consoleEn, name)) throw new ConfigurationError(`${option}.${name}`, 'is not a message of the console');
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length > MAX_MESSAGE) {
      throw new ConfigurationError(`${option}.${name}`, `must be text of at most ${MAX_MESSAGE} characters`);
    }
    // The English message's placeholders, no more and no fewer: a page would otherwise lose a name it must show
    // (the account an operator is refused for) or show a `{name}` it does not fill in.
    const wanted = placeholders(consoleEn[name as keyof ConsoleMessages]);
    if (placeholders(value) !== wanted) {
      throw new ConfigurationError(
        `${option}.${name}`,
        `must have ${wanted === '' ? 'no placeholder' : `exactly the placeholders ${wanted}`}, as the English message`,
      );
    }
    checked[name as keyof ConsoleMessages] = value;
  }
  return checked;
}

/**
 * Complete catalogues by lower-case tag: the bundled ones, the host's merged over them (and over English).
 *
 * @example const set = consoleCatalogues({ de: { navApps: 'Anwendungen' } });
 * @throws ConfigurationError for catalogues that are not an object, a tag that is no language tag, or a message that
 * is unknown or not text.
 */
export function consoleCatalogues(extra: Readonly<Record<string, Partial<ConsoleMessages>>> = {}): Map<string, ConsoleLocale> {
  if (!isPlainObject(extra)) throw new ConfigurationError('console.i18n.catalogues', 'must be an object of catalogues by language tag');
  const set = new Map<string, ConsoleLocale>();
  for (const [tag, messages] of Object.entries(CONSOLE_CATALOGUES)) set.set(tag.toLowerCase(), { tag, dir: direction(tag), messages });
  for (const [tag, messages] of Object.entries(extra)) {
    checkConsoleTag(tag, 'console.i18n.catalogues');
    const own = checkedMessages(tag, messages);
    const base = set.get(tag.toLowerCase())?.messages ?? consoleEn;
    set.set(tag.toLowerCase(), { tag, dir: direction(tag), messages: { ...base, ...own } });
  }
  return set;
}

/**
 * The console's language when the browser asks for none it has: `console.i18n.defaultLocale` matched as a browser's
 * preference is, with the service's own rule (`es-MX` shows a host's `es`, `fr-CA` the bundled `fr`).
 *
 * @example const fallback = consoleDefaultLocale(set, 'fr-CA'); // the bundled French
 * @throws ConfigurationError when no catalogue shows it: it would quietly be English, as for the service's `i18n`.
 */
export function consoleDefaultLocale(set: ReadonlyMap<string, ConsoleLocale>, tag: string): ConsoleLocale {
  const found = matchTag(set, checkConsoleTag(tag, 'console.i18n.defaultLocale'));
  const locale = found === null ? undefined : set.get(found);
  if (locale === undefined) {
    const bundled = Object.keys(CONSOLE_CATALOGUES).join(', ');
    throw new ConfigurationError(
      'console.i18n.defaultLocale',
      `no catalogue shows "${tag}": add it to console.i18n.catalogues or use a bundled language (${bundled})`,
    );
  }
  return locale;
}

/**
 * The first `Accept-Language` preference the console has, matched as the service's pages match it (the same tag, its
 * primary language, another tag of that language), else `fallback`.
 *
 * @example chooseConsoleLocale(set, 'pt-PT, en;q=0.5', consoleDefaultLocale(set, 'en')); // a host's `pt-BR`
 */
export function chooseConsoleLocale(
  set: ReadonlyMap<string, ConsoleLocale>,
  header: string | undefined,
  fallback: ConsoleLocale,
): ConsoleLocale {
  for (const wanted of parseAcceptLanguage(header)) {
    const found = matchTag(set, wanted);
    const locale = found === null ? undefined : set.get(found);
    if (locale !== undefined) return locale;
  }
  return fallback;
}

/** The `{name}` placeholders of a message, sorted, without repeats, space-separated. */
function placeholders(message: string): string {
  return [...new Set(message.match(/\{\w+\}/g) ?? [])].sort().join(' ');
}

/** Fills `{name}` placeholders (the page escapes the result). */
export function fillMessage(message: string, values: Readonly<Record<string, string>>): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}
