/**
 * A view of a Store that counts the compare-and-set writes of session indexes (`user-sessions:` keys): how many
 * landed and how many lost to another write. Each view is a distinct object, so two views of one store are two
 * instances of the service to the index's in-process queue (which is kept per store object) while sharing the data.
 */
import type { Store } from '../../src/index.js';

/** The counts of one view. */
export interface IndexWrites {
  landed: number;
  lost: number;
}

/**
 * Wraps `inner`; every method but `swap` is `inner`'s own, bound to it (private fields of a class store keep working).
 *
 * @example const { store, writes } = countingIndexWrites(new MemoryStore()); … expect(writes.lost).toBe(0);
 */
export function countingIndexWrites<S extends Store>(inner: S): { store: S; writes: IndexWrites } {
  const writes: IndexWrites = { landed: 0, lost: 0 };
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'swap') {
        return async (entries: Parameters<Store['swap']>[0]) => {
          const applied = await target.swap(entries);
          if (entries.some((entry) => entry.key.startsWith('user-sessions:'))) writes[applied ? 'landed' : 'lost']++;
          return applied;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, writes };
}
