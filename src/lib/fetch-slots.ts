/**
 * A bound on how many outbound fetches made for clients (client ID metadata documents, `jwks_uri` key sets) one
 * service instance runs at once. Each holds a socket, a deadline's worth of time and up to its size cap in memory,
 * and the URLs are anyone's to make up (a `client_id` URL needs no registration), so without a bound one sender
 * could make the instance fetch from as many hosts at once as it sends distinct URLs: an amplifier, and a way to run
 * it out of sockets and memory. A fetch beyond the bound is not queued (a queue would grow as fast as the sender
 * sends): the caller refuses it at once, as it refuses a fetch that failed.
 */

/**
 * Counts the fetches in progress against a fixed number of slots.
 * @example
 * const release = slots.take();
 * if (release === null) throw busy();
 * try { return await fetchIt(); } finally { release(); }
 */
export class FetchSlots {
  readonly #max: number;
  #used = 0;

  /** `max`: how many fetches may run at once (a positive integer). */
  constructor(max: number) {
    this.#max = max;
  }

  /**
   * A slot, as the function that gives it back (calling it again does nothing), or `null` when every slot is taken.
   * @example const release = slots.take();
   */
  take(): (() => void) | null {
    if (this.#used >= this.#max) return null;
    this.#used += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#used -= 1;
    };
  }
}
