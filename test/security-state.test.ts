/**
 * SecurityState, the never-evicting TTL map behind MemoryStore's replay markers and throttle counters: its byte
 * count must stay exact through replacements, reads of expired entries and purges, or the area would refuse writes
 * it has room for (every DPoP request and brand JWT exchange answered 500) or hold more than its budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { entryBytes } from '../src/stores/memory-size.js';
import { SecurityState, SecurityStateFullError } from '../src/stores/security-state.js';
import { movableClock } from './helpers/clock.js';

let clock: ReturnType<typeof movableClock> | undefined;
afterEach(() => {
  clock?.restore();
  clock = undefined;
});

describe('SecurityState', () => {
  it('charges a replaced entry once: rewriting one key never fills the budget', () => {
    const state = new SecurityState(entryBytes('k', '12345') + 1, 'throttle');
    for (let count = 1; count <= 1000; count += 1) state.set('k', String(count % 10), 60_000);
    expect(state.bytes).toBe(entryBytes('k', '0'));
    state.set('k', '12345', 60_000);
    expect(state.bytes).toBe(entryBytes('k', '12345'));
    expect(state.size).toBe(1);
  });

  it('an entry is live up to its expiry and gone after it; reading it gone gives its bytes back', async () => {
    clock = movableClock();
    const state = new SecurityState(1_000_000, 'dpop-jti');
    state.set('dpop-jti:a', '1', 1000);
    // advance() lets a few real milliseconds pass too: margins, not the exact edge.
    await clock.advance(900);
    expect(state.get('dpop-jti:a')).toBe('1');
    await clock.advance(150);
    expect(state.get('dpop-jti:a')).toBeUndefined();
    expect(state.bytes).toBe(0);
    expect(state.size).toBe(0);
  });

  it('a counter update without a TTL keeps the window it started; an expired one gets no new window', async () => {
    clock = movableClock();
    const state = new SecurityState(1_000_000, 'throttle');
    state.set('throttle:ip:1', '1', 1000);
    await clock.advance(600);
    state.set('throttle:ip:1', '2', undefined);
    await clock.advance(500);
    // 1,100 ms after the window began: an update that restarted it would still be live.
    expect(state.get('throttle:ip:1')).toBeUndefined();
    state.set('throttle:ip:2', '1', 1000);
    await clock.advance(1100);
    state.set('throttle:ip:2', '2', undefined);
    await clock.advance(5);
    expect(state.get('throttle:ip:2')).toBeUndefined();
  });

  it('a full area drops expired entries to make room, never a live one, and refuses when all are live', async () => {
    clock = movableClock();
    const one = entryBytes('brand-jti:a', '1');
    const state = new SecurityState(one * 2, 'brand-jti');
    state.set('brand-jti:a', '1', 100);
    state.set('brand-jti:b', '1', 60_000);
    expect(() => state.set('brand-jti:c', '1', 60_000)).toThrow(SecurityStateFullError);
    await clock.advance(200);
    state.set('brand-jti:c', '1', 60_000);
    expect(state.get('brand-jti:b')).toBe('1');
    expect(state.get('brand-jti:c')).toBe('1');
    expect(state.bytes).toBe(one * 2);
    expect(() => state.set('brand-jti:d', '1', 60_000)).toThrow(SecurityStateFullError);
    expect(state.get('brand-jti:d')).toBeUndefined();
  });

  it('assertRoom counts every write of a swap together, and a key written twice once', () => {
    const one = entryBytes('revoked-jti:o:a', '1');
    const state = new SecurityState(one * 2, 'revoked-jti');
    state.set('revoked-jti:o:a', '1', 60_000);
    expect(() =>
      state.assertRoom([
        { key: 'revoked-jti:o:b', value: '1' },
        { key: 'revoked-jti:o:c', value: '1' },
      ]),
    ).toThrow(SecurityStateFullError);
    expect(() =>
      state.assertRoom([
        { key: 'revoked-jti:o:b', value: '1' },
        { key: 'revoked-jti:o:b', value: '1' },
        { key: 'revoked-jti:o:a', value: '1' },
      ]),
    ).not.toThrow();
    expect(state.delete('revoked-jti:o:a')).toBe(true);
    expect(state.delete('revoked-jti:o:a')).toBe(false);
    expect(state.bytes).toBe(0);
  });
});
