/**
 * Per-app markers of a session's index entry: what keeps an app named by the session once the tokens it got through
 * it expired.
 *
 * The index lists a grant only while a token of it can be used: for an app without the refresh_token grant, about
 * two access-token lifetimes, while the browser session lives on (8 h by default). Its local session at the app may
 * live as long as ours, so ending ours must still send it a logout token (Back-Channel Logout 1.0 §2.7: the OP
 * tracks the RPs logged in through each session). So when the last listed grant of an app expires while its
 * session lives, a marker takes its place in the entry: the same triple with an empty grant id (no grant has one)
 * and an `until` of the entry's `authTime` (stored as the offset 0). It lasts while the session does and names the
 * app to `clientIdsOf`; there is nothing to end for it, and the next grant of the app replaces it. Records written
 * before markers existed read unchanged, and a marker costs the app's client id plus 8 bytes of JSON
 * (`,"<clientId>","",0`), less than the grant it replaces.
 */

/** What this module needs of an indexed grant (session-index.ts `IndexedGrant`). */
interface ListedGrant {
  clientId: string;
  grantId: string;
  until: number;
}

/** What this module needs of an indexed session (session-index.ts `IndexedSession`). */
interface ListingSession {
  authTime: number;
  sessionEnd: number;
  grants: ListedGrant[];
}

/** Whether a listed grant is an app's marker rather than a grant. */
export function isAppMarker(grant: { grantId: string }): boolean {
  return grant.grantId === '';
}

/** The grants of `session` that are grants, not markers: those there is something to end or read of. */
export function grantsOnly<G extends { grantId: string }>(grants: G[]): G[] {
  return grants.some(isAppMarker) ? grants.filter((grant) => !isAppMarker(grant)) : grants;
}

/**
 * What `session` still lists at `now` (seconds since the epoch): its unexpired grants, and a marker for each app all
 * of whose grants expired while the session lives; markers go when the session ends. `session.grants` itself when
 * nothing changes, so the common read copies nothing.
 *
 * @example const grants = listedAt(session, nowSeconds());
 */
export function listedAt(session: ListingSession, now: number): ListedGrant[] {
  const sessionLives = session.sessionEnd > now;
  const lives = (grant: ListedGrant): boolean => (isAppMarker(grant) ? sessionLives : grant.until > now);
  if (session.grants.every(lives)) return session.grants;
  const kept = session.grants.filter(lives);
  if (!sessionLives) return kept;
  // At the place of the app's first expired grant, so the apps keep the order they first got tokens in.
  const named = new Set(kept.map((grant) => grant.clientId));
  const listed: ListedGrant[] = [];
  for (const grant of session.grants) {
    if (lives(grant)) listed.push(grant);
    else if (!named.has(grant.clientId)) {
      named.add(grant.clientId);
      listed.push({ clientId: grant.clientId, grantId: '', until: session.authTime });
    }
  }
  return listed;
}

/** `grants` without the marker of `clientId`, which a new grant of that app takes the place of. */
export function withoutMarkerOf<G extends ListedGrant>(grants: G[], clientId: string): G[] {
  const isMarkerOfApp = (grant: G): boolean => isAppMarker(grant) && grant.clientId === clientId;
  // Copied only when there is a marker to drop: an attach passes every session's grants through here.
  return grants.some(isMarkerOfApp) ? grants.filter((grant) => !isMarkerOfApp(grant)) : grants;
}
