/**
 * Reading a record the service stored as JSON, the one way every record module does it. The module that owns a key
 * prefix (docs/ARCHITECTURE.md#stored-records) says which fields make a record; a value that is not JSON or lacks
 * them reads as absent, and the owner decides what absence means (a new sign-in, an expired link, a failure).
 */

/**
 * Parses a stored value; `null` for no value, a value that is not JSON, or one `isRecord` refuses.
 *
 * @example
 * const session = parseStoredRecord<SessionRecord>(await store.get(key), (r) => typeof r.userId === 'string');
 */
export function parseStoredRecord<T>(value: string | null, isRecord: (candidate: Partial<T>) => boolean): T | null {
  if (value === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  return isRecord(parsed as Partial<T>) ? (parsed as T) : null;
}
