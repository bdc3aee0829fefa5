/**
 * The pool of sessions of a PKCS#11 signer (`sentinel-idp/pkcs11`): a PKCS#11 session performs one operation at a
 * time, so each session is lent to one signature at a time, and the pool closes only once none is lent.
 */

const NOT_STARTED = 'the PKCS#11 signer was closed before this signature started';
const QUEUE_FULL = 'the PKCS#11 signer has too many signatures waiting for a session';

/** The sessions of one signer, each lent to one signature at a time (a PKCS#11 session runs one operation). */
export interface SessionPool<S> {
  /**
   * Runs `operation` on a session of its own, waiting for one if all are lent; rejects once the pool is closed, and
   * at once when `maxWaiting` signatures already wait.
   */
  use<T>(operation: (session: S) => Promise<T>): Promise<T>;
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
  const acquire = (): Promise<S> => {
    const session = idle.pop();
    if (session === undefined) {
      if (waiting.length >= maxWaiting) return Promise.reject(new Error(QUEUE_FULL));
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
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
    async use<T>(operation: (session: S) => Promise<T>): Promise<T> {
      if (closed !== null) throw new Error('the PKCS#11 signer is closed');
      const session = await acquire();
      // Taken: from here on the session goes back whatever happens (a refused waiter never had one).
      try {
        // close() came between taking the session and starting (a hand-over from a signature that ended, or the
        // microtask of `await`): this signature had not started, so it does not.
        if (closed !== null) throw new Error(NOT_STARTED);
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
