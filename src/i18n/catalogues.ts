/**
 * The bundled catalogues and the host's additions, merged once per configuration. A host catalogue for a new
 * language may be partial: what it leaves out is shown in English rather than as a blank.
 */
import { ar } from './ar.js';
import { de } from './de.js';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { ja } from './ja.js';
import type { Messages } from './messages.js';
import { matchTag } from './match-tag.js';
import { ptBR } from './pt-BR.js';

/**
 * The languages that ship with the service, by language tag (RFC 5646); a base for a host's own catalogue.
 *
 * @example
 * createSentinel({ ..., i18n: { catalogues: { 'es-MX': { ...BUNDLED_CATALOGUES.es, passkeySkip: 'Ahorita no' } } } })
 */
export const BUNDLED_CATALOGUES: Readonly<Record<string, Messages>> = Object.freeze({
  en,
  es,
  'pt-BR': ptBR,
  fr,
  de,
  ja,
  ar,
});

/** Every language a configuration can show, by lower-cased tag, with the tag as written. */
export interface CatalogueSet {
  readonly byTag: ReadonlyMap<string, { tag: string; messages: Messages }>;
  readonly defaultTag: string;
}

const cache = new WeakMap<object, CatalogueSet>();

/**
 * The catalogues of a configuration: bundled ones with the host's strings laid over them, plus the host's own
 * languages. Cached per `i18n` option object, since it never changes after startup.
 *
 * @example
 * const set = catalogueSet(context.config.i18n);
 */
export function catalogueSet(options: { defaultLocale: string; catalogues: Readonly<Record<string, Partial<Messages>>> }): CatalogueSet {
  const cached = cache.get(options);
  if (cached !== undefined) return cached;
  const byTag = new Map<string, { tag: string; messages: Messages }>();
  for (const [tag, messages] of Object.entries(BUNDLED_CATALOGUES)) byTag.set(tag.toLowerCase(), { tag, messages });
  for (const [tag, overrides] of Object.entries(options.catalogues)) {
    const base = byTag.get(tag.toLowerCase());
    // Only known message names with text are taken: a typo must not add stray keys, and a message left `undefined`
    // (what an i18n library answers for a key it lacks, and what `.partial()` lets through) keeps the bundled or
    // English one, where spreading it would replace it and make every page of the language throw.
    const known = Object.fromEntries(
      Object.entries(overrides).filter(([name, text]) => Object.hasOwn(en, name) && typeof text === 'string'),
    );
    byTag.set(tag.toLowerCase(), { tag: base?.tag ?? tag, messages: { ...(base?.messages ?? en), ...known } });
  }
  // Found as a browser's preference is (`es-MX` shows `es`); the options schema refuses one that finds nothing.
  const fallback = matchTag(byTag, options.defaultLocale) ?? 'en';
  const set: CatalogueSet = { byTag, defaultTag: fallback };
  cache.set(options, set);
  return set;
}
