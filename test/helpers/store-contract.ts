/**
 * The conformance suite every {@link Store} must pass. Each implementation's test file calls `runStoreContract`
 * with a factory; the factory is called once per test, and its `cleanup` after that test.
 *
 * Timing: the expiry tests wait for real time. Every wait is several times longer than the TTL it outlives, and every
 * "still there" check happens at least half a second before the deadline it races, so a noisy machine can make a
 * test slower but not make it fail. (A sluggish machine can at worst make the "window does not slide" test pass
 * without proving much, never fail spuriously.)
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/store.js';

/** What a store factory hands to the contract. */
export interface StoreUnderTest {
  store: Store;
  cleanup(): Promise<void>;
  /**
   * Lets `ms` of the store's time pass for the expiry checks. A real sleep unless given: a store that keeps its
   * TTLs by a clock of this process (the MemoryStore) moves that clock instead; Redis keeps its own.
   */
  wait?: (ms: number) => Promise<void>;
}

const LONG = 60_000;

/** A fresh key under `prefix`, so that no two tests (or runs) share state. */
function key(prefix: string): string {
  return `${prefix}:${randomBytes(12).toString('hex')}`;
}

/** Two keys of one grant: they share the `{tag}`, as every multi-key swap must. */
function grantKeys(): { code: string; grant: string } {
  const tag = randomBytes(12).toString('hex');
  return { code: `code:{${tag}}`, grant: `grant:{${tag}}` };
}

/** ~1 MiB of text with multi-byte characters spread through it, so encoding mistakes show up. */
function largeValue(): string {
  const chunk = `${randomBytes(3000).toString('base64')}ü€🔑\u0000"\\\n`;
  let out = '';
  while (out.length < 1024 * 1024) out += chunk;
  return out;
}

/**
 * Defines a vitest `describe(name)` with the Store contract run against stores from `makeStore`.
 *
 * @example
 * runStoreContract('MemoryStore', async () => ({ store: new MemoryStore(), cleanup: async () => {} }));
 */
export function runStoreContract(
  name: string,
  makeStore: () => Promise<StoreUnderTest>,
  options: { /** The stores' `wait()` moves a clock of this process, so the timed checks run one at a time. */ movesClock?: boolean } = {},
): void {
  describe(`${name}: Store contract`, () => {
    let subject: StoreUnderTest | undefined;
    let store: Store;

    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
    });

    afterEach(async () => {
      await subject?.cleanup();
      subject = undefined;
    });

    describe('get / set', () => {
      it('returns null for a key that was never set', async () => {
        await expect(store.get(key('session'))).resolves.toBeNull();
      });

      it('returns what was set', async () => {
        const k = key('session');
        await store.set(k, '{"user":"u1"}', LONG);
        await expect(store.get(k)).resolves.toBe('{"user":"u1"}');
        // Reading does not consume.
        await expect(store.get(k)).resolves.toBe('{"user":"u1"}');
      });

      it('keeps the empty string distinct from absence', async () => {
        const k = key('session');
        await store.set(k, '', LONG);
        await expect(store.get(k)).resolves.toBe('');
        await expect(store.take(k)).resolves.toBe('');
        await expect(store.get(k)).resolves.toBeNull();
      });

      it('replaces the previous value', async () => {
        const k = key('grant');
        await store.set(k, 'first', LONG);
        await store.set(k, 'second', LONG);
        await expect(store.get(k)).resolves.toBe('second');
      });

      it('keeps keys apart', async () => {
        const a = key('code');
        const b = key('code');
        await store.set(a, 'A', LONG);
        await store.set(b, 'B', LONG);
        await expect(store.get(a)).resolves.toBe('A');
        await expect(store.get(b)).resolves.toBe('B');
      });

      it('round-trips a 1 MiB value with multi-byte characters', async () => {
        const k = key('interaction');
        const value = largeValue();
        await store.set(k, value, LONG);
        const back = await store.get(k);
        expect(back?.length).toBe(value.length);
        expect(back === value).toBe(true); // not toBe(value): a mismatch would print two megabytes
        const taken = await store.take(k);
        expect(taken === value).toBe(true);
      });

      it('accepts keys with colons, spaces, unicode, glob and control characters, each distinct', async () => {
        const base = key('session');
        const odd = [
          `${base}:a:b:c`,
          `${base}:a:b`,
          `${base} with spaces `,
          `${base}:ünïcødé 🔑 漢字`,
          `${base}:*?[x]\\`,
          `${base}:\n\t\r`,
          `${base}:`,
          `${base}`,
        ];
        for (const [i, k] of odd.entries()) await store.set(k, `value-${i}`, LONG);
        for (const [i, k] of odd.entries()) await expect(store.get(k)).resolves.toBe(`value-${i}`);
        await store.delete(odd[0] as string);
        await expect(store.get(odd[0] as string)).resolves.toBeNull();
        await expect(store.get(odd[1] as string)).resolves.toBe('value-1');
        await expect(store.increment(`${base}:*`, LONG)).resolves.toBe(1);
        await expect(store.get(`${base}:*?[x]\\`)).resolves.toBe('value-4');
      });
    });

    describe('expiry', () => {
      it('accepts fractional TTLs in milliseconds', async () => {
        const k = key('refresh');
        await store.set(k, 'v', 1500.5);
        await expect(store.get(k)).resolves.toBe('v');
        await expect(store.increment(key('throttle'), 1500.5)).resolves.toBe(1);
      });

      it('refuses a TTL that is not a finite number, and writes nothing: no record may live for ever', async () => {
        // Under MemoryStore's never-evicted security prefixes a counter kept for good would be a lasting lockout.
        for (const ttl of [Number.NaN, Number.POSITIVE_INFINITY]) {
          const k = key('throttle');
          await expect(store.set(k, 'v', ttl)).rejects.toThrow(TypeError);
          await expect(store.increment(k, ttl)).rejects.toThrow(TypeError);
          await expect(store.get(k)).resolves.toBeNull();
        }
      });
    });

    describe('take', () => {
      it('returns the value once, then null', async () => {
        const k = key('code');
        await store.set(k, 'record', LONG);
        await expect(store.take(k)).resolves.toBe('record');
        await expect(store.take(k)).resolves.toBeNull();
        await expect(store.get(k)).resolves.toBeNull();
      });

      it('returns null for an absent key', async () => {
        await expect(store.take(key('code'))).resolves.toBeNull();
      });

      it('hands the value to exactly one of 200 concurrent takers', async () => {
        const k = key('refresh');
        await store.set(k, 'the-one', LONG);
        const results = await Promise.all(Array.from({ length: 200 }, () => store.take(k)));
        expect(results.filter((r) => r !== null)).toEqual(['the-one']);
        await expect(store.get(k)).resolves.toBeNull();
      });

      it('leaves other keys alone', async () => {
        const a = key('code');
        const b = key('code');
        await store.set(a, 'A', LONG);
        await store.set(b, 'B', LONG);
        await store.take(a);
        await expect(store.get(b)).resolves.toBe('B');
      });
    });

    describe('delete', () => {
      it('removes a key', async () => {
        const k = key('session');
        await store.set(k, 'v', LONG);
        await store.delete(k);
        await expect(store.get(k)).resolves.toBeNull();
        await expect(store.take(k)).resolves.toBeNull();
      });

      it('accepts an absent key', async () => {
        await expect(store.delete(key('session'))).resolves.toBeUndefined();
      });

      it('leaves other keys alone', async () => {
        const a = key('revoked');
        const b = key('revoked');
        await store.set(a, 'A', LONG);
        await store.set(b, 'B', LONG);
        await store.delete(a);
        await expect(store.get(b)).resolves.toBe('B');
      });
    });

    describe('increment', () => {
      it('counts 1, 2, 3', async () => {
        const k = key('throttle');
        await expect(store.increment(k, LONG)).resolves.toBe(1);
        await expect(store.increment(k, LONG)).resolves.toBe(2);
        await expect(store.increment(k, LONG)).resolves.toBe(3);
      });

      it('keeps separate counters per key', async () => {
        const a = key('throttle');
        const b = key('throttle');
        await store.increment(a, LONG);
        await store.increment(a, LONG);
        await expect(store.increment(b, LONG)).resolves.toBe(1);
        await expect(store.increment(a, LONG)).resolves.toBe(3);
      });

      it('counts 100 concurrent increments exactly, each caller seeing a different count', async () => {
        const k = key('throttle');
        const results = await Promise.all(Array.from({ length: 100 }, () => store.increment(k, LONG)));
        expect([...results].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
        await expect(store.increment(k, LONG)).resolves.toBe(101);
      });

      it('restarts from 1 after delete', async () => {
        const k = key('throttle');
        await store.increment(k, LONG);
        await store.increment(k, LONG);
        await store.delete(k);
        await expect(store.increment(k, LONG)).resolves.toBe(1);
      });
    });

    // Optional in the contract; every store this suite runs has it, so a store that lost it fails here.
    describe('decrement', () => {
      function decrementOf(subject: Store): (k: string) => Promise<number> {
        const { decrement } = subject;
        if (decrement === undefined) throw new Error('this store has no decrement');
        return (k) => decrement.call(subject, k);
      }

      it('gives slots back one at a time, keeping the counter while above zero', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        for (let i = 0; i < 3; i++) await store.increment(k, LONG);
        await expect(decrement(k)).resolves.toBe(2);
        await expect(store.get(k)).resolves.toBe('2');
        await expect(store.increment(k, LONG)).resolves.toBe(3);
      });

      it('deletes a counter it brings to zero; the next increment starts from 1', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        await store.increment(k, LONG);
        await expect(decrement(k)).resolves.toBe(0);
        await expect(store.get(k)).resolves.toBeNull();
        await expect(store.increment(k, LONG)).resolves.toBe(1);
      });

      it('never starts a counter: an absent key stays absent', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        await expect(decrement(k)).resolves.toBe(0);
        await expect(decrement(k)).resolves.toBe(0);
        await expect(store.get(k)).resolves.toBeNull();
      });

      it('removes a counter left at zero (written before this rule) instead of keeping it', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        await store.set(k, '0', LONG);
        await expect(decrement(k)).resolves.toBe(0);
        await expect(store.get(k)).resolves.toBeNull();
      });

      it('ends right under 50 concurrent decrements and 50 increments on a counter at 50', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        for (let i = 0; i < 50; i++) await store.increment(k, LONG);
        // Interleaved either way, the count never has to go below zero, so every step counts.
        await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? decrement(k) : store.increment(k, LONG))));
        await expect(store.get(k)).resolves.toBe('50');
      });

      it('leaves nothing behind after 100 concurrent decrements of a counter at 60', async () => {
        const decrement = decrementOf(store);
        const k = key('throttle');
        for (let i = 0; i < 60; i++) await store.increment(k, LONG);
        const results = await Promise.all(Array.from({ length: 100 }, () => decrement(k)));
        expect([...results].sort((x, y) => x - y)).toEqual([...Array<number>(41).fill(0), ...Array.from({ length: 59 }, (_, i) => i + 1)]);
        await expect(store.get(k)).resolves.toBeNull();
      });
    });

    describe('swap', () => {
      it('writes every value when every key holds what was expected', async () => {
        const { code, grant } = grantKeys();
        await store.set(code, 'code-record', LONG);
        const applied = await store.swap([
          { key: code, expect: 'code-record', value: null },
          { key: grant, expect: null, value: 'grant-record', ttlMs: LONG },
        ]);
        expect(applied).toBe(true);
        await expect(store.get(code)).resolves.toBeNull();
        await expect(store.get(grant)).resolves.toBe('grant-record');
      });

      it('changes nothing when any one expectation fails', async () => {
        const { code, grant } = grantKeys();
        await store.set(code, 'code-record', LONG);
        await store.set(grant, 'existing', LONG);
        // The first entry matches, the second does not: the first must not have been applied either.
        const applied = await store.swap([
          { key: code, expect: 'code-record', value: null },
          { key: grant, expect: null, value: 'new', ttlMs: LONG },
        ]);
        expect(applied).toBe(false);
        await expect(store.get(code)).resolves.toBe('code-record');
        await expect(store.get(grant)).resolves.toBe('existing');
        // A wrong expected value (not absence) fails the same way.
        await expect(store.swap([{ key: grant, expect: 'other', value: 'new', ttlMs: LONG }])).resolves.toBe(false);
        await expect(store.get(grant)).resolves.toBe('existing');
        // Expecting a value where there is none fails too.
        await store.delete(grant);
        await expect(store.swap([{ key: grant, expect: '', value: 'new', ttlMs: LONG }])).resolves.toBe(false);
        await expect(store.get(grant)).resolves.toBeNull();
      });

      it('lets exactly one of 100 concurrent swaps from the same value apply', async () => {
        const { code, grant } = grantKeys();
        await store.set(grant, 'gen-0', LONG);
        const results = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            store.swap([
              { key: grant, expect: 'gen-0', value: `gen-1-by-${i}`, ttlMs: LONG },
              { key: code, expect: null, value: `winner-${i}`, ttlMs: LONG },
            ]),
          ),
        );
        expect(results.filter((r) => r)).toHaveLength(1);
        const winner = results.indexOf(true);
        await expect(store.get(grant)).resolves.toBe(`gen-1-by-${winner}`);
        await expect(store.get(code)).resolves.toBe(`winner-${winner}`);
      });

      it('compares whole values, including long and multi-byte ones', async () => {
        const { grant } = grantKeys();
        const value = largeValue();
        await store.set(grant, value, LONG);
        await expect(store.swap([{ key: grant, expect: `${value}x`, value: 'no', ttlMs: LONG }])).resolves.toBe(false);
        await expect(store.swap([{ key: grant, expect: value, value: 'yes', ttlMs: LONG }])).resolves.toBe(true);
        await expect(store.get(grant)).resolves.toBe('yes');
      });
    });
  });

  // The optional job queue (back-channel logout deliveries wait in it): explicit times, so nothing waits.
  describe(`${name}: Store job queue`, () => {
    let subject: StoreUnderTest | undefined;
    let store: Required<Pick<Store, 'enqueueJobs' | 'claimJobs' | 'settleJob'>>;
    const T = 1_800_000_000_000;

    beforeEach(async () => {
      subject = await makeStore();
      const made = subject.store;
      if (made.enqueueJobs === undefined || made.claimJobs === undefined || made.settleJob === undefined) {
        throw new Error(`${name} has no job queue`);
      }
      store = made as typeof store;
    });

    afterEach(async () => {
      await subject?.cleanup();
      subject = undefined;
    });

    it('queues an id once, hands out only due jobs, earliest first, at most max', async () => {
      const queue = `q-${randomUUID()}`;
      await store.enqueueJobs(queue, [
        { id: 'late', payload: 'p-late', dueAt: T + 5000 },
        { id: 'b', payload: 'p-b', dueAt: T + 20 },
        { id: 'a', payload: 'p-a', dueAt: T + 10 },
      ]);
      // Queued again, due no sooner (a retried request): left as it is.
      await store.enqueueJobs(queue, [{ id: 'a', payload: 'replaced?', dueAt: T + 15 }]);
      const first = await store.claimJobs(queue, T + 100, 30_000, 1);
      expect(first).toEqual([{ id: 'a', payload: 'p-a', lease: T + 30_100 }]);
      expect((await store.claimJobs(queue, T + 100, 30_000, 10)).map((job) => job.id)).toEqual(['b']);
      expect(await store.claimJobs(queue, T + 100, 30_000, 10)).toEqual([]);
    });

    it('out of a backlog in any order, a claim takes the earliest due jobs, in order', async () => {
      const queue = `q-${randomUUID()}`;
      // 200 distinct due times, shuffled by a fixed stride.
      const jobs = Array.from({ length: 200 }, (_, i) => ({ id: `j${i}`, payload: `p${i}`, dueAt: T + ((i * 37) % 200) }));
      await store.enqueueJobs(queue, jobs);
      const claimed = await store.claimJobs(queue, T + 1000, 30_000, 5);
      const expected = [...jobs].sort((a, b) => a.dueAt - b.dueAt).slice(0, 5);
      expect(claimed.map((job) => job.id)).toEqual(expected.map((job) => job.id));
      expect(await store.claimJobs(queue, T + 1000, 30_000, 300)).toHaveLength(jobs.length - 5);
    });

    it('gives each due job to one of many concurrent claimers', async () => {
      const queue = `q-${randomUUID()}`;
      await store.enqueueJobs(
        queue,
        Array.from({ length: 20 }, (_, i) => ({ id: `j${i}`, payload: `p${i}`, dueAt: T })),
      );
      const claims = await Promise.all(Array.from({ length: 8 }, () => store.claimJobs(queue, T, 30_000, 5)));
      const ids = claims.flat().map((job) => job.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it('a job queued again while claimed comes due again, and its claimer settles it no more', async () => {
      const queue = `q-${randomUUID()}`;
      await store.enqueueJobs(queue, [{ id: 'j', payload: 'p1', dueAt: T }]);
      const [mine] = await store.claimJobs(queue, T, 30_000, 1);
      // Queued again during the claimer's attempt: what changed since the claim gets an attempt of its own.
      await store.enqueueJobs(queue, [{ id: 'j', payload: 'p2', dueAt: T + 10 }]);
      await expect(store.settleJob(queue, 'j', mine?.lease as number, null)).resolves.toBe(false);
      const [next] = await store.claimJobs(queue, T + 10, 30_000, 1);
      expect(next).toEqual({ id: 'j', payload: 'p2', lease: T + 30_010 });
      await expect(store.settleJob(queue, 'j', next?.lease as number, null)).resolves.toBe(true);
      expect(await store.claimJobs(queue, T + 1_000_000, 1000, 1)).toEqual([]);
    });

    it('settles only under the current lease; an expired lease lets another claimer take the job', async () => {
      const queue = `q-${randomUUID()}`;
      await store.enqueueJobs(queue, [{ id: 'j', payload: 'p', dueAt: T }]);
      const [mine] = await store.claimJobs(queue, T, 1000, 1);
      expect(mine).toBeDefined();
      // The lease ran out: another claimer takes it, and the first one's settle no longer applies.
      const [theirs] = await store.claimJobs(queue, T + 1001, 1000, 1);
      expect(theirs?.id).toBe('j');
      await expect(store.settleJob(queue, 'j', mine?.lease as number, null)).resolves.toBe(false);
      // A retry puts it back with a new payload and due time; then it is settled for good.
      await expect(store.settleJob(queue, 'j', theirs?.lease as number, { payload: 'p2', dueAt: T + 5000 })).resolves.toBe(true);
      expect(await store.claimJobs(queue, T + 4999, 1000, 1)).toEqual([]);
      const [again] = await store.claimJobs(queue, T + 5000, 1000, 1);
      expect(again?.payload).toBe('p2');
      await expect(store.settleJob(queue, 'j', again?.lease as number, null)).resolves.toBe(true);
      expect(await store.claimJobs(queue, T + 1_000_000, 1000, 1)).toEqual([]);
    });
  });

  // The checks that wait for a TTL to run out, each on a store of its own: side by side when the store keeps its own
  // time (Redis), one after the other when it moves a clock of this process (see StoreUnderTest.wait).
  describe(`${name}: Store contract over time`, () => {
    const timed = (title: string, body: (store: Store, wait: (ms: number) => Promise<void>) => Promise<void>): void => {
      const test = async (): Promise<void> => {
        const subject = await makeStore();
        try {
          await body(subject.store, subject.wait ?? ((ms) => sleep(ms)));
        } finally {
          await subject.cleanup();
        }
      };
      if (options.movesClock) it(title, test);
      else it.concurrent(title, test);
    };

    timed('expiry: forgets a value after its TTL and keeps a longer-lived one', async (store, wait) => {
      const short = key('interaction');
      const long = key('interaction');
      await store.set(short, 'short', 100);
      await store.set(long, 'long', LONG);
      await wait(500);
      await expect(store.get(short)).resolves.toBeNull();
      await expect(store.take(short)).resolves.toBeNull();
      await expect(store.get(long)).resolves.toBe('long');
    });

    timed('expiry: serves a value until its TTL runs out', async (store, wait) => {
      const k = key('code');
      await store.set(k, 'v', 1000);
      await expect(store.get(k)).resolves.toBe('v');
      await wait(1400);
      await expect(store.get(k)).resolves.toBeNull();
    });

    timed('expiry: set replaces the TTL along with the value', async (store, wait) => {
      const k = key('session');
      await store.set(k, 'old', 100);
      await store.set(k, 'new', LONG);
      await wait(500);
      await expect(store.get(k)).resolves.toBe('new');

      // And the other way round: shortening works too.
      await store.set(k, 'shorter', 100);
      await wait(500);
      await expect(store.get(k)).resolves.toBeNull();
    });

    timed('expiry: a TTL of zero, below a millisecond or negative still ends: it never means "keep for ever"', async (store, wait) => {
      // lru-cache reads a TTL of 0 as none, Redis refuses PX 0: rounded up to 1 ms, never down to 0. Under
      // MemoryStore's never-evicted security prefixes a counter kept for good would be a lasting lockout.
      const { grant } = grantKeys();
      const keys = [key('throttle'), key('interaction'), key('throttle')];
      await store.set(keys[0] as string, 'zero', 0);
      await store.set(keys[1] as string, 'fraction', 0.4);
      await expect(store.increment(keys[2] as string, -5)).resolves.toBe(1);
      await expect(store.swap([{ key: grant, expect: null, value: 'v', ttlMs: 0 }])).resolves.toBe(true);
      await wait(500);
      for (const k of [...keys, grant]) await expect(store.get(k)).resolves.toBeNull();
    });

    timed('increment: uses a fixed window: later increments do not extend it, and the count restarts after it', async (store, wait) => {
      const k = key('throttle');
      // Window of 1000 ms opened at t=0. A second increment at t≈400 must not push the end to t≈1400, so at
      // t≈1200 the counter must have restarted. (A sliding implementation would answer 3 here.)
      await expect(store.increment(k, 1000)).resolves.toBe(1);
      await wait(400);
      await expect(store.increment(k, 1000)).resolves.toBe(2);
      await wait(800);
      await expect(store.increment(k, 1000)).resolves.toBe(1);
      await expect(store.increment(k, 1000)).resolves.toBe(2);
    });

    timed('swap: replaces a value with its new TTL', async (store, wait) => {
      const { grant } = grantKeys();
      await store.set(grant, 'v1', LONG);
      await expect(store.swap([{ key: grant, expect: 'v1', value: 'v2', ttlMs: 100 }])).resolves.toBe(true);
      await expect(store.get(grant)).resolves.toBe('v2');
      await wait(500);
      await expect(store.get(grant)).resolves.toBeNull();
    });
  });
}
