/**
 * Which catalogue shows a language tag (RFC 5646): the same tag, else its primary language, else another tag of that
 * language. Shared by the negotiation of a page's language and the check of the `i18n.defaultLocale` option, so the
 * default is found the way a browser's preference is.
 */

/**
 * The primary language subtag of a tag, lower-cased.
 *
 * @example
 * primary('pt-BR') // 'pt'
 */
export function primary(tag: string): string {
  return tag.toLowerCase().split('-')[0] ?? '';
}

/**
 * The lower-cased tag of `tags` (lower-cased themselves) that shows `wanted`: the same tag, else its primary language,
 * else another tag of that language. `null` when none does. The `i18n.defaultLocale` option is checked with it too,
 * so the default is found the way a browser's preference is.
 *
 * @example
 * matchTag(new Set(['en', 'es', 'pt-br']), 'es-MX') // 'es'
 */
export function matchTag(tags: ReadonlySet<string> | ReadonlyMap<string, unknown>, wanted: string): string | null {
  const lower = wanted.toLowerCase();
  if (tags.has(lower)) return lower;
  const language = primary(lower);
  if (tags.has(language)) return language;
  for (const tag of tags.keys()) if (primary(tag) === language) return tag;
  return null;
}
