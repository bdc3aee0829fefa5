/**
 * Every caller of the Store's `increment` that decides on its answer treats an answer that is no count (a custom
 * Store's bug: undefined, null, NaN, a string) as a failing store: a 500 with `onError`, never as a first use (which
 * would let a second one through) nor as a replay (which refuses every right credential and tells no one).
 */
import { describe, expect, it } from 'vitest';
import { runOnce } from '../src/console/form-once.js';
import { MemoryStore } from '../src/index.js';
import { spendOnce } from '../src/stores/replay-epoch.js';

/** A MemoryStore whose `increment` answers `answer` instead of the count. */
function storeAnswering(answer: unknown): MemoryStore {
  return new (class extends MemoryStore {
    override async increment(): Promise<number> {
      return answer as number;
    }
  })();
}

const ANSWERS: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['NaN', Number.NaN],
  ['a string', '1'],
];

describe('an increment answer that is no count', () => {
  it.each(ANSWERS)('runs no console change twice, nor once, for %s', async (_name, answer) => {
    const store = storeAnswering(answer);
    const form = new Map([['once', ['A'.repeat(32)]]]);
    let runs = 0;
    const change = async () => {
      runs += 1;
    };
    await expect(runOnce(store, form, 60, undefined, change)).rejects.toThrow(/store\.increment answered/);
    await expect(runOnce(store, form, 60, undefined, change)).rejects.toThrow(/store\.increment answered/);
    expect(runs).toBe(0);
  });

  it.each(ANSWERS)('is a store failure, not a replay, when a single use is spent with %s', async (_name, answer) => {
    const store = storeAnswering(answer);
    await expect(spendOnce(store, {}, 'dpop-jti:x', 60_000, () => true)).rejects.toThrow(/store\.increment answered/);
  });

  it('still tells a first use from a replay on a store that counts', async () => {
    const store = new MemoryStore();
    const owner = {};
    expect(await spendOnce(store, owner, 'dpop-jti:y', 60_000, () => true)).toBe('first');
    expect(await spendOnce(store, owner, 'dpop-jti:y', 60_000, () => true)).toBe('replayed');
  });
});
