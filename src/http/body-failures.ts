/**
 * Two ways a request body fails that are the client's doing, not the server's, so neither may reach `onError` as
 * a server failure:
 *
 * - it stops arriving: a body trickled one byte a second would hold the request (and its store work) until the
 *   host's own timeout, 300 s on Node. Body reads get their own deadline (`bodyTimeout`) and the core answers
 *   408 (RFC 9110 §15.5.9) with `Connection: close`, which also ends the trickle;
 * - the client drops the connection mid-body: the reader reports a {@link ClientAbortedError} and the core
 *   answers 400, which nobody receives, and reports nothing.
 */
import { isThenable } from '../lib/thenable.js';
import { deadlineQueue } from '../lib/deadline-queue.js';

const CLIENT_ABORTED = Symbol.for('sentinel-idp.ClientAborted');
const BODY_TIMEOUT = Symbol.for('sentinel-idp.BodyTimeout');

/**
 * Thrown by body readers when the client closed or reset the connection before the body was complete.
 *
 * @example
 * request.on('close', () => { if (!request.complete) reject(new ClientAbortedError()); });
 * @see RFC 9112 §8 (an incomplete message)
 */
export class ClientAbortedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the client closed the connection before the request body was complete', options);
    this.name = 'ClientAbortedError';
    Object.defineProperty(this, CLIENT_ABORTED, { value: true });
  }
}

/**
 * True for a {@link ClientAbortedError} from any copy of this package (a brand check, not `instanceof`).
 *
 * @example
 * catch (error) { if (isClientAborted(error)) return; throw error; }
 * @see RFC 9112 §8 (an incomplete message)
 */
export function isClientAborted(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CLIENT_ABORTED] === true;
}

/** The body did not arrive within the deadline. */
class BodyTimeoutError extends Error {
  constructor(ms: number) {
    super(`the request body did not arrive within ${ms} ms`);
    this.name = 'BodyTimeoutError';
    Object.defineProperty(this, BODY_TIMEOUT, { value: true });
  }
}

/** True for the error of a body read that missed its deadline. */
export function isBodyTimeout(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BODY_TIMEOUT] === true;
}

/**
 * Wraps a lazy body reader so that the read fails with a body-timeout error after `ms` milliseconds. The abandoned
 * read settles later (when the connection closes after the 408) and its outcome is dropped.
 *
 * @example
 * const body = withBodyDeadline(() => readNodeStream(request), 10_000);
 */
export function withBodyDeadline<T>(read: () => T | Promise<T>, ms: number): () => T | Promise<T> {
  return () => {
    const pending = read();
    // A body that is already here needs no deadline (and no timer set and cleared for nothing).
    if (!isThenable(pending)) return pending;
    // One promise settled by whichever comes first (Promise.race and finally would cost three more per request).
    // The read's late outcome, after the deadline, is still subscribed to here, so it is handled, not unhandled.
    // The deadline joins the queue of its duration: one timer for every body in flight, not one per request.
    const queue = deadlineQueue(ms);
    return new Promise<T>((resolve, reject) => {
      const deadline = queue.add(() => reject(new BodyTimeoutError(ms)));
      pending.then(
        (value) => {
          queue.settle(deadline);
          resolve(value);
        },
        (error: unknown) => {
          queue.settle(deadline);
          reject(error);
        },
      );
    });
  };
}
