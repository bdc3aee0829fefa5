/**
 * A Store that opens a race window on purpose: once armed, the first read that `opensWindow` picks runs the armed
 * action after the value was read and before the reader gets it, so a test makes "another request acted in between"
 * happen every time instead of by luck. Every other call goes straight to the inner store.
 */
import type { Store } from '../../src/index.js';

/** The store and its trigger: `arm(action)` runs `action` once, inside the next read `opensWindow` picks. */
export type RacingStore = Store & { arm(action: () => Promise<void>): void };

/**
 * Wraps `inner`; `opensWindow(key, value)` says which read the armed action runs inside.
 *
 * @example const store = racingStore(new MemoryStore(), (key) => key.startsWith('session:')); store.arm(() => logout());
 */
export function racingStore(inner: Store, opensWindow: (key: string, value: string | null) => boolean): RacingStore {
  let armed: (() => Promise<void>) | undefined;
  const { decrement } = inner;
  return {
    arm: (action) => {
      armed = action;
    },
    get: async (key) => {
      const value = await inner.get(key);
      const action = armed;
      if (action !== undefined && opensWindow(key, value)) {
        armed = undefined;
        await action();
      }
      return value;
    },
    set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
    take: (key) => inner.take(key),
    delete: (key) => inner.delete(key),
    increment: (key, ttlMs) => inner.increment(key, ttlMs),
    swap: (entries) => inner.swap(entries),
    // Only when the inner store has it: the throttles take a different path without it.
    ...(decrement === undefined ? {} : { decrement: (key: string) => decrement.call(inner, key) }),
  };
}
