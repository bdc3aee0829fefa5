/**
 * `RedisStore`: the {@link Store} for several instances serving one issuer (`sentinel-idp/redis`).
 *
 * Only *types* come from ioredis (`import type`), so nothing here loads ioredis at runtime: the user brings an
 * already-configured client, and the core package never depends on ioredis being installed (it is an optional peer
 * dependency).
 *
 * Redis Cluster: every command this store sends touches one key (GET, SET, GETDEL, DEL, one-key Lua scripts) except
 * `swap`, whose keys must share a hash tag (`grant:{gid}` and `code:{gid}`), so no command can fail with CROSSSLOT:
 * a grant's keys live together on the shard their slot maps to.
 */
import type { Cluster, Redis } from 'ioredis';
import { evictionFinding, type NodePolicy, policyOfReply, untilReady } from './redis-eviction.js';
import {
  CLAIM_JOBS_SCRIPT,
  DECREMENT_SCRIPT,
  ENQUEUE_JOBS_SCRIPT,
  INCREMENT_SCRIPT,
  type Script,
  SETTLE_JOB_SCRIPT,
  SWAP_SCRIPT,
  TAKE_SCRIPT,
} from './redis-scripts.js';
import type { ClaimedJob, QueuedJob, Store, SwapEntry } from './store.js';
import { hashTag, type RedisStoreOptions, resolveRedisStoreOptions } from './redis-options.js';

export type { RedisStoreOptions } from './redis-options.js';

/** What Redis answers for a command it does not know (`ERR unknown command 'getdel', with args ...`). */
const UNKNOWN_COMMAND = /unknown command/i;

/** What Redis answers to EVALSHA for a script it does not have cached (after a restart, on a new cluster node). */
const NO_SCRIPT = /NOSCRIPT/;

/**
 * A {@link Store} in Redis, shared by every instance that uses the same Redis (or Redis Cluster) and prefix.
 *
 * - Values are strings; TTLs are milliseconds (`SET key value PX ttl`).
 * - `take` is GETDEL (atomic single use: one redemption of a code across instances, RFC 6749 §4.1.2), with a Lua
 *   `GET`+`DEL` fallback for servers that lack GETDEL.
 * - `increment` is a Lua script (INCR, then PEXPIRE on the first increment only): a fixed window.
 * - Every command touches one key, so the store works unchanged on Redis Cluster.
 * - Every operation is bounded by `commandTimeoutMs`, so a dead Redis fails requests quickly instead of hanging them.
 * - `ready()` (called by `sentinel.ready()`) rejects when Redis could evict keys (`maxmemory-policy` not `noeviction`),
 *   unless `allowEviction`, and warns when the policy cannot be read.
 *
 * The client belongs to the caller: this store never connects, quits or reconfigures it. Create it so that it fails
 * fast when Redis is down: `enableOfflineQueue: false` (reject at once instead of queueing while disconnected), and
 * a small `maxRetriesPerRequest` and/or ioredis' own `commandTimeout`. ioredis keeps reconnecting in the background,
 * so the same store instance works again once Redis is back.
 *
 * Errors are rethrown as plain `Error`s carrying the original message but not the original error: ioredis attaches
 * the command's arguments (keys and stored records) to its errors, and those must not reach logs.
 *
 * @example
 * import { Redis } from 'ioredis';
 * import { createSentinel } from 'sentinel-idp';
 * import { RedisStore } from 'sentinel-idp/redis';
 *
 * const client = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 * const sentinel = createSentinel({ issuer, apps, store: new RedisStore(client, { prefix: 'idp:' }) });
 */
export class RedisStore implements Store {
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  /**
   * Set once the server has said it does not know GETDEL; from then on `take` uses the script directly, instead of
   * paying a failed round trip on every call.
   */
  #noGetDel = false;
  readonly #allowEviction: boolean;
  /** The eviction-policy check of {@link RedisStore.ready}, made once per store. */
  #checked: Promise<void> | undefined;

  /**
   * @param client An ioredis `Redis` or `Cluster` client, configured and owned by the caller.
   * @param options Key prefix and per-operation time bound.
   *
   * @example
   * const store = new RedisStore(new Redis({ enableOfflineQueue: false }), { prefix: 'sentinel:' });
   */
  constructor(client: Redis | Cluster, options: RedisStoreOptions = {}) {
    if (client === null || typeof client !== 'object') throw new TypeError('RedisStore: client must be an ioredis client');
    const { prefix, timeoutMs, allowEviction } = resolveRedisStoreOptions(options);
    this.#client = client;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
    this.#allowEviction = allowEviction;
  }

  /**
   * Checks once that Redis will not evict what the store holds (`maxmemory-policy noeviction` on every node). Rejects
   * when a node's policy may evict (with `allowEviction`, tells `warn` instead), and tells `warn` when the policy
   * cannot be read (CONFIG renamed, disabled or refused). A client still connecting is waited for, up to
   * `commandTimeoutMs`. `sentinel.ready()` calls it with the logger.
   * @throws Error naming the policy and the node, when Redis may evict and `allowEviction` is not set.
   *
   * @example
   * await store.ready((message) => logger.warn(message));
   */
  ready(warn: (message: string) => void = (message) => console.warn(message)): Promise<void> {
    this.#checked ??= evictionFinding(() => untilReady(this.#client, this.#timeoutMs).then(() => this.#policies())).then((finding) => {
      if (finding === undefined) return;
      if (finding.kind === 'evicting' && !this.#allowEviction) {
        throw new Error(`${finding.message} (Or give RedisStore allowEviction: true to start on it anyway.)`);
      }
      warn(finding.message);
    });
    return this.#checked;
  }

  /** `maxmemory-policy` of every node: the one Redis, or every node of a cluster (a replica may be promoted). */
  async #policies(): Promise<NodePolicy[]> {
    const client = this.#client;
    let nodes: Redis[] = [client as Redis];
    if (client.isCluster) {
      const cluster = client as Cluster;
      // The node list is filled once the slots are known: a first command gets them.
      if (cluster.nodes('all').length === 0) await this.#run('PING', () => cluster.ping());
      nodes = cluster.nodes('all');
    }
    return Promise.all(
      nodes.map(async (node) => ({
        node: client.isCluster ? `${node.options.host}:${node.options.port}` : undefined,
        policy: policyOfReply(await this.#run('CONFIG GET', () => node.config('GET', 'maxmemory-policy'))),
      })),
    );
  }

  /**
   * The value stored under `key`, or `null` when absent or expired.
   *
   * @example
   * const json = await store.get('session:' + digest);
   */
  async get(key: string): Promise<string | null> {
    return this.#run('GET', () => this.#client.get(this.#prefix + key));
  }

  /**
   * Stores `value` under `key` for `ttlMs` milliseconds, replacing any previous value and TTL.
   *
   * @example
   * await store.set('interaction:' + id, JSON.stringify(record), 10 * 60_000);
   */
  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const px = toPx(ttlMs);
    await this.#run('SET', () => this.#client.set(this.#prefix + key, value, 'PX', px));
  }

  /**
   * Atomically reads and deletes `key`: of any number of concurrent callers, on any instance, exactly one receives
   * the value.
   *
   * @example
   * const record = await store.take('code:' + digest); // null on the second redemption
   */
  async take(key: string): Promise<string | null> {
    const fullKey = this.#prefix + key;
    if (!this.#noGetDel) {
      try {
        return await this.#run('GETDEL', () => this.#client.getdel(fullKey), isUnknownCommand);
      } catch (error) {
        if (!isUnknownCommand(error)) throw error;
        // Redis < 6.2 (or GETDEL renamed away): nothing was read or deleted, so retrying with the script is safe.
        this.#noGetDel = true;
      }
    }
    const value = await this.#eval(TAKE_SCRIPT, [fullKey], []);
    return typeof value === 'string' ? value : null;
  }

  /**
   * Removes `key`; absent keys are fine.
   *
   * @example
   * await store.delete('session:' + digest);
   */
  async delete(key: string): Promise<void> {
    await this.#run('DEL', () => this.#client.del(this.#prefix + key));
  }

  /**
   * Atomically adds one to the counter under `key` and returns the new count. The first increment starts a window
   * of `ttlMs`; later increments do not extend it.
   *
   * @example
   * const failures = await store.increment('throttle:' + clientId, 60_000);
   * if (failures > 10) throw new OAuthError('invalid_client', 'Too many attempts');
   */
  async increment(key: string, ttlMs: number): Promise<number> {
    const px = toPx(ttlMs);
    const count = await this.#eval(INCREMENT_SCRIPT, [this.#prefix + key], [px]);
    // Lua integers arrive as numbers; anything else means the key held something that is not our counter.
    if (typeof count !== 'number') throw new Error('RedisStore: increment returned a non-integer reply');
    return count;
  }

  /**
   * Gives one slot of a counter back (never starting a counter, window unchanged) and deletes the counter it brings
   * to zero, in one Lua script: the login throttle returns a successful attempt's slot. Optional for custom stores
   * (see the README's Store contract).
   *
   * @example
   * await store.decrement('throttle:ip:203.0.113.7');
   */
  async decrement(key: string): Promise<number> {
    const count = await this.#eval(DECREMENT_SCRIPT, [this.#prefix + key], []);
    if (typeof count !== 'number') throw new Error('RedisStore: decrement returned a non-integer reply');
    return count;
  }

  /**
   * Atomic multi-key compare-and-set (see {@link Store.swap}), as one Lua script. The keys must share a hash tag so
   * that the script is legal on Redis Cluster; a swap whose keys do not is refused before anything is sent.
   *
   * @example
   * const applied = await store.swap([
   *   { key: 'code:{g1}', expect: codeRecord, value: null },
   *   { key: 'grant:{g1}', expect: null, value: grantRecord, ttlMs: 3_600_000 },
   * ]);
   */
  async swap(entries: readonly SwapEntry[]): Promise<boolean> {
    if (entries.length === 0) return true;
    const keys = entries.map((entry) => this.#prefix + entry.key);
    if (entries.length > 1) {
      const tag = hashTag(keys[0] as string);
      if (tag === null || keys.some((k) => hashTag(k) !== tag)) {
        throw new TypeError('RedisStore: the keys of one swap must share a {hash tag}');
      }
    }
    const args: (string | number)[] = [];
    for (const entry of entries) {
      args.push(entry.expect === null ? '0' : '1', entry.expect ?? '');
      if (entry.value === null) args.push('0', '');
      else args.push(toPx(entry.ttlMs as number), entry.value);
    }
    const applied = await this.#eval(SWAP_SCRIPT, keys, args);
    return applied === 1;
  }

  /**
   * Adds jobs to a durable queue (see {@link Store.enqueueJobs}): a sorted set by due time and a hash of payloads,
   * `queue:{name}:due` and `queue:{name}:jobs`, one hash tag, so one script changes both on Redis Cluster too.
   *
   * @example
   * await store.enqueueJobs('logout', [{ id: 'j1', payload: '{}', dueAt: Date.now() }]);
   */
  async enqueueJobs(queue: string, jobs: readonly QueuedJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const args: (string | number)[] = [];
    for (const job of jobs) args.push(job.id, Math.floor(job.dueAt), job.payload);
    await this.#eval(ENQUEUE_JOBS_SCRIPT, this.#queueKeys(queue), args);
  }

  /**
   * Takes up to `max` due jobs under a lease, atomically across instances (see {@link Store.claimJobs}).
   *
   * @example
   * const jobs = await store.claimJobs('logout', Date.now(), 30_000, 16);
   */
  async claimJobs(queue: string, now: number, leaseMs: number, max: number): Promise<ClaimedJob[]> {
    const lease = Math.floor(now + leaseMs);
    const reply = await this.#eval(CLAIM_JOBS_SCRIPT, this.#queueKeys(queue), [Math.floor(now), lease, Math.max(0, Math.floor(max))]);
    if (!Array.isArray(reply)) throw new Error('RedisStore: claimJobs returned a non-array reply');
    const jobs: ClaimedJob[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) jobs.push({ id: String(reply[i]), payload: String(reply[i + 1]), lease });
    return jobs;
  }

  /**
   * Ends or reschedules a claimed job while it still holds `lease` (see {@link Store.settleJob}).
   *
   * @example
   * await store.settleJob('logout', job.id, job.lease, { payload, dueAt: Date.now() + 2000 });
   */
  async settleJob(queue: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean> {
    const args = next === null ? [id, lease, '', ''] : [id, lease, Math.floor(next.dueAt), next.payload];
    return (await this.#eval(SETTLE_JOB_SCRIPT, this.#queueKeys(queue), args)) === 1;
  }

  /** The two keys of a queue, sharing the hash tag `{name}` (prefix first, as every key of this store). */
  #queueKeys(queue: string): string[] {
    return [`${this.#prefix}queue:{${queue}}:due`, `${this.#prefix}queue:{${queue}}:jobs`];
  }

  /**
   * Runs a script by its SHA-1 (EVALSHA); when Redis does not have it cached (NOSCRIPT: nothing ran), once more
   * with its text (EVAL), which also caches it for the next call. A timeout or any other failure is not retried:
   * the script may have run.
   */
  async #eval(script: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.#run('EVALSHA', () => this.#client.evalsha(script.sha, keys.length, ...keys, ...args), isNoScript);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return this.#run('EVAL', () => this.#client.eval(script.source, keys.length, ...keys, ...args));
    }
  }

  /**
   * Runs one command under the time bound and turns its failure into an argument-free `Error`.
   * `passThrough` lets `take` see the original "unknown command" error so that it can fall back to the script.
   */
  async #run<T>(name: string, command: () => Promise<T>, passThrough?: (error: unknown) => boolean): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const pending = command();
      if (this.#timeoutMs === 0) return await pending;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`RedisStore: ${name} timed out after ${this.#timeoutMs} ms (is Redis reachable?)`)),
          this.#timeoutMs,
        );
      });
      // Promise.race subscribes to `pending`, so its late rejection after a timeout is handled, not unhandled.
      return await Promise.race([pending, timeout]);
    } catch (error) {
      if (passThrough?.(error)) throw error;
      throw sanitize(name, error);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Redis wants a positive integer for PX/PEXPIRE; fractions and values below 1 ms are rounded up, as MemoryStore does. */
function toPx(ttlMs: number): number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs)) throw new TypeError('RedisStore: ttlMs must be a finite number');
  return Math.max(1, Math.ceil(ttlMs));
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && NO_SCRIPT.test(error.message);
}

function isUnknownCommand(error: unknown): boolean {
  return error instanceof Error && UNKNOWN_COMMAND.test(error.message);
}

/**
 * An `Error` that keeps what went wrong but drops what it was doing it to: ioredis errors carry `command.args`
 * (keys and stored values), and Redis' own messages may quote arguments ("with args beginning with: ...").
 */
function sanitize(name: string, error: unknown): Error {
  if (error instanceof Error && error.message.startsWith('RedisStore: ')) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw.split(', with args beginning with')[0] ?? raw;
  const kind = error instanceof Error && error.name !== 'Error' ? `${error.name}: ` : '';
  return new Error(`RedisStore: ${name} failed (${kind}${message})`);
}

export * from './redis-client.js';
