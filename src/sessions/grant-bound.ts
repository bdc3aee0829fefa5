/**
 * The bound on the grants one app keeps through one device session (`session.maxGrantsPerApp`).
 *
 * Every code exchange through a session adds its grant to the user's index record, which every exchange reads and
 * rewrites. An app that signs in again and again through the same browser session (silent renewal, repeated logins,
 * a misbehaving app) would grow that record without end: each exchange dearer than the last, the record unbounded,
 * and concurrent exchanges of the user contending on one compare-and-set. So each (session, app) keeps its newest
 * grants only, and the oldest beyond the bound are ended. Google's OAuth 2.0 service does much the same: it caps the
 * live refresh tokens of one user and one client, and the oldest stop working once a new one passes the cap.
 *
 * The grants left over must be ended, not merely forgotten: the index is what ends a grant with its session, so a
 * grant it stopped listing would outlive a logout. This module only decides which; session-index.ts ends them
 * before it writes the index that drops them.
 */
/** What this module needs of an indexed grant (session-index.ts `IndexedGrant`). */
interface GrantOfApp {
  clientId: string;
  grantId: string;
}

/** What a session's grants become once `added` joins them: the grants to list, and the ones to end first. */
export interface BoundedGrants<G extends GrantOfApp> {
  kept: G[];
  ended: G[];
}

/**
 * Adds `added` to a session's `grants` (oldest first, the order they joined) and keeps at most `maxPerApp` of its
 * app's: the oldest of that app beyond the bound go to `ended`. Other apps' grants are never touched, and `added`
 * (the newest) is always kept.
 *
 * @example
 * const { kept, ended } = boundGrantsPerApp(session.grants, { clientId, grantId, until }, 16);
 */
export function boundGrantsPerApp<G extends GrantOfApp>(grants: G[], added: G, maxPerApp: number): BoundedGrants<G> {
  // One pass: the grants without `added` (a retried attach lists it once), and how many of its app there are.
  const all: G[] = [];
  let ofApp = 1;
  for (const grant of grants) {
    if (grant.grantId === added.grantId) continue;
    all.push(grant);
    if (grant.clientId === added.clientId) ofApp++;
  }
  all.push(added);
  let excess = ofApp - Math.max(1, maxPerApp);
  if (excess <= 0) return { kept: all, ended: [] };
  const kept: G[] = [];
  const ended: G[] = [];
  for (const grant of all) {
    if (excess > 0 && grant.clientId === added.clientId) {
      ended.push(grant);
      excess--;
    } else {
      kept.push(grant);
    }
  }
  return { kept, ended };
}
