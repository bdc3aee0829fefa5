/**
 * Taking a slot on a throttle counter when the Store may have no room for it. MemoryStore keeps counters in
 * never-evicted security areas whose writes fail (`SecurityStateFullError`) when full, and anyone who can send the
 * counted request can help fill one. Every throttle (failed logins, registration tokens) must then answer alike: the
 * attempt is refused as a throttled one, never let through uncounted, and the host hears of the full area once per
 * window rather than once per request of the flood that filled it.
 */
import { catchRejection } from '../lib/thenable.js';
import type { Store } from './store.js';

/**
 * What {@link takeCounterSlot} needs of a service: its Store and the host's `onError`. `config` is the service's
 * resolved configuration object, which also tells services in one process apart for the report's pause.
 */
export interface CounterContext {
  readonly store: Pick<Store, 'increment'>;
  readonly config: { readonly onError?: ((error: unknown, context: { route: string }) => void) | undefined };
}

/**
 * Whether `error` says the store has no room for security state. By name, not `instanceof`: the core may be loaded
 * twice (ESM and CommonJS builds), each with its own class.
 *
 * @example
 * try { await store.set(key, '1', ttlMs); } catch (error) { if (isSecurityStateFull(error)) refuse(); else throw error; }
 */
export function isSecurityStateFull(error: unknown): boolean {
  return error instanceof Error && error.name === 'SecurityStateFullError';
}

/** Until when (ms since the epoch) a full area is not reported again, per service (keyed by its resolved config). */
const reportedUntil = new WeakMap<CounterContext['config'], number>();

/**
 * Counts one attempt on `key` with the Store's atomic `increment` and returns the new count. A counter the store has
 * no room for reads as over every limit (`Infinity`), so the caller refuses the attempt as throttled; its cause
 * reaches `onError` (route `throttle`) at most once per `windowMs`. Any other failure of the store is thrown, and so is
 * an answer that is not a number: a throttle that cannot read its count fails closed (500, `onError`).
 *
 * @example
 * if ((await takeCounterSlot(context, key, windowMs)) > limit) throw tooManyAttempts();
 */
export async function takeCounterSlot(context: CounterContext, key: string, windowMs: number): Promise<number> {
  let count: unknown;
  try {
    count = await context.store.increment(key, windowMs);
  } catch (error) {
    if (!isSecurityStateFull(error)) throw error;
    const now = Date.now();
    if ((reportedUntil.get(context.config) ?? 0) <= now) {
      reportedUntil.set(context.config, now + windowMs);
      try {
        catchRejection(context.config.onError?.(error, { route: 'throttle' }));
      } catch {
        // A throwing onError must not turn a refused attempt into a 500.
      }
    }
    return Number.POSITIVE_INFINITY;
  }
  return countAnswered(count);
}

/**
 * The count a Store's `increment` answered, or a thrown error (500, `onError`) for an answer that is no number (a
 * custom Store's bug). Every decision on a count needs it: `count > limit` is false for undefined, null or NaN, which
 * would let every attempt through uncounted, and `count !== 1` would take every single use for a replay, refusing
 * each right credential with nothing for the operator.
 *
 * @example
 * const uses = countAnswered(await store.increment(key, ttlMs));
 */
export function countAnswered(count: unknown): number {
  if (typeof count !== 'number' || Number.isNaN(count)) {
    throw new Error(
      `sentinel-idp: store.increment answered ${count === null ? 'null' : typeof count}, not a count; the attempt is refused`,
    );
  }
  return count;
}
