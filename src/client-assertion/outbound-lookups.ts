/**
 * One process-wide bound on the DNS lookups of outbound requests made for clients: `jwks_uri` key sets (apps' and
 * trusted issuers'), client ID metadata documents (guarded-fetch.ts), back-channel logout deliveries and the check of
 * a registered `backchannel_logout_uri` (src/sessions/logout-target.ts).
 *
 * - Why: `dns.lookup` (`getaddrinfo`) runs on libuv's thread pool, which file reads, hashing, scrypt and the PKCS#11
 *   signer share (4 threads unless `UV_THREADPOOL_SIZE` says otherwise), and cannot be cancelled. A made-up host whose
 *   name server never answers holds a thread for the resolver's whole timeout, long after the request's own deadline
 *   has answered its caller. Each feature's own limit (32 metadata fetches, 32 key-set fetches per fetcher, 32
 *   deliveries) is far above the pool, so together they could hold every thread, and with them the whole process.
 * - How many: half the pool ({@link OUTBOUND_LOOKUP_SLOTS}, 2 by default), so the other half always serves the rest.
 * - A lookup beyond the bound waits for a slot until its caller's deadline, then fails as a lookup that did not
 *   answer in time: each feature already handles that (a key set or document refused, a delivery retried). A slot is
 *   given back when its lookup settles, not when the caller stops waiting: the thread is held until then.
 * - Fair between features: each names its `purpose`, and a freed slot goes to the purposes in turn (the oldest waiter
 *   of each), so a flood of one (made-up `client_id` URLs need no registration) cannot starve the others; it only
 *   takes its own turns.
 */
import { lookup } from 'node:dns/promises';

/** An address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** libuv's thread pool as this process was started with it (libuv reads `UV_THREADPOOL_SIZE` once, at first use). */
function poolThreads(): number {
  const configured = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  return Number.isInteger(configured) && configured > 0 ? configured : 4;
}

/**
 * Outbound DNS lookups in progress at once in this process: half of libuv's pool (2 of the default 4), at least 1.
 * Raising `UV_THREADPOOL_SIZE` raises it.
 */
export const OUTBOUND_LOOKUP_SLOTS = Math.max(1, Math.floor(poolThreads() / 2));

/** Why a lookup did not run: no slot came free before its caller's deadline. */
export class LookupSlotTimeout extends Error {
  constructor() {
    super('no DNS lookup slot came free in time');
    this.name = 'LookupSlotTimeout';
  }
}

interface Waiter {
  start: () => void;
}

let used = 0;
/** Waiters per purpose, oldest first; the Map's order is the turn (a purpose served moves last). */
const waiting = new Map<string, Waiter[]>();

function next(): void {
  for (const [purpose, queue] of waiting) {
    const waiter = queue.shift() as Waiter;
    waiting.delete(purpose);
    if (queue.length > 0) waiting.set(purpose, queue);
    waiter.start();
    return;
  }
}

async function run(host: string): Promise<ResolvedAddress[]> {
  used += 1;
  try {
    return await lookup(host, { all: true, verbatim: true });
  } finally {
    used -= 1;
    next();
  }
}

/**
 * Every address `host` resolves to (`lookup(host, { all: true, verbatim: true })`), within the process-wide bound.
 * `purpose` names the feature, for the turns; `signal` is the caller's deadline: once it fires, a lookup still
 * waiting for a slot is given up (rejecting with {@link LookupSlotTimeout}), while one already running goes on, since
 * it cannot be stopped, and the promise settles when it does (a caller races it with its deadline).
 *
 * @example const addresses = await boundedLookup('keys.example.com', 'the jwks_uri', AbortSignal.timeout(2000));
 */
export function boundedLookup(host: string, purpose: string, signal?: AbortSignal): Promise<ResolvedAddress[]> {
  if (signal?.aborted === true) return Promise.reject(new LookupSlotTimeout());
  if (used < OUTBOUND_LOOKUP_SLOTS && waiting.size === 0) return run(host);
  return new Promise<ResolvedAddress[]>((resolve, reject) => {
    const giveUp = (): void => {
      const queue = waiting.get(purpose);
      const at = queue?.indexOf(waiter) ?? -1;
      if (queue === undefined || at < 0) return;
      queue.splice(at, 1);
      if (queue.length === 0) waiting.delete(purpose);
      reject(new LookupSlotTimeout());
    };
    const waiter: Waiter = {
      start: () => {
        signal?.removeEventListener('abort', giveUp);
        run(host).then(resolve, reject);
      },
    };
    const queue = waiting.get(purpose);
    if (queue === undefined) waiting.set(purpose, [waiter]);
    else queue.push(waiter);
    signal?.addEventListener('abort', giveUp, { once: true });
  });
}
