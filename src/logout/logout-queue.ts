/**
 * Logout deliveries as the store queues them: one job per app and ended session, holding who and what to tell
 * (never a token: each attempt signs its own, so nothing secret waits in the store and no token outlives its two
 * minutes in a queue).
 *
 * A job's id is a digest of the session and the app, so ending a session twice (a retried request, a loop that
 * re-read a changed index, two instances ending it at once) queues one delivery per app. A delivery already under
 * way is not enough, though: the app may have taken its token and then signed the user in again through the same
 * session before the second logout. So queueing a job whose delivery is in flight makes it due again at once (the
 * store's `enqueueJobs` puts back a job due later than its new copy, and a claimed one is due when its lease ends),
 * and the app gets one more token.
 */
import { digest } from '../lib/random-secrets.js';
import { MemoryJobQueues } from '../stores/memory-queue.js';
import type { ClaimedJob, QueuedJob, Store } from '../stores/store.js';

/** The queue logout deliveries wait in. */
export const LOGOUT_QUEUE = 'logout';

/** One delivery: which app to tell that which session of which user ended, and how often that was tried. */
export interface LogoutJob {
  accountId: string;
  clientId: string;
  userId: string;
  sid: string;
  /** Attempts made so far. */
  attempts: number;
}

/** The job's stored form. */
export function encodeLogoutJob(job: LogoutJob): string {
  return JSON.stringify([job.accountId, job.clientId, job.userId, job.sid, job.attempts]);
}

/** A stored job, or `null` for anything else (a job of another version is dropped, not delivered wrongly). */
export function decodeLogoutJob(payload: string): LogoutJob | null {
  try {
    const value: unknown = JSON.parse(payload);
    if (!Array.isArray(value) || value.length !== 5) return null;
    const [accountId, clientId, userId, sid, attempts] = value as unknown[];
    if (typeof accountId !== 'string' || typeof clientId !== 'string' || typeof userId !== 'string' || typeof sid !== 'string') return null;
    if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 0) return null;
    return { accountId, clientId, userId, sid, attempts };
  } catch {
    return null;
  }
}

/**
 * Where a service's deliveries wait: in its store when the store has the queue methods (MemoryStore, RedisStore:
 * shared and durable as the store is), else in process. A worker subscribes with {@link LogoutQueue.onQueued} so
 * that a delivery queued on this instance leaves at once instead of at the next poll.
 */
export class LogoutQueue {
  readonly #store: Store;
  readonly #fallback: MemoryJobQueues | undefined;
  #listener: (() => void) | undefined;

  constructor(store: Store) {
    this.#store = store;
    const complete = store.enqueueJobs !== undefined && store.claimJobs !== undefined && store.settleJob !== undefined;
    this.#fallback = complete ? undefined : new MemoryJobQueues();
  }

  /** Whether deliveries wait in the store (`false`: in this process only). */
  get durable(): boolean {
    return this.#fallback === undefined;
  }

  /** Calls `listener` after every enqueue on this instance. */
  onQueued(listener: () => void): void {
    this.#listener = listener;
  }

  /**
   * Queues one delivery per app, due now. `store` is the request's (its spans nest under the request's).
   *
   * @example await queue.enqueue(context.store, jobs);
   */
  async enqueue(store: Store, jobs: readonly LogoutJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = Date.now();
    const queued: QueuedJob[] = jobs.map((job) => ({
      id: digest(`${job.sid} ${job.clientId}`),
      payload: encodeLogoutJob(job),
      dueAt: now,
    }));
    const target = this.#fallback ?? (store.enqueueJobs !== undefined ? store : this.#store);
    await (target as Required<Pick<Store, 'enqueueJobs'>>).enqueueJobs(LOGOUT_QUEUE, queued);
    this.#listener?.();
  }

  /** Claims due deliveries (see `Store.claimJobs`). */
  claim(now: number, leaseMs: number, max: number): Promise<ClaimedJob[]> {
    return (this.#fallback ?? (this.#store as Required<Pick<Store, 'claimJobs'>>)).claimJobs(LOGOUT_QUEUE, now, leaseMs, max);
  }

  /** Ends or reschedules a claimed delivery (see `Store.settleJob`). */
  settle(job: ClaimedJob, next: LogoutJob | null, dueAt: number): Promise<boolean> {
    const target = this.#fallback ?? (this.#store as Required<Pick<Store, 'settleJob'>>);
    return target.settleJob(LOGOUT_QUEUE, job.id, job.lease, next === null ? null : { payload: encodeLogoutJob(next), dueAt });
  }
}
