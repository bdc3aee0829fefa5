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

/**
 * Escapes a name someone else chose (an app's name, a user's, an account id, a host) and isolates it from the
 * text around it with `<bdi>` (HTML §4.5.24, Unicode bidirectional isolation). Without it, in a right-to-left page
 * `Acme (beta)` reads `(Acme (beta`, a name in Arabic script next to Latin text reorders the sentence, and a
 * name carrying an unclosed override (U+202E) or isolate reorders whatever follows it ("… wants access to your
 * account"). Inside the isolate whatever the name holds ends with it.
 *
 * @example
 * `<p>${fill(escapeHTML(messages.continueTo), { app: `<strong>${isolateHTML(appName)}</strong>` })}</p>`
 */
export function isolateHTML(value: string): string {
  return `<bdi>${escapeHTML(value)}</bdi>`;
}
