/**
 * The delivery loop of one instance: claims due logout deliveries from the queue, signs a logout token for each,
 * posts it, and settles the job: gone when the app took it (or refused it), back in the queue with a backoff when a
 * retry may help.
 *
 * - At-least-once: a job leaves the queue only after its outcome is known. An instance that dies mid-delivery leaves
 *   its claimed jobs leased; they come due again when the lease ends and another instance (or this one, restarted)
 *   takes them. The app may then get the same logout (a new token) twice, which §2.6 allows it to treat as done.
 * - One instance takes each delivery: the claim is one atomic step in the store (a Lua script on Redis).
 * - Nothing waits on an app: the ending request only queues; deliveries run here, each bounded to 5 s, at most
 *   {@link MAX_IN_FLIGHT} at a time and {@link MAX_IN_FLIGHT_PER_APP} per app, so a hanging app holds a few slots,
 *   never the loop, and the other apps' deliveries go on.
 * - The loop polls every second (deliveries queued elsewhere, retries coming due) and is woken at once by a delivery
 *   queued on this instance. Its timer is unref'd: it never keeps a process alive; `sentinel.close()` stops it.
 * - Deliveries to one app reuse kept-alive connections, each pinned to an address the guard checked at that
 *   attempt ({@link LogoutAgents}); `close()` closes them.
 */
import { AsyncResource } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import type { App } from '../apps/app.js';
import { namesMetadataDocument } from '../apps/client-id-metadata.js';
import type { FailureReport } from '../http/edge.js';
import type { SentinelContext } from '../http/context.js';
import type { ServiceKeys } from '../keys/keyring/service-keys.js';
import type { ClaimedJob } from '../stores/store.js';
import { observeDelivery } from '../telemetry/delivery-span.js';
import { LogoutAgents } from './logout-agents.js';
import { findLogoutApp } from './logout-app.js';
import { decodeLogoutJob, type LogoutJob } from './logout-queue.js';
import { signLogoutToken } from './logout-token.js';
import { appIdTokenAlg } from '../token/id-token.js';
import { type PostOutcome, postLogoutToken } from './post-logout-token.js';

/** How often the loop looks for due deliveries, in milliseconds. */
export const POLL_MS = 1000;
/** How long a claim holds a job: well above one attempt (signing, a 5 s POST, settling). */
export const LEASE_MS = 20_000;
/** Most deliveries in flight on one instance. */
export const MAX_IN_FLIGHT = 32;
/**
 * The wait before each retry, in milliseconds: attempts at about 0, 2, 6, 14, 30 and 60 s, six within a minute.
 * Each wait is stretched by up to a tenth at random, so apps that come back are not hit by every retry at once.
 */
export const RETRY_DELAYS_MS: readonly number[] = [2000, 4000, 8000, 16_000, 30_000];
/**
 * Most deliveries in flight to one app on one instance: half the slots. A hanging app holds at most these (and its
 * {@link HELD_PER_APP} waiting), so the other apps keep a quarter of the room at worst. With 8, a busy app's
 * backlog drained at 0.2x a hand-written sender's rate, its claims putting back hundreds of its jobs for a second
 * each; with 16, at about 0.5x with none put back (bench/RESULTS.md, Findings, "Logout delivery").
 */
export const MAX_IN_FLIGHT_PER_APP = 16;
/**
 * Claimed deliveries of an app that holds all of its slots wait on this instance, at most this many per app, and
 * start as its slots come free. Without them a backlog drained slowly: each claim took jobs of the busy app only to
 * put them back, so most claims started nothing (docs/guides/sessions-and-logout.md, "Measured"). Fewer than the
 * app's slots: held jobs count against the claim's room, and a hanging app must leave some of it to the others.
 */
export const HELD_PER_APP = 8;
/** How long a delivery waits when its app holds all of its slots and its held ones, in milliseconds (not counted as an attempt). */
export const APP_BUSY_DELAY_MS = 1000;
/**
 * How long a delivery waits when its attempt got no DNS lookup slot (src/client-assertion/outbound-lookups.ts) before
 * its 5 s deadline, in milliseconds; not counted as an attempt. Anyone can fill those slots (made-up `client_id`
 * hosts whose name servers never answer), so counting such attempts let other people's traffic give a logout up.
 * Each goes back at most once per deadline and this wait, so a flood that lasts does not turn the loop hot.
 */
export const LOOKUP_BUSY_DELAY_MS = 2000;
/** Attempts before a delivery is given up. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A claimed delivery whose app is known: what starting it needs. */
interface HeldDelivery {
  job: ClaimedJob;
  logout: LogoutJob;
  app: App;
  /** `accountId clientId`: the key of the per-app limits. */
  appKey: string;
}

/** The route name of deliveries in spans, metrics and `onError`. */
const ROUTE = 'logout-delivery';

/**
 * One instance's delivery loop.
 *
 * @example
 * const worker = new LogoutDeliveryWorker(context, serviceKeys, report);
 * worker.start();
 * await worker.close(); // on shutdown
 */
export class LogoutDeliveryWorker {
  readonly #context: SentinelContext;
  readonly #serviceKeys: ServiceKeys;
  readonly #report: FailureReport;
  readonly #inFlight = new Set<Promise<void>>();
  /** Deliveries in flight per app (`accountId clientId`), for {@link MAX_IN_FLIGHT_PER_APP}. */
  readonly #perApp = new Map<string, number>();
  /** Claimed deliveries waiting for a slot of their app ({@link HELD_PER_APP}), oldest first, per app. */
  readonly #held = new Map<string, HeldDelivery[]>();
  #heldCount = 0;
  readonly #stopping = new AbortController();
  /** Kept-alive connections to the apps: a handshake per app and connection, not per delivery. */
  readonly #agents = new LogoutAgents({ maxSockets: MAX_IN_FLIGHT_PER_APP });
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The poll under way, if any: one at a time per instance. */
  #current: Promise<void> | undefined;
  #again = false;
  /** Whether the last poll failed: a store that stays down is reported once, not every second. */
  #failing = false;

  constructor(context: SentinelContext, serviceKeys: ServiceKeys, report: FailureReport) {
    this.#context = context;
    this.#serviceKeys = serviceKeys;
    this.#report = report;
    // Each attempt under way listens on the stop signal until it is done (post-logout-token.ts), so up to
    // MAX_IN_FLIGHT at once: more than Node's default of 10, past which it warns of a leak that this is not.
    setMaxListeners(MAX_IN_FLIGHT + 1, this.#stopping.signal);
  }

  /**
   * Starts polling, and listens for deliveries queued on this instance. The timer reaches the worker through a weak
   * reference: a service the host let go of (a test's, a tenant's that was replaced) is collected with its store and
   * configuration instead of being kept alive by its own poll, and the timer's next tick then clears it. No
   * FinalizationRegistry does that clearing: with one registered beside the weak reference, an authorize request
   * counted about 60 % more instructions under callgrind, in V8's GC and compiler threads (bench/RESULTS.md, Findings).
   */
  start(): void {
    if (this.#timer !== undefined || this.#stopping.signal.aborted) return;
    const worker = new WeakRef(this);
    const timer = setInterval(() => {
      const live = worker.deref();
      if (live === undefined) clearInterval(timer);
      else void live.poll();
    }, POLL_MS);
    timer.unref();
    this.#timer = timer;
    // A poll woken by a request runs in the context the service was started in, as the timer's do, not in the waking
    // request's: a host's request-scoped AsyncLocalStorage (a logger naming the request, a tenant) would otherwise
    // follow every delivery that poll starts, and the ones it starts after them, into another request's logs.
    const outside = new AsyncResource('sentinel.logout-delivery');
    this.#context.logoutQueue.onQueued(() => {
      // After the ending request's own work: its answer never waits on a claim.
      const live = worker.deref();
      if (live !== undefined && !live.#stopping.signal.aborted) setImmediate(() => outside.runInAsyncScope(() => void live.poll()));
    });
  }

  /**
   * Stops the loop: no new claims; deliveries in flight are cut off and their jobs given back to the queue due now,
   * so another instance (or this one, restarted) delivers them without waiting for the lease. Then the kept-alive
   * connections are closed.
   */
  async close(): Promise<void> {
    this.#stopping.abort();
    clearInterval(this.#timer);
    await this.#giveBackHeld();
    // A claim answered after the abort hands its jobs back (see poll); wait for it and every delivery it started.
    while (this.#current !== undefined || this.#inFlight.size > 0) {
      await Promise.allSettled([this.#current, ...this.#inFlight]);
    }
    this.#agents.close();
  }

  /** Claims and starts what is due, as long as there is room; never rejects. */
  poll(): Promise<void> {
    if (this.#current !== undefined) {
      this.#again = true;
      return this.#current;
    }
    this.#current = this.#claimDue().finally(() => {
      this.#current = undefined;
    });
    return this.#current;
  }

  async #claimDue(): Promise<void> {
    try {
      do {
        this.#again = false;
        const room = MAX_IN_FLIGHT - this.#inFlight.size - this.#heldCount;
        if (room <= 0 || this.#stopping.signal.aborted) break;
        const jobs = await this.#context.logoutQueue.claim(Date.now(), LEASE_MS, room);
        this.#failing = false;
        if (this.#stopping.signal.aborted) {
          // Closed while the claim was under way: the jobs go back, due now, for another instance.
          await Promise.all(jobs.map((job) => this.#context.logoutQueue.settle(job, decodeLogoutJob(job.payload), Date.now())));
          break;
        }
        for (const job of jobs) this.#track(this.#deliver(job));
        if (jobs.length === room) this.#again = true;
      } while (this.#again);
    } catch (error) {
      if (!this.#failing) this.#report(error, ROUTE, undefined);
      this.#failing = true;
    }
  }

  #track(delivery: Promise<void>): void {
    this.#inFlight.add(delivery);
    void delivery.finally(() => {
      this.#inFlight.delete(delivery);
      // A slot came free: more may be due.
      if (!this.#stopping.signal.aborted) void this.poll();
    });
  }

  /** One attempt of one job, and its settling; never rejects. */
  async #deliver(job: ClaimedJob): Promise<void> {
    const context = this.#context;
    const queue = context.logoutQueue;
    const logout = decodeLogoutJob(job.payload);
    try {
      if (logout === null) {
        await queue.settle(job, null, 0);
        return;
      }
      // Queued by the CLI, which cannot tell a document's client from a registry app: a document names no
      // backchannelLogoutUri, and looking it up would fetch a third party's URL. Dropped as an app without one.
      if (namesMetadataDocument(context.config, logout.clientId)) {
        await queue.settle(job, null, 0);
        return;
      }
      // Disabled or not (logout-app.ts): a disabled app's own sessions with the user outlive its tokens.
      const app = await findLogoutApp(context.apps, logout.accountId, logout.clientId);
      if (app === null || app.accountId !== logout.accountId || app.backchannelLogoutUri === undefined) {
        // An app that takes no logout tokens (queued by the CLI, which has no registry, or one that dropped its URI
        // since): nothing to deliver and nothing to report.
        await queue.settle(job, null, 0);
        return;
      }
      const delivery: HeldDelivery = { job, logout, app, appKey: `${logout.accountId} ${logout.clientId}` };
      if ((this.#perApp.get(delivery.appKey) ?? 0) < MAX_IN_FLIGHT_PER_APP) {
        await this.#run(delivery);
        return;
      }
      const held = this.#held.get(delivery.appKey) ?? [];
      if (held.length < HELD_PER_APP && !this.#stopping.signal.aborted) {
        // The app holds all of its slots: the job waits here for the next one (see #run), still under its lease.
        held.push(delivery);
        this.#held.set(delivery.appKey, held);
        this.#heldCount++;
        return;
      }
      // This app holds its share of the slots and of the waiting room (it is slow or hanging): the job goes back for
      // a little while, uncounted, so the other apps' deliveries are not stuck behind it.
      await queue.settle(job, logout, Date.now() + APP_BUSY_DELAY_MS);
    } catch (error) {
      // The store failed while settling: the job stays leased and comes due again (at-least-once).
      this.#report(error, ROUTE, logout?.accountId);
    }
  }

  /** One attempt of a job whose app has a free slot, and its settling; then the app's next held job. Never rejects. */
  async #run(delivery: HeldDelivery): Promise<void> {
    const { job, logout, app, appKey } = delivery;
    const context = this.#context;
    const queue = context.logoutQueue;
    this.#perApp.set(appKey, (this.#perApp.get(appKey) ?? 0) + 1);
    try {
      const attempts = logout.attempts + 1;
      let outcome: PostOutcome;
      try {
        outcome = await observeDelivery(logout.accountId, logout.clientId, context.config.telemetry.identifiersInMetrics, () =>
          this.#attempt(logout, app),
        );
      } finally {
        const left = (this.#perApp.get(appKey) ?? 1) - 1;
        if (left === 0) this.#perApp.delete(appKey);
        else this.#perApp.set(appKey, left);
        this.#startHeld(appKey);
      }
      if (this.#stopping.signal.aborted && outcome.kind !== 'delivered') {
        // Cut off by close(): not an attempt the app saw through, so it is not counted.
        await queue.settle(job, logout, Date.now());
        return;
      }
      if (outcome.kind === 'retry' && outcome.starved === true) {
        // Never left this process (other lookups held every slot): the app was not asked, so it is not counted.
        await queue.settle(job, logout, Date.now() + LOOKUP_BUSY_DELAY_MS);
        return;
      }
      if (outcome.kind === 'retry' && attempts < MAX_ATTEMPTS) {
        const delay = (RETRY_DELAYS_MS[attempts - 1] as number) * (1 + Math.random() / 10);
        await queue.settle(job, { ...logout, attempts }, Date.now() + delay);
        return;
      }
      let settled: boolean;
      try {
        settled = await queue.settle(job, null, 0);
      } catch (error) {
        // The last settle failed: the job is gone if the write landed with its answer lost, or still leased and due
        // again. Reported here either way, or a landed write left the outcome (delivered, or failed for good) told
        // to no one, the job gone from the queue; should the job come due again, its next attempt reports once more,
        // at least once as the delivery itself.
        this.#report(error, ROUTE, logout.accountId);
        this.#emit(logout, attempts, outcome);
        return;
      }
      // A job another instance claimed since (its lease ran out here) is that instance's to report, unless delivered.
      if (!settled && outcome.kind !== 'delivered') return;
      this.#emit(logout, attempts, outcome);
    } catch (error) {
      // The store failed while settling: the job stays leased and comes due again (at-least-once).
      this.#report(error, ROUTE, logout.accountId);
    }
  }

  /**
   * Starts the oldest held job of `appKey` in the slot that just came free. One whose lease is more than half gone
   * goes back to the queue instead, due now: another instance must not take it while this one is still posting.
   */
  #startHeld(appKey: string): void {
    const held = this.#held.get(appKey);
    const next = held?.shift();
    if (held === undefined || next === undefined) return;
    if (held.length === 0) this.#held.delete(appKey);
    this.#heldCount--;
    if (this.#stopping.signal.aborted || next.job.lease - Date.now() < LEASE_MS / 2) {
      this.#track(this.#giveBack(next));
      return;
    }
    this.#track(this.#run(next));
  }

  /** Puts a held job back in the queue, due now and uncounted; never rejects. */
  async #giveBack(delivery: HeldDelivery): Promise<void> {
    try {
      await this.#context.logoutQueue.settle(delivery.job, delivery.logout, Date.now());
    } catch (error) {
      // The job stays leased and comes due again when the lease ends (at-least-once).
      this.#report(error, ROUTE, delivery.logout.accountId);
    }
  }

  /** On close: every held job back to the queue, due now, for another instance. */
  async #giveBackHeld(): Promise<void> {
    const all = [...this.#held.values()].flat();
    this.#held.clear();
    this.#heldCount = 0;
    await Promise.all(all.map((delivery) => this.#giveBack(delivery)));
  }

  /** Signs and posts one logout token; a failure to sign (a key ring down) is reported and retried. */
  async #attempt(logout: LogoutJob, app: App): Promise<PostOutcome> {
    const context = this.#context;
    const uri = app.backchannelLogoutUri as string;
    let token: string;
    try {
      token = await this.#withAccountKeys(logout.accountId, () =>
        signLogoutToken(context, { ...logout, alg: appIdTokenAlg(context, app) }),
      );
    } catch (error) {
      this.#report(error, ROUTE, logout.accountId);
      return { kind: 'retry', reason: 'the logout token could not be signed' };
    }
    return postLogoutToken(uri, token, {
      allowPrivateAddresses: context.config.clientJwks.allowPrivateAddresses,
      signal: this.#stopping.signal,
      agents: this.#agents,
    });
  }

  /** Runs `work` under the account's own key ring when accounts have them, as the edge does for a request. */
  async #withAccountKeys<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    const { ring, accountRings } = this.#serviceKeys;
    const loading = ring?.fresh();
    if (loading !== undefined) await loading;
    if (accountRings !== undefined && (await this.#context.apps.hasAccount(accountId))) {
      return accountRings.run(accountRings.ring(accountId), work);
    }
    return work();
  }

  #emit(logout: LogoutJob, attempts: number, outcome: PostOutcome): void {
    const base = { accountId: logout.accountId, clientId: logout.clientId, userId: logout.userId, attempts };
    try {
      if (outcome.kind === 'delivered') this.#context.emit({ type: 'logout.delivered', ...base });
      else this.#context.emit({ type: 'logout.failed', ...base, reason: outcome.reason });
    } catch (error) {
      // A throwing onEvent: reported, and the delivery stays settled (the app got, or refused, its token).
      this.#report(error, ROUTE, logout.accountId);
    }
  }
}
