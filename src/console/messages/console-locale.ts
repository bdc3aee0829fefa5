/**
 * The console's language for a request: the `Accept-Language` preferences (RFC 9110 §12.5.4) matched against the
 * bundled catalogues and the host's, English for what a host catalogue leaves out.
 */
import { parseAcceptLanguage } from '../../i18n/negotiate.js';
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

/** A language of the console: its tag and its complete messages. */
export interface ConsoleLocale {
  tag: string;
  messages: ConsoleMessages;
}

/** Complete catalogues by lower-case tag: the bundled ones, the host's merged over them (and over English). */
export function consoleCatalogues(extra: Readonly<Record<string, Partial<ConsoleMessages>>> = {}): Map<string, ConsoleLocale> {
  const set = new Map<string, ConsoleLocale>();
  for (const [tag, messages] of Object.entries(CONSOLE_CATALOGUES)) set.set(tag.toLowerCase(), { tag, messages });
  for (const [tag, messages] of Object.entries(extra)) {
    const base = set.get(tag.toLowerCase())?.messages ?? consoleEn;
    set.set(tag.toLowerCase(), { tag, messages: { ...base, ...messages } });
  }
  return set;
}

/** The first preferred language the console has (exact tag, then primary language), else `fallback`. */
export function chooseConsoleLocale(set: ReadonlyMap<string, ConsoleLocale>, header: string | undefined, fallback: string): ConsoleLocale {
  for (const wanted of parseAcceptLanguage(header)) {
    const lower = wanted.toLowerCase();
    const exact = set.get(lower) ?? set.get(lower.split('-')[0] ?? '');
    if (exact !== undefined) return exact;
  }
  return set.get(fallback.toLowerCase()) ?? { tag: 'en', messages: consoleEn };
}

/** Fills `{name}` placeholders (the page escapes the result). */
export function fillMessage(message: string, values: Readonly<Record<string, string>>): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}
