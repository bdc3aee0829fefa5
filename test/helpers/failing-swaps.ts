/**
 * A view of a Store whose chosen swaps fail: a test arms a predicate over a swap's entries, and the next swaps it
 * picks reject (as a store that is down or out of memory would) without reaching the inner store. Every other call
 * is the inner store's own, bound to it, so a class store's private fields keep working.
 */
import type { Store, SwapEntry } from '../../src/index.js';

/** Which swaps fail: `pick` chooses them, `times` says how many more of them. */
export interface SwapFailure {
  pick: (entries: readonly SwapEntry[]) => boolean;
  times: number;
  /** The swap reaches the inner store and applies, and only its answer is lost (a Redis timeout after Redis ran it). */
  landed?: boolean;
}

/** The store, its trigger, and every failure it has caused so far. */
export interface FailingSwaps<S extends Store> {
  store: S;
  /**
   * Makes the next `times` swaps that `pick` chooses reject (in addition to any failure already armed); with
   * `landed`, each applies first and only its answer is lost.
   */
  fail(pick: SwapFailure['pick'], times?: number, landed?: boolean): void;
  /** The errors the picked swaps rejected with, in order. */
  failed: Error[];
}

/** A swap that writes a user's session index (`user-sessions:`), as a grant joining its session does. */
export const writesIndex = (entries: readonly SwapEntry[]): boolean => entries.some((entry) => entry.key.startsWith('user-sessions:'));

/**
 * Wraps `inner`.
 *
 * @example const { store, fail } = failingSwaps(new MemoryStore()); fail(writesIndex); // the next index write rejects
 */
export function failingSwaps<S extends Store>(inner: S): FailingSwaps<S> {
  const armed: SwapFailure[] = [];
  const failed: Error[] = [];
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'swap') {
        return (entries: readonly SwapEntry[]) => {
          const failure = armed.find((candidate) => candidate.times > 0 && candidate.pick(entries));
          if (failure === undefined) return target.swap(entries);
          failure.times--;
          const error = new Error(`store failed (swap #${failed.length + 1} picked by the test)`);
          failed.push(error);
          return failure.landed === true ? target.swap(entries).then(() => Promise.reject(error)) : Promise.reject(error);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store,
    fail: (pick, times = 1, landed = false) => {
      armed.push({ pick, times, landed });
    },
    failed,
  };
}
