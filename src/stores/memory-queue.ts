/**
 * Job queues in process: what MemoryStore offers as {@link Store.enqueueJobs}, and what the service falls back to
 * for a custom store without queue methods. Each queue is a map from id to job, and a heap of due times that hands a
 * claim its earliest due jobs without reading the rest of the backlog (a mass logout queues thousands, and each freed
 * delivery slot claims a few). Every method runs without yielding to the event loop, so a claim and a settle are
 * atomic within the process, as the contract asks.
 *
 * Bounded: a queue holds at most `maxJobs`; adding beyond that rejects (the caller's request fails closed, nothing
 * is silently dropped). Jobs leave when settled, so the bound is reached only when deliveries pile up.
 */
import { DueHeap } from '../lib/due-heap.js';
import type { ClaimedJob, QueuedJob } from './store.js';

interface Entry {
  payload: string;
  dueAt: number;
}

/** One queue: its jobs, and their due times in a heap whose entries count only while they match the job's. */
interface Queue {
  jobs: Map<string, Entry>;
  due: DueHeap;
}

/** A heap that holds this many entries more than twice its live jobs is compacted. */
const HEAP_SLACK = 1024;

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
  readonly #queues = new Map<string, Queue>();
  readonly #maxJobs: number;

  constructor(maxJobs = DEFAULT_MAX_JOBS) {
    this.#maxJobs = maxJobs;
  }

  #queue(name: string): Queue {
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = { jobs: new Map(), due: new DueHeap() };
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /** Sets a job's due time, in its entry and in the heap. */
  #schedule(queue: Queue, id: string, entry: Entry): void {
    queue.jobs.set(id, entry);
    queue.due.push(id, entry.dueAt);
    // Settled and re-leased jobs leave entries behind; past twice the live jobs, drop them.
    if (queue.due.size > 2 * queue.jobs.size + HEAP_SLACK) {
      queue.due.retain((due) => queue.jobs.get(due.id)?.dueAt === due.dueAt);
    }
  }

  /**
   * Adds the jobs not queued yet, and puts back a queued one that is due later than its new copy (all or none: a
   * full queue rejects before any is added). A claimed job is due when its lease ends, so queueing it again while
   * its claimer is at work makes it due once more, and its claimer's settle no longer applies: what was queued after
   * the claim gets an attempt of its own. Of one id named twice in `jobs`, the earlier due counts (the first of
   * equal ones), as with RedisStore's script.
   */
  async enqueueJobs(name: string, jobs: readonly QueuedJob[]): Promise<void> {
    const queue = this.#queue(name);
    const wanted = new Map<string, QueuedJob>();
    for (const job of jobs) {
      const dueAt = wanted.get(job.id)?.dueAt ?? queue.jobs.get(job.id)?.dueAt;
      if (dueAt === undefined || dueAt > job.dueAt) wanted.set(job.id, job);
    }
    let added = 0;
    for (const id of wanted.keys()) if (!queue.jobs.has(id)) added++;
    if (queue.jobs.size + added > this.#maxJobs) throw new Error(`job queue ${name} is full (${this.#maxJobs} jobs)`);
    for (const job of wanted.values()) this.#schedule(queue, job.id, { payload: job.payload, dueAt: job.dueAt });
  }

  /** Takes up to `max` due jobs, earliest first, and leases each until `now + leaseMs`. */
  async claimJobs(name: string, now: number, leaseMs: number, max: number): Promise<ClaimedJob[]> {
    const queue = this.#queues.get(name);
    if (queue === undefined || max < 1) return [];
    const lease = now + leaseMs;
    const claimed: ClaimedJob[] = [];
    for (let top = queue.due.peek(); top !== undefined && top.dueAt <= now && claimed.length < max; top = queue.due.peek()) {
      queue.due.pop();
      const entry = queue.jobs.get(top.id);
      // An entry left behind by a settle or an earlier lease: the job is gone or due at another time.
      if (entry === undefined || entry.dueAt !== top.dueAt) continue;
      entry.dueAt = lease;
      claimed.push({ id: top.id, payload: entry.payload, lease });
    }
    // After the loop: a lease that is already due (`leaseMs` 0) must not hand the same job out twice in one claim.
    for (const job of claimed) queue.due.push(job.id, lease);
    return claimed;
  }

  /** Ends or reschedules a job still under `lease`. */
  async settleJob(name: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean> {
    const queue = this.#queues.get(name);
    const entry = queue?.jobs.get(id);
    if (queue === undefined || entry === undefined || entry.dueAt !== lease) return false;
    if (next === null) queue.jobs.delete(id);
    else this.#schedule(queue, id, { payload: next.payload, dueAt: next.dueAt });
    return true;
  }

  /** Entries of the due-time heap of `name`, live or left behind (for tests: the heap stays bounded). */
  heapSize(name: string): number {
    return this.#queues.get(name)?.due.size ?? 0;
  }

  /** Jobs queued in `name` (for tests and benchmarks). */
  size(name: string): number {
    return this.#queues.get(name)?.jobs.size ?? 0;
  }
}
