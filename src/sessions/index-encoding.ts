/**
 * The stored form of a user's session index (session-index.ts).
 *
 * Stored form (one per signed-in user, so it is compact): a JSON array `[userId, entry, entry, …]`, each entry
 * `[sessionDigest, authTime, sessionEnd, clientId, grantId, grantEnd, clientId, grantId, grantEnd, …]` with
 * `authTime` in seconds since the epoch and the ends in seconds after it. The account is not stored: the key is a
 * digest of account and user, and whoever reads an index knows the account it asks for. Indexes written by earlier
 * versions, `[accountId, userId, entry, …]` with every time since the epoch, still read (a string where the first
 * entry would be tells them apart); the next change writes them in the new form. An entry is kept while its session
 * or any grant it lists may still live, and pruned on the next write after that. A grant id of `""` is an app's
 * marker (app-marker.ts): the app got tokens through the session, and they expired while the session lives. An entry
 * that carries the earlier sessions of its browser (`carried`) ends with the array of their digests: the one element
 * after the triples.
 */

/** One grant issued through a session. */
export interface IndexedGrant {
  clientId: string;
  grantId: string;
  /** Seconds since the epoch after which no token of the grant can be used. */
  until: number;
}

/** One device session of a user, as the index keeps it. */
export interface IndexedSession {
  /** The digest of the session id (session.ts `sessionDigestOf`): the session record's key is `session:{sessionDigest}`. */
  sessionDigest: string;
  /** Seconds since the epoch when the user authenticated. */
  authTime: number;
  /** Seconds since the epoch when the session reaches its absolute end. */
  sessionEnd: number;
  grants: IndexedGrant[];
  /**
   * The digests of the earlier sessions of the same user in the same browser that this one replaced (a new sign-in:
   * `prompt=login`, `max_age`, a step-up), whose entries stay listed with their grants: ending this session ends
   * them too, each with its own sid, the one its apps know.
   */
  carried?: string[] | undefined;
}

/** One stored entry: its ends are offsets from its `authTime` when `relative`, else seconds since the epoch (the earlier form). */
function parseEntry(value: unknown, relative: boolean): IndexedSession | null {
  // After the triples: nothing, or the one array of carried sessions.
  if (!Array.isArray(value) || value.length < 3 || (value.length - 3) % 3 === 2) return null;
  const carried: unknown = (value.length - 3) % 3 === 1 ? value[value.length - 1] : [];
  if (!Array.isArray(carried) || !carried.every((digest) => typeof digest === 'string')) return null;
  const sessionDigest: unknown = value[0];
  const authTime: unknown = value[1];
  const sessionEnd: unknown = value[2];
  if (typeof sessionDigest !== 'string' || typeof authTime !== 'number' || typeof sessionEnd !== 'number') return null;
  const base = relative ? authTime : 0;
  const grants: IndexedGrant[] = [];
  for (let i = 3; i + 2 < value.length; i += 3) {
    const clientId: unknown = value[i];
    const grantId: unknown = value[i + 1];
    const until: unknown = value[i + 2];
    if (typeof clientId !== 'string' || typeof grantId !== 'string' || typeof until !== 'number') return null;
    grants.push({ clientId, grantId, until: base + until });
  }
  const entry: IndexedSession = { sessionDigest, authTime, sessionEnd: base + sessionEnd, grants };
  if (carried.length > 0) entry.carried = carried as string[];
  return entry;
}

/**
 * Parses a stored index, in either form: `accountId` is there only in the earlier one. A value that is not one
 * (store corruption) is an error, never an empty index: reading it as empty would let grants of ended sessions be
 * forgotten rather than ended.
 */
export function parseIndex(raw: string): { accountId: string | undefined; userId: string; sessions: IndexedSession[] } {
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'string') throw new Error('the stored session index is unreadable');
  const earlier = typeof parsed[1] === 'string';
  const sessions: IndexedSession[] = [];
  for (let i = earlier ? 2 : 1; i < parsed.length; i++) {
    const entry = parseEntry(parsed[i], !earlier);
    if (entry === null) throw new Error('the stored session index is unreadable');
    sessions.push(entry);
  }
  return earlier ? { accountId: parsed[0], userId: parsed[1] as string, sessions } : { accountId: undefined, userId: parsed[0], sessions };
}

/** The stored form of `sessions` of `userId` (the current form, whatever form it was read in). */
export function encodeIndex(userId: string, sessions: IndexedSession[]): string {
  const stored: unknown[] = [userId];
  for (const session of sessions) {
    const base = session.authTime;
    const flat: (string | number)[] = [session.sessionDigest, base, session.sessionEnd - base];
    for (const grant of session.grants) flat.push(grant.clientId, grant.grantId, grant.until - base);
    stored.push(session.carried === undefined || session.carried.length === 0 ? flat : [...flat, session.carried]);
  }
  return JSON.stringify(stored);
}
