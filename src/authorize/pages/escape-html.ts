/**
 * HTML escaping for every value interpolated into the service's pages (login, error, signed-out). User input
 * (usernames, error descriptions, app names) reaches these pages, so nothing is interpolated unescaped.
 */

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/**
 * Escapes text for an HTML element body or a quoted attribute value.
 *
 * @example
 * `<p>${escapeHTML(description)}</p>`
 */
export function escapeHTML(value: string): string {
  return value.replace(/[&<>"'`]/g, (character) => ESCAPES[character] ?? character);
}
