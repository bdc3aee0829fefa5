/**
 * A MemoryStore that can lose everything at once, as a Redis without persistence does when it restarts: what the
 * replay-epoch tests (src/stores/replay-epoch.ts) restart under a running service.
 */
import { MemoryStore, type Store } from '../../src/index.js';

/** A store whose `restart()` replaces every record with nothing. */
export function restartableStore(): Store & { restart(): void } {
  let inner = new MemoryStore();
  return {
    restart: () => {
      inner = new MemoryStore();
    },
    get: (key) => inner.get(key),
    set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
    take: (key) => inner.take(key),
    delete: (key) => inner.delete(key),
    increment: (key, ttlMs) => inner.increment(key, ttlMs),
    decrement: (key) => inner.decrement(key),
    swap: (entries) => inner.swap(entries),
  };
}
