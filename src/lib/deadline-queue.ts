/**
 * Deadlines that all lie the same time after their start, kept with one timer instead of one per deadline.
 *
 * Every request with a body used to set and clear a `setTimeout` of its own for `bodyTimeout`: a timer object, a
 * list insertion and its removal, about 1.2 µs per request in the code-flow profiles (bench/RESULTS.md), spent
 * nearly always on a body that arrived in the same tick. Since every deadline of a queue is its start plus the same
 * `ms`, they expire in the order they were added: the queue is a Set in insertion order, and one timer, armed for the
 * oldest waiting deadline, fires, fails what has expired, and re-arms for the next. Adding and settling cost a Set
 * insertion and deletion. The timer is unref'd: what waits is a read of a socket, which keeps the process alive
 * itself.
 */

/** One waiting deadline; hand it back to {@link DeadlineQueue.settle} when its work finished in time. */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

/**
 * The deadlines of one duration. `expire` runs once, `ms` after `add`, unless the deadline was settled before.
 *
 * @example
 * const queue = deadlineQueue(10_000);
 * const deadline = queue.add(() => reject(new Error('too slow')));
 * work.then(() => queue.settle(deadline));
 */
export class DeadlineQueue {
  readonly #ms: number;
  readonly #waiting = new Set<Deadline>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Deadlines waiting now. */
  get size(): number {
    return this.#waiting.size;
  }

  add(expire: () => void): Deadline {
    const deadline = { at: performance.now() + this.#ms, expire };
    this.#waiting.add(deadline);
    if (this.#timer === undefined) this.#arm(this.#ms);
    return deadline;
  }

  settle(deadline: Deadline): void {
    this.#waiting.delete(deadline);
    // Nothing left to wait for: no timer keeps firing for an idle queue.
    if (this.#waiting.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #arm(delay: number): void {
    this.#timer = setTimeout(() => this.#sweep(), delay);
    this.#timer.unref();
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const deadline of this.#waiting) {
      if (deadline.at > now) {
        this.#arm(deadline.at - now);
        return;
      }
      this.#waiting.delete(deadline);
      deadline.expire();
    }
  }
}

const queues = new Map<number, DeadlineQueue>();

/** The shared queue of deadlines `ms` long (one per configured duration; a service has one or a few). */
export function deadlineQueue(ms: number): DeadlineQueue {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue;
}
