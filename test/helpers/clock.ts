/**
 * Moving the service's clock instead of waiting for it. The service reads time through `Date.now()`, so a spy on
 * it is enough; calling `vi.restoreAllMocks()` (in the suite's afterEach) puts the real clock back.
 */
import { vi } from 'vitest';

/**
 * Moves `Date.now()` `seconds` ahead of the real clock, which keeps running underneath; a second call replaces
 * the first. Store TTLs kept by Redis or
 * PostgreSQL do not see it, so only the service's own time checks (lifetimes, `max_age`, `auth_time`) move.
 */
export function advanceClock(seconds: number): void {
  // Each call counts from the real clock, not from an earlier move.
  if (vi.isMockFunction(Date.now)) vi.mocked(Date.now).mockRestore();
  const real = Date.now.bind(Date);
  const start = real();
  const offset = seconds * 1000;
  vi.spyOn(Date, 'now').mockImplementation(() => start + offset + (real() - start));
}

/**
 * Stops `Date.now()` where it is and moves it only when the test says so: `at(seconds)` sets it `seconds` after the
 * moment of the call (not after the previous move). For checks at an exact bound — a whole-second age compared with
 * `>=` — where the real clock running underneath {@link advanceClock} (a slow machine, a second boundary crossed
 * between two requests) would push `bound - 1` over. Timers and store TTLs keep real time; `vi.restoreAllMocks()`
 * puts the real clock back.
 *
 * @example
 * const clock = frozenClock();
 * const cookie = await signIn(); // auth_time is this second
 * clock.at(119); // exactly 119 s later, however long the test takes
 */
export function frozenClock(): { at(seconds: number): void } {
  if (vi.isMockFunction(Date.now)) vi.mocked(Date.now).mockRestore();
  const start = Date.now();
  let offset = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => start + offset);
  return {
    at(seconds: number) {
      offset = seconds * 1000;
    },
  };
}

/** A clock a test moves by hand; see {@link movableClock}. */
export interface MovableClock {
  /** Moves `Date.now()` and `performance.now()` `ms` further ahead, then lets pending timers of 1 ms run. */
  advance(ms: number): Promise<void>;
  /** Puts both real clocks back. */
  restore(): void;
}

/**
 * Moves `Date.now()` and `performance.now()` together, by hand, for code that times expiry with either — the
 * MemoryStore's TTLs are lru-cache's, which reads `performance.now()` and caches a reading for 1 ms. The real
 * clocks keep running underneath.
 *
 * @example
 * const clock = movableClock();
 * await store.set('k', 'v', 100);
 * await clock.advance(500); // the value has expired
 * clock.restore();
 */
export function movableClock(): MovableClock {
  let offset = 0;
  const realDate = Date.now.bind(Date);
  const realPerformance = performance.now.bind(performance);
  const date = vi.spyOn(Date, 'now').mockImplementation(() => realDate() + offset);
  const monotonic = vi.spyOn(performance, 'now').mockImplementation(() => realPerformance() + offset);
  return {
    async advance(ms: number) {
      offset += ms;
      // lru-cache keeps a reading for its ttlResolution (1 ms) before it asks the clock again.
      await new Promise((resolve) => setTimeout(resolve, 2));
    },
    restore() {
      date.mockRestore();
      monotonic.mockRestore();
    },
  };
}
