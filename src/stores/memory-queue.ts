/**
 * Job queues in process: what MemoryStore offers as {@link Store.enqueueJobs}, and what the service falls back to
 * for a custom store without queue methods. Each queue is a map from id to job; every method runs without yielding
 * to the event loop, so a claim and a settle are atomic within the process, as the contract asks.
 *
 * Bounded: a queue holds at most `maxJobs`; adding beyond that rejects (the caller's request fails closed, nothing
 * is silently dropped). Jobs leave when settled, so the bound is reached only when deliveries pile up.
 */
import type { ClaimedJob, QueuedJob } from './store.js';

interface Entry {
  payload: string;
  dueAt: number;
}

/** Default most jobs one queue holds. */
export const DEFAULT_MAX_JOBS = 100_000;

/**
 * A set of named job queues in process.
 *
 * @example
 * const queues = new MemoryJobQueues();
 * await queues.enqueueJobs('logout', [{ id: 'j1', payload: '{}', dueAt: Date.now() }]);
 * const [job] = await queues.claimJobs('logout', Date.now(), 30_000, 10);
 */
export class MemoryJobQueues {
  readonly #queues = new Map<string, Map<string, Entry>>();
  readonly #maxJobs: number;

  constructor(maxJobs = DEFAULT_MAX_JOBS) {
    this.#maxJobs = maxJobs;
  }

  #queue(name: string): Map<string, Entry> {
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = new Map();
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /** Adds the jobs not queued yet (all or none: a full queue rejects before any is added). */
  async enqueueJobs(name: string, jobs: readonly QueuedJob[]): Promise<void> {
    const queue = this.#queue(name);
    const fresh = jobs.filter((job) => !queue.has(job.id));
    if (queue.size + fresh.length > this.#maxJobs) throw new Error(`job queue ${name} is full (${this.#maxJobs} jobs)`);
    for (const job of fresh) queue.set(job.id, { payload: job.payload, dueAt: job.dueAt });
  }

  /** Takes up to `max` due jobs, earliest first, and leases each until `now + leaseMs`. */
  async claimJobs(name: string, now: number, leaseMs: number, max: number): Promise<ClaimedJob[]> {
    const queue = this.#queues.get(name);
    if (queue === undefined || max < 1) return [];
    // The `max` earliest due jobs, kept in order as the queue is scanned: a claim takes a few jobs out of a backlog
    // of thousands, and sorting the whole backlog for every claim cost more the longer the backlog grew.
    const due: [string, Entry][] = [];
    for (const item of queue) {
      const at = item[1].dueAt;
      if (at > now || (due.length === max && at >= (due[max - 1] as [string, Entry])[1].dueAt)) continue;
      let position = due.length;
      while (position > 0 && (due[position - 1] as [string, Entry])[1].dueAt > at) position--;
      due.splice(position, 0, item);
      if (due.length > max) due.pop();
    }
    const lease = now + leaseMs;
    return due.map(([id, entry]) => {
      entry.dueAt = lease;
      return { id, payload: entry.payload, lease };
    });
  }

  /** Ends or reschedules a job still under `lease`. */
  async settleJob(name: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean> {
    const queue = this.#queues.get(name);
    const entry = queue?.get(id);
    if (queue === undefined || entry === undefined || entry.dueAt !== lease) return false;
    if (next === null) queue.delete(id);
    else queue.set(id, { payload: next.payload, dueAt: next.dueAt });
    return true;
  }

  /** Jobs queued in `name` (for tests and benchmarks). */
  size(name: string): number {
    return this.#queues.get(name)?.size ?? 0;
  }
}
