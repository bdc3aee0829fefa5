/**
 * Which refusals are audited: only those of accounts that exist. Anyone can send requests naming any number of
 * made-up accounts, and a `token.denied` / `authorize.denied` event each would be a row of the audit log (the
 * PostgreSQL log is append-only for its retention) or a slot of the in-memory ring that pushes real accounts' events
 * out, for an account no operator can read. The refusal is answered exactly as before; the telemetry counters still
 * count it (unknown accounts share one series), so a flood stays visible.
 *
 * The check asks the AppStore, which on PostgreSQL caches only the accounts it finds: a flood of made-up ids would
 * cost a query each. The answers "no such account" are kept here a few seconds, in a bounded LRU, and used for the
 * audit only: an account created meanwhile works at once (no request path reads this cache), and only its first
 * refusals, for at most {@link UNKNOWN_TTL_MS}, go unaudited on this instance.
 */
import { LRUCache } from 'lru-cache';
import type { AppStore } from '../apps/app.js';
import type { ResolvedConfig } from '../config.js';
import { catchRejection, isThenable } from '../lib/thenable.js';

/** How long a "no such account" answer is trusted for the audit: short, since the account may be created any time. */
export const UNKNOWN_TTL_MS = 10_000;

/** Most unknown ids remembered, and their total length: an id is a path segment any client chooses. */
const MAX_IDS = 10_000;
const MAX_CHARS = 1_000_000;

/**
 * Whether a refusal naming `accountId` is audited. `true` when the AppStore fails: the request is refused anyway, so
 * the check fails open for the audit alone (an event too many beats a refusal of a real account going unrecorded),
 * and the failure goes to `onFailure` instead of turning the 4xx into a 500.
 */
export type DeniedAccountCheck = (accountId: string, onFailure: (error: unknown) => void) => Promise<boolean>;

/**
 * The check of one service, with its own cache of unknown accounts.
 *
 * @example
 * const audited = deniedAccountCheck(context.apps);
 * if (await audited(params.accountId, (error) => report(error, route, params.accountId))) context.emit(event);
 */
export function deniedAccountCheck(apps: Pick<AppStore, 'hasAccount'>): DeniedAccountCheck {
  const unknown = new LRUCache<string, true>({
    max: MAX_IDS,
    maxSize: MAX_CHARS,
    sizeCalculation: (_value, key) => Math.max(1, key.length),
    ttl: UNKNOWN_TTL_MS,
    ttlResolution: 0,
  });
  return async (accountId, onFailure) => {
    if (unknown.has(accountId)) return false;
    let known: boolean;
    try {
      const answer = apps.hasAccount(accountId);
      known = isThenable(answer) ? await answer : answer;
    } catch (error) {
      onFailure(error);
      return true;
    }
    // Longer than the whole cache: not kept (lru-cache refuses it), asked again next time.
    if (!known && accountId.length <= MAX_CHARS) unknown.set(accountId, true);
    return known;
  };
}

// One check per AppStore, so that the edge and the handlers that emit their own refusals share its cache.
const CHECKS = new WeakMap<object, DeniedAccountCheck>();

/**
 * The check of the service whose AppStore is `apps` (made on first use, then shared).
 *
 * @example
 * const audited = deniedAccountCheckOf(context.apps);
 */
export function deniedAccountCheckOf(apps: Pick<AppStore, 'hasAccount'>): DeniedAccountCheck {
  let check = CHECKS.get(apps);
  if (check === undefined) {
    check = deniedAccountCheck(apps);
    CHECKS.set(apps, check);
  }
  return check;
}

/**
 * Whether a refusal a handler emits itself, naming `accountId`, is audited: as at the edge, an AppStore that fails
 * goes to `onError` (with `route`) and the event is emitted.
 *
 * @example
 * if (await auditsAccount(context, accountId, 'client-configuration')) context.emit(event);
 */
export function auditsAccount(
  context: { readonly apps: Pick<AppStore, 'hasAccount'>; readonly config: Pick<ResolvedConfig, 'onError'> },
  accountId: string,
  route: string,
): Promise<boolean> {
  return deniedAccountCheckOf(context.apps)(accountId, (error) => {
    try {
      catchRejection(context.config.onError?.(error, { route, accountId }));
    } catch {
      // A throwing onError must not turn the refusal into a crash.
    }
  });
}
