/**
 * Event text as PostgreSQL can store it. A string from a request may hold a lone UTF-16 surrogate (`'x\udc00y'`):
 * `JSON.stringify` writes it as a `\udc00` escape, which `jsonb` refuses, and `escapeEventFields` escapes control
 * characters only. NUL is refused by `jsonb` and `text` alike (where an event does not come through `auditEvent`,
 * which escapes it). Either would cost the event, and with it the batch it was written in.
 */

/** `String.prototype.toWellFormed` (ES2024, in every Node this package supports; the compiler's library is ES2022). */
type WellFormed = { toWellFormed(): string };

/**
 * `text` with each lone surrogate and each NUL replaced by U+FFFD, the replacement character.
 *
 * @example storableText('x\udc00y') // 'x\ufffdy'
 */
export function storableText(text: string): string {
  return (text as unknown as WellFormed).toWellFormed().replaceAll('\u0000', '\ufffd');
}

/**
 * `JSON.stringify(value)` with every string, and every property name, made {@link storableText}: text `jsonb` accepts.
 *
 * @example storableJson({ clientId: 'x\udc00y' }) // '{"clientId":"x\ufffdy"}'
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_name, item: unknown) => {
    if (typeof item === 'string') return storableText(item);
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const entries = Object.entries(item);
    // A copy only when a name needs it: the values are then visited through the copy.
    if (entries.every(([name]) => storableText(name) === name)) return item;
    return Object.fromEntries(entries.map(([name, inner]) => [storableText(name), inner]));
  });
}
