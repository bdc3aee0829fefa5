/**
 * The pool of sessions of a PKCS#11 signer (`sentinel-idp/pkcs11`): a PKCS#11 session performs one operation at a
 * time, so each session is lent to one signature at a time, and the pool closes only once none is lent.
 */

const NOT_STARTED = 'the PKCS#11 signer was closed before this signature started';
const QUEUE_FULL = 'the PKCS#11 signer has too many signatures waiting for a session';
const ABANDONED = 'the signature was abandoned (its signing deadline passed) before it started';

/** The sessions of one signer, each lent to one signature at a time (a PKCS#11 session runs one operation). */
export interface SessionPool<S> {
  /**
   * Runs `operation` on a session of its own, waiting for one if all are lent; rejects once the pool is closed, and
   * at once when `maxWaiting` signatures already wait. Once `signal` aborts, a signature still waiting leaves the
   * queue (rejected) and one handed a session but not started does not start.
   */
  use<T>(operation: (session: S) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Refuses new work and the callers still waiting; resolves once `shutdown` has run (when no session is lent). */
  close(): Promise<void>;
}

/**
 * A {@link SessionPool} that runs `shutdown` (C_CloseSession, C_Finalize, unloading the module) only when no session
 * is lent: a C_Sign still running on a libuv pool thread would otherwise call into a finalised, unloaded module and
 * crash the process (SIGSEGV). At most `maxWaiting` callers wait for a session: behind a token that stopped
 * answering, each waiter is a request holding its socket and memory, and a queue without end grows until the
 * process falls over; refusing at once lets the request fail fast (500) instead.
 * @example const pool = sessionPool(leases, () => closeAll(), 64);
 */
export function sessionPool<S>(sessions: readonly S[], shutdown: () => void, maxWaiting = Number.POSITIVE_INFINITY): SessionPool<S> {
  const idle = [...sessions];
  const waiting: { resolve: (session: S) => void; reject: (error: Error) => void }[] = [];
  // Sessions lent, counted from the moment one is handed out (also to a waiter, before it resumes) until it is back.
  let lent = 0;
  let closed: Promise<void> | null = null;
  let shutdownPending: (() => void) | null = null; // set by close(), run once when the last session is back
  const finishWhenIdle = (): void => {
    if (shutdownPending === null || lent > 0) return;
    const finish = shutdownPending;
    shutdownPending = null;
    finish();
  };
  const acquire = (signal: AbortSignal | undefined): Promise<S> => {
    const session = idle.pop();
    if (session === undefined) {
      if (waiting.length >= maxWaiting) return Promise.reject(new Error(QUEUE_FULL));
      return new Promise((resolve, reject) => {
        // A request past its deadline has failed already: its waiter leaves the queue, so that it neither keeps a
        // place a live request could take nor has the token sign, later, what nobody will read.
        const abandon = (): void => {
          const index = waiting.indexOf(waiter);
          if (index >= 0) waiting.splice(index, 1);
          reject(new Error(ABANDONED));
        };
        const waiter = {
          resolve: (taken: S) => {
            signal?.removeEventListener('abort', abandon);
            resolve(taken);
          },
          reject: (error: Error) => {
            signal?.removeEventListener('abort', abandon);
            reject(error);
          },
        };
        waiting.push(waiter);
        signal?.addEventListener('abort', abandon, { once: true });
      });
    }
    lent += 1;
    return Promise.resolve(session);
  };
  const release = (session: S): void => {
    const next = waiting.shift();
    if (next !== undefined) {
      next.resolve(session); // still lent, now to the next signature
      return;
    }
    idle.push(session);
    lent -= 1;
    finishWhenIdle();
  };
  return {
    async use<T>(operation: (session: S) => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (closed !== null) throw new Error('the PKCS#11 signer is closed');
      const abandoned = (): boolean => signal?.aborted === true;
      if (abandoned()) throw new Error(ABANDONED);
      const session = await acquire(signal);
      // Taken: from here on the session goes back whatever happens (a refused waiter never had one).
      try {
        // close() came between taking the session and starting (a hand-over from a signature that ended, or the
        // microtask of `await`): this signature had not started, so it does not.
        if (closed !== null) throw new Error(NOT_STARTED);
        if (abandoned()) throw new Error(ABANDONED);
        return await operation(session);
      } finally {
        release(session);
      }
    },
    close(): Promise<void> {
      if (closed === null) {
        closed = new Promise<void>((resolve, reject) => {
          shutdownPending = () => {
            try {
              shutdown();
              resolve();
            } catch (error) {
              reject(error);
            }
          };
        });
        for (const waiter of waiting.splice(0)) waiter.reject(new Error(NOT_STARTED));
        finishWhenIdle();
      }
      return closed;
    },
  };
}
