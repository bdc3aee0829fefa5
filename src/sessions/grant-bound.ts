/**
 * The bounds on what one device session keeps: the grants of one app (`session.maxGrantsPerApp`), and the apps
 * (`session.maxAppsPerSession`).
 *
 * Every code exchange through a session adds its grant to the user's index record, which every exchange reads and
 * rewrites. An app that signs in again and again through the same browser session (silent renewal, repeated logins,
 * a misbehaving app) would grow that record without end: each exchange dearer than the last, the record unbounded,
 * and concurrent exchanges of the user contending on one compare-and-set. So each (session, app) keeps its newest
 * grants only, and the oldest beyond the bound are ended. Google's OAuth 2.0 service does much the same: it caps the
 * live refresh tokens of one user and one client, and the oldest stop working once a new one passes the cap.
 *
 * That bounds one app only. With client ID metadata documents anyone can mint a client, so one signed-in user could
 * still grow her record without end, one new app at a time, and with MemoryStore fill the budget every user's
 * sign-in needs (`sessionIndexMaxBytes`). So a session also keeps the grants of its most recently used apps only:
 * the grants of the app used least recently go once a new app passes the bound, and its marker (app-marker.ts),
 * which counts as an app so that expired grants cannot grow the record either.
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

/**
 * Keeps the grants of at most `maxApps` apps in a session's `grants` (as {@link boundGrantsPerApp} left them, the
 * newest last): when `clientId` (the app just added) makes one app too many, every grant and marker of the app used
 * least recently (whose newest entry stands first) goes to `ended`, and so on until the bound holds. The grants of
 * `clientId` are always kept.
 *
 * @example
 * const { kept, ended } = boundAppsPerSession(perApp.kept, clientId, 64);
 */
export function boundAppsPerSession<G extends GrantOfApp>(grants: G[], clientId: string, maxApps: number): BoundedGrants<G> {
  // Each app's newest entry: a Map keeps the order of first insertion, so delete before setting again.
  const lastUse = new Map<string, number>();
  for (const [at, grant] of grants.entries()) {
    lastUse.delete(grant.clientId);
    lastUse.set(grant.clientId, at);
  }
  let excess = lastUse.size - Math.max(1, maxApps);
  if (excess <= 0) return { kept: grants, ended: [] };
  const dropped = new Set<string>();
  for (const app of lastUse.keys()) {
    if (excess <= 0) break;
    if (app === clientId) continue;
    dropped.add(app);
    excess--;
  }
  const kept: G[] = [];
  const ended: G[] = [];
  for (const grant of grants) (dropped.has(grant.clientId) ? ended : kept).push(grant);
  return { kept, ended };
}
