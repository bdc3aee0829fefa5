/**
 * Which of the RFC 8693 token-exchange and RFC 7523 JWT bearer grants an account's metadata lists: those an app of
 * the account is registered for. The registry is asked only when it can list apps; one that cannot leaves them
 * out (the document lists only what works, and a grant no app has does not).
 *
 * Listing every app of the account is the one costly read behind a document anyone may fetch without credentials:
 * a PostgreSQL registry reads all the account's rows for it. So one answer per account is kept for `jwksMaxAge`
 * seconds, the time the document's own `Cache-Control` already lets any cache serve it, and requests that arrive
 * while it is read share that read. A failed read is not kept: the next request reads again.
 */
import type { SentinelContext } from '../http/context.js';

/** The service's application registry. */
type AppStore = SentinelContext['apps'];

const EXCHANGE_GRANTS = ['urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:jwt-bearer'] as const;

/** Accounts whose answer is kept at once per registry; the oldest goes first. Unknown accounts never get here (404). */
const MAX_KEPT_ACCOUNTS = 10_000;

interface Kept {
  /** Milliseconds since the epoch after which the answer is read again; `Infinity` while the read runs. */
  until: number;
  grants: Promise<string[]>;
}

/** The kept answers of each registry (one per service), by account id. */
const keptByRegistry = new WeakMap<AppStore, Map<string, Kept>>();

async function readExchangeGrants(list: NonNullable<AppStore['listApps']>, accountId: string): Promise<string[]> {
  const listed = await list(accountId);
  return EXCHANGE_GRANTS.filter((grant) => listed.some((app) => app.disabled !== true && app.grantTypes.includes(grant)));
}

/**
 * The exchange grants some app of `accountId` is registered for, in a fixed order.
 * @example const extra = await exchangeGrantsOf(context, '123456'); // ['urn:ietf:params:oauth:grant-type:jwt-bearer']
 */
export async function exchangeGrantsOf(context: SentinelContext, accountId: string): Promise<string[]> {
  const { apps } = context;
  if (apps.listApps === undefined) return [];
  const list = apps.listApps.bind(apps);
  let kept = keptByRegistry.get(apps);
  if (kept === undefined) {
    kept = new Map();
    keptByRegistry.set(apps, kept);
  }
  const found = kept.get(accountId);
  if (found !== undefined && found.until > Date.now()) return found.grants;
  const entry: Kept = { until: Number.POSITIVE_INFINITY, grants: readExchangeGrants(list, accountId) };
  kept.delete(accountId);
  if (kept.size >= MAX_KEPT_ACCOUNTS) kept.delete(kept.keys().next().value as string);
  kept.set(accountId, entry);
  try {
    const grants = await entry.grants;
    entry.until = Date.now() + context.config.jwksMaxAge * 1000;
    return grants;
  } catch (error) {
    if (kept.get(accountId) === entry) kept.delete(accountId);
    throw error;
  }
}
