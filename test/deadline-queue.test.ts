/**
 * The queue of same-length deadlines behind `bodyTimeout` (src/lib/deadline-queue.ts): each deadline expires at its
 * own time, never early, never after it was settled, with one timer for all and none once nothing waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineQueue } from '../src/lib/deadline-queue.js';

describe('DeadlineQueue', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires each deadline ms after it was added, in order, with one timer', () => {
    const queue = new DeadlineQueue(1000);
    const expired: string[] = [];
    queue.add(() => expired.push('a'));
    vi.advanceTimersByTime(300);
    queue.add(() => expired.push('b'));
    vi.advanceTimersByTime(400);
    queue.add(() => expired.push('c'));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(299);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(299);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    vi.advanceTimersByTime(399);
    expect(expired).toEqual(['a', 'b']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(queue.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never expires a settled deadline, and waits for the next one at its own time', () => {
    const queue = new DeadlineQueue(1000);
    const expired: string[] = [];
    const first = queue.add(() => expired.push('first'));
    vi.advanceTimersByTime(500);
    queue.add(() => expired.push('second'));
    queue.settle(first);
    // The timer armed for the first fires at 1000 and finds the second not due: it must wait until 1500.
    vi.advanceTimersByTime(500);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(499);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['second']);
  });

  it('keeps no timer once everything waiting has settled', () => {
    const queue = new DeadlineQueue(1000);
    const expire = vi.fn();
    const a = queue.add(expire);
    const b = queue.add(expire);
    queue.settle(a);
    expect(vi.getTimerCount()).toBe(1);
    queue.settle(b);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(expire).not.toHaveBeenCalled();
    // And a new deadline arms it again.
    queue.add(expire);
    vi.advanceTimersByTime(1000);
    expect(expire).toHaveBeenCalledTimes(1);
  });
});
