/**
 * Hands work to the libuv thread pool in batches: everything asked for during one turn of the event loop is
 * dispatched together, after the loop has read all the I/O that was ready.
 *
 * Why: a pool thread that finds the queue empty goes to sleep, and waking it again costs a futex call and a
 * context switch on each side. A loaded server that dispatched each signature the moment its request was parsed
 * woke a thread per signature; in a loop on this machine, signatures dispatched one at a time cost 88 µs of CPU
 * each (31 µs of it on the main thread), twenty at a time 38 µs. Waiting for the check phase delays a signature by
 * the rest of the current loop turn, microseconds, and lets the threads take the batch without sleeping in between.
 */

// From node:timers, not the global: a host's tests that fake the global timers must not stall every signature.
import { setImmediate } from 'node:timers';

type Dispatch = () => void;

let queued: Dispatch[] = [];
let scheduled = false;

function flush(): void {
  const batch = queued;
  queued = [];
  scheduled = false;
  for (const dispatch of batch) dispatch();
}

/**
 * Runs `start` (which must hand its work to the thread pool and settle the returned promise from the pool's
 * callback) in the next batch.
 *
 * @example const signature = await inNextBatch<Buffer>((done, fail) => sign(hash, data, options, (e, s) => (e ? fail(e) : done(s))));
 */
export function inNextBatch<T>(start: (resolve: (value: T) => void, reject: (error: unknown) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queued.push(() => {
      try {
        start(resolve, reject);
      } catch (error) {
        reject(error);
      }
    });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}
