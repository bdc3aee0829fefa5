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
