/**
 * Choosing the page language: the app's `ui_locales` first (OpenID Connect Core §3.1.2.1, the app knows the
 * user's choice), then the browser's `Accept-Language` (RFC 9110 §12.5.4, by quality), then the configured default.
 * A tag matches exactly, or by its primary language (`pt-PT` and `pt` fall to `pt-BR`, `es-MX` to `es`).
 */
import type { CatalogueSet } from './catalogues.js';
import { matchTag, primary } from './match-tag.js';
import type { Messages } from './messages.js';

/** How many preferences are looked at: a browser sends a handful; a hostile header must not cost more. */
const MAX_PREFERENCES = 20;
const MAX_HEADER = 1024;
/**
 * A qvalue of RFC 9110 §12.4.2: 0 to 1, at most three decimals. Anything else (`1.999`, `2`, `abc`) is malformed,
 * and its entry is dropped: reading it as 1 would let a broken header outrank the weights it meant to give.
 */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Primary languages written right to left when the tag names no script (their usual script is). */
const RTL = new Set([
  'ar',
  'he',
  'iw',
  'fa',
  'prs',
  'ur',
  'ps',
  'yi',
  'ji',
  'dv',
  'ckb',
  'sdh',
  'sd',
  'ug',
  'ks',
  'syr',
  'nqo',
  'azb',
  'lrc',
  'mzn',
]);

/** Scripts written right to left (ISO 15924 codes, lower-cased). */
const RTL_SCRIPTS = new Set(['adlm', 'arab', 'aran', 'hebr', 'mand', 'mend', 'nkoo', 'rohg', 'samr', 'syrc', 'thaa', 'yezi']);

/**
 * The direction of a tag's text. A script subtag decides when there is one (RFC 5646 §2.2.3): a host's `ku-Arab`,
 * `pa-Arab` or `uz-Arab` catalogue is right to left though the language usually is not, and `sd-Deva` is left to
 * right though Sindhi usually is not. Without one, the language's usual script decides. The console's pages take
 * their direction from it too.
 *
 * @example
 * direction('ar') // 'rtl'
 * direction('ku-Arab') // 'rtl'
 */
export function direction(tag: string): 'ltr' | 'rtl' {
  const script = tag.split('-')[1];
  if (script !== undefined && /^[A-Za-z]{4}$/.test(script)) return RTL_SCRIPTS.has(script.toLowerCase()) ? 'rtl' : 'ltr';
  return RTL.has(primary(tag)) ? 'rtl' : 'ltr';
}

/** The language a page is shown in. */
export interface PageLocale {
  /** The tag for `<html lang>`. */
  tag: string;
  dir: 'ltr' | 'rtl';
  messages: Messages;
}

/**
 * The tags of an `Accept-Language` header, best first (ties keep their order), without `*`, `q=0` and entries whose
 * `q` is malformed.
 *
 * @example
 * parseAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8') // ['fr-CH', 'fr', 'en']
 */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (header === undefined || header.length > MAX_HEADER) return [];
  const entries: { tag: string; q: number; index: number }[] = [];
  for (const [index, part] of header.split(',').slice(0, MAX_PREFERENCES).entries()) {
    const [rawTag = '', ...parameters] = part.split(';');
    const tag = rawTag.trim();
    if (tag === '' || tag === '*') continue;
    let q = 1;
    for (const parameter of parameters) {
      const weight = /^\s*q\s*=\s*(.*?)\s*$/i.exec(parameter)?.[1];
      if (weight === undefined) continue;
      // A malformed weight drops the entry (NaN is not > 0), whatever parameter follows it.
      if (!QVALUE.test(weight)) {
        q = Number.NaN;
        break;
      }
      q = Number(weight);
    }
    if (q > 0) entries.push({ tag, q, index });
  }
  return entries.sort((a, b) => b.q - a.q || a.index - b.index).map((entry) => entry.tag);
}

/**
 * The page language for the given preferences (most preferred first).
 *
 * @example
 * chooseLocale(set, [...uiLocales, ...parseAcceptLanguage(acceptLanguage)])
 */
export function chooseLocale(set: CatalogueSet, preferences: readonly string[]): PageLocale {
  let chosen = set.defaultTag;
  for (const wanted of preferences.slice(0, MAX_PREFERENCES * 2)) {
    const found = matchTag(set.byTag, wanted);
    if (found !== null) {
      chosen = found;
      break;
    }
  }
  const entry = set.byTag.get(chosen) ?? set.byTag.get('en');
  if (entry === undefined) throw new Error('sentinel-idp: the English catalogue is missing');
  return { tag: entry.tag, dir: direction(entry.tag), messages: entry.messages };
}
