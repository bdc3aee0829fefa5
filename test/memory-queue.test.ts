/**
 * The in-process job queues (MemoryStore's, and the service's fallback for stores without queue methods) against a
 * plain model of the contract: random enqueues, claims and settles, and after each claim the jobs a full sort of the
 * model's due jobs would give (the same due times in the same order, each job once, with its payload). The queue finds them through a heap with entries left
 * behind by settles and leases; the model has none, so a left-behind entry taken for a live one shows here.
 */
import { describe, expect, it } from 'vitest';
import { DueHeap } from '../src/lib/due-heap.js';
import { MemoryJobQueues } from '../src/stores/memory-queue.js';

/** A small deterministic generator (mulberry32): the same operations on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ModelJob {
  payload: string;
  dueAt: number;
  /** When it was last given a due time. */
  order: number;
}

describe('MemoryJobQueues', () => {
  it('hands out exactly what a full sort of the due jobs would, through thousands of random operations', async () => {
    for (const seed of [1, 2, 3]) {
      const next = random(seed);
      const queues = new MemoryJobQueues();
      const model = new Map<string, ModelJob>();
      const leases = new Map<string, number>();
      let now = 1_000;
      let order = 0;
      let claimedAny = 0;
      for (let step = 0; step < 4_000; step++) {
        now += Math.floor(next() * 5);
        const roll = next();
        if (roll < 0.4) {
          const jobs = Array.from({ length: 1 + Math.floor(next() * 4) }, () => ({
            id: `j${Math.floor(next() * 300)}`,
            payload: `p${step}`,
            dueAt: now + Math.floor(next() * 20) - 5,
          }));
          await queues.enqueueJobs('q', jobs);
          // A job is added, or put back when queued again due sooner (a claimed one is due when its lease ends).
          for (const job of jobs) {
            const queued = model.get(job.id);
            if (queued === undefined || queued.dueAt > job.dueAt)
              model.set(job.id, { payload: job.payload, dueAt: job.dueAt, order: order++ });
          }
        } else if (roll < 0.7) {
          const max = 1 + Math.floor(next() * 5);
          const leaseMs = Math.floor(next() * 30);
          const expected = [...model]
            .filter(([, job]) => job.dueAt <= now)
            .sort((a, b) => a[1].dueAt - b[1].dueAt || a[1].order - b[1].order)
            .slice(0, max);
          const claimed = await queues.claimJobs('q', now, leaseMs, max);
          // The earliest due jobs, each once, with the payload it is due with; among equal due times any order.
          expect(new Set(claimed.map((job) => job.id)).size).toBe(claimed.length);
          expect(claimed.map((job) => model.get(job.id)?.dueAt)).toEqual(expected.map(([, job]) => job.dueAt));
          expect(claimed.map((job) => job.payload)).toEqual(claimed.map((job) => model.get(job.id)?.payload));
          for (const job of claimed) {
            const entry = model.get(job.id) as ModelJob;
            entry.dueAt = now + leaseMs;
            entry.order = order++;
            leases.set(job.id, job.lease);
          }
          claimedAny += claimed.length;
        } else if (leases.size > 0) {
          const ids = [...leases.keys()];
          const id = ids[Math.floor(next() * ids.length)] as string;
          const lease = leases.get(id) as number;
          const reschedule = next() < 0.4 ? { payload: `r${step}`, dueAt: now + Math.floor(next() * 20) } : null;
          const live = model.get(id)?.dueAt === lease;
          await expect(queues.settleJob('q', id, lease, reschedule)).resolves.toBe(live);
          leases.delete(id);
          if (live && reschedule === null) model.delete(id);
          if (live && reschedule !== null) model.set(id, { ...reschedule, order: order++ });
        }
        expect(queues.size('q')).toBe(model.size);
      }
      expect(claimedAny).toBeGreaterThan(500);
    }
  });

  it('never hands one job out twice in one claim, even with a lease that is due at once', async () => {
    const queues = new MemoryJobQueues();
    await queues.enqueueJobs('q', [
      { id: 'a', payload: 'a', dueAt: 10 },
      { id: 'b', payload: 'b', dueAt: 10 },
    ]);
    expect((await queues.claimJobs('q', 10, 0, 5)).map((job) => job.id)).toEqual(['a', 'b']);
    // Both leases ended at once (10 + 0): the next claim may take them again, each once.
    expect((await queues.claimJobs('q', 10, 0, 5)).map((job) => job.id)).toEqual(['a', 'b']);
  });

  it('drops the entries settled jobs leave behind, so a long run of deliveries keeps the heap near its live jobs', async () => {
    const queues = new MemoryJobQueues();
    let now = 0;
    for (let round = 0; round < 50; round++) {
      await queues.enqueueJobs(
        'q',
        Array.from({ length: 200 }, (_, i) => ({ id: `${round}-${i}`, payload: '', dueAt: now })),
      );
      for (const job of await queues.claimJobs('q', now, 60_000, 200)) await queues.settleJob('q', job.id, job.lease, null);
      now += 1;
    }
    expect(queues.size('q')).toBe(0);
    // Each settled job leaves its lease entry behind (60 s, never due in this run): 10,000 without the compaction,
    // which keeps the heap under twice its live jobs plus a slack of 1,024 and the last rounds' leases.
    expect(queues.heapSize('q')).toBeLessThan(2_000);
  });
});

describe('DueHeap', () => {
  it('pops the earliest due time first and, among equal ones, the first pushed', () => {
    const heap = new DueHeap();
    const next = random(7);
    const pushed: Array<{ id: string; dueAt: number }> = [];
    for (let i = 0; i < 500; i++) {
      const entry = { id: `e${i}`, dueAt: Math.floor(next() * 50) };
      pushed.push(entry);
      heap.push(entry.id, entry.dueAt);
    }
    const popped: string[] = [];
    for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) popped.push(entry.id);
    // Array.prototype.sort is stable: equal due times keep their push order.
    expect(popped).toEqual([...pushed].sort((a, b) => a.dueAt - b.dueAt).map((entry) => entry.id));
  });
});
