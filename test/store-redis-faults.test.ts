/**
 * RedisStore when Redis misbehaves, against private `redis-server` processes this file starts and kills:
 *
 * - paused (SIGSTOP: connections stay open, nothing answers) and killed (connection refused): every Store method
 *   must reject within a bounded time instead of hanging the request, and the *same* store instance must work again
 *   once Redis is back, because ioredis reconnects on its own;
 * - a server without GETDEL (renamed away, as on Redis < 6.2): the whole Store contract must still pass through the
 *   Lua fallback of `take`.
 *
 * No redis-server binary: skipped with a warning, unless SENTINEL_REQUIRE_REDIS=1, where it fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/stores/redis.js';
import type { Store } from '../src/stores/store.js';
import { deleteByPrefix, PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';
import { runStoreContract } from './helpers/store-contract.js';

const binary = redisServerBinary('store-redis-faults');
const skip = binary.skip;

/** Each store operation must settle well within this, with a 300 ms commandTimeoutMs. */
const BOUND_MS = 3000;
const COMMAND_TIMEOUT_MS = 300;
/** How long the same store instance may take to work again once Redis is back (ioredis backs off up to ~5 s). */
const RECOVERY_DEADLINE_MS = 20_000;

function connect(url: string, options: RedisOptions = {}): Redis {
  const client = new Redis(url, options);
  client.on('error', () => {}); // outages are the point here; failures surface as rejected store calls
  return client;
}

const OPERATIONS: ReadonlyArray<[string, (store: Store) => Promise<unknown>]> = [
  ['get', (s) => s.get('session:x')],
  ['set', (s) => s.set('session:x', 'v', 60_000)],
  ['take', (s) => s.take('code:x')],
  ['delete', (s) => s.delete('session:x')],
  ['increment', (s) => s.increment('throttle:x', 60_000)],
];

/** Runs every Store method and checks that each rejects with an Error, within BOUND_MS. */
async function expectEveryMethodToFailFast(label: string, store: Store): Promise<void> {
  for (const [name, operation] of OPERATIONS) {
    const started = performance.now();
    const giveUp = new AbortController();
    const outcome = await Promise.race([
      operation(store).then(
        () => ({ kind: 'resolved' as const }),
        (error: unknown) => ({ kind: 'rejected' as const, error }),
      ),
      // Not part of what is tested: only here so that a hanging call fails this test instead of timing it out.
      sleep(BOUND_MS * 2, undefined, { signal: giveUp.signal }).then(
        () => ({ kind: 'hung' as const }),
        () => ({ kind: 'hung' as const }),
      ),
    ]);
    giveUp.abort();
    const elapsed = performance.now() - started;
    expect(outcome.kind, `${label} ${name}`).toBe('rejected');
    if (outcome.kind === 'rejected') {
      expect(outcome.error, `${label} ${name}`).toBeInstanceOf(Error);
      expect((outcome.error as Error).message, `${label} ${name}`).toMatch(/^RedisStore: /);
    }
    expect(elapsed, `${label} ${name} took ${Math.round(elapsed)} ms`).toBeLessThan(BOUND_MS);
  }
}

/** Polls until a full round trip through `store` works, or fails after RECOVERY_DEADLINE_MS. */
async function expectToRecover(label: string, store: Store): Promise<void> {
  const deadline = performance.now() + RECOVERY_DEADLINE_MS;
  let last: unknown;
  for (;;) {
    try {
      await store.set('recovery', label, 60_000);
      if ((await store.take('recovery')) === label) break;
      last = new Error('round trip returned something else');
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) {
      throw new Error(`${label}: store did not recover within ${RECOVERY_DEADLINE_MS} ms; last error: ${String(last)}`);
    }
    await sleep(200);
  }
  await expect(store.increment('throttle:after-recovery', 60_000)).resolves.toBe(1);
  await expect(store.take('throttle:after-recovery')).resolves.toBe('1');
}

async function expectToWork(store: Store): Promise<void> {
  await store.set('session:w', 'v', 60_000);
  await expect(store.get('session:w')).resolves.toBe('v');
  await expect(store.take('session:w')).resolves.toBe('v');
  await expect(store.take('session:w')).resolves.toBeNull();
  await expect(store.increment('throttle:w', 60_000)).resolves.toBe(1);
  await store.delete('throttle:w');
  await expect(store.get('throttle:w')).resolves.toBeNull();
}

describe.skipIf(skip)('RedisStore when Redis fails', () => {
  const server = new PrivateRedis();
  const clients: Redis[] = [];
  // Two configurations: ioredis defaults (commands wait in the offline queue while disconnected, so only the
  // store's own time bound ends them) and the documented fail-fast client (rejects at once while disconnected).
  const stores: Array<[string, RedisStore]> = [];

  beforeAll(async () => {
    requireAvailable(binary);
    await server.start();
    const defaults = connect(server.url);
    const failFast = connect(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    clients.push(defaults, failFast);
    stores.push(
      ['ioredis defaults', new RedisStore(defaults, { commandTimeoutMs: COMMAND_TIMEOUT_MS })],
      ['fail-fast client', new RedisStore(failFast, { commandTimeoutMs: COMMAND_TIMEOUT_MS })],
    );
  });

  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server.destroy();
  });

  it('works while Redis is up', async () => {
    for (const [, store] of stores) await expectToWork(store);
  });

  it('rejects every call within the bound while Redis is paused, and works again after it resumes', async () => {
    server.pause();
    try {
      for (const [label, store] of stores) await expectEveryMethodToFailFast(`paused, ${label}:`, store);
    } finally {
      server.resume();
    }
    for (const [label, store] of stores) await expectToRecover(`resumed, ${label}`, store);
  });

  it('rejects every call within the bound while Redis is down, and the same instance works after a restart', async () => {
    await server.kill();
    for (const [label, store] of stores) await expectEveryMethodToFailFast(`down, ${label}:`, store);
    // Down for a while longer: the fail-fast client must keep failing fast, the default one keep timing out.
    await sleep(500);
    for (const [label, store] of stores) await expectEveryMethodToFailFast(`still down, ${label}:`, store);

    await server.start(); // same port, so the existing clients can find it
    for (const [label, store] of stores) await expectToRecover(`restarted, ${label}`, store);
    for (const [, store] of stores) await expectToWork(store);
  });
});

/**
 * A private redis-server started with `args` for one describe block, and a fail-fast client to it (`.client` once
 * the block's beforeAll has run); both are torn down after the block.
 */
function privatelyConnected(args: string[]): { client: Redis } {
  const server = new PrivateRedis(args);
  const connection = {} as { client: Redis };
  beforeAll(async () => {
    requireAvailable(binary);
    await server.start();
    connection.client = connect(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise((resolve) => connection.client.once('ready', resolve));
  });
  afterAll(async () => {
    connection.client?.disconnect();
    await server.destroy();
  });
  return connection;
}

describe.skipIf(skip)('RedisStore on a server without GETDEL', () => {
  // Renaming GETDEL to "" removes it, which is what a pre-6.2 server looks like to the store.
  const redis = privatelyConnected(['--rename-command', 'GETDEL', '']);
  let stores = 0;

  it('really has no GETDEL', async () => {
    await expect(redis.client.getdel('anything')).rejects.toThrow(/unknown command/i);
  });

  it('falls back without leaking the failed GETDEL', async () => {
    const store = new RedisStore(redis.client, { prefix: 'fallback:' });
    await store.set('code:k', 'v', 60_000);
    await expect(store.take('code:k')).resolves.toBe('v');
    await expect(store.take('code:k')).resolves.toBeNull();
  });

  runStoreContract('RedisStore (Lua take fallback)', async () => {
    const prefix = `contract-${++stores}:`;
    return {
      store: new RedisStore(redis.client, { prefix }),
      // Its own keys only: the contract's timed checks run side by side on this server.
      cleanup: () => deleteByPrefix(redis.client, prefix),
    };
  });
});

describe.skipIf(skip)('RedisStore scripts by SHA-1', () => {
  const redis = privatelyConnected([]);

  const calls = async (command: string): Promise<number> => {
    const stats = await redis.client.info('commandstats');
    return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  };

  it('sends EVALSHA once Redis has the script, and EVAL again after the script cache was flushed (NOSCRIPT)', async () => {
    const store = new RedisStore(redis.client, { prefix: 'sha:' });
    await expect(store.increment('throttle:a', 60_000)).resolves.toBe(1);
    const evalsBefore = await calls('eval');
    await expect(store.increment('throttle:a', 60_000)).resolves.toBe(2);
    expect(await calls('eval')).toBe(evalsBefore); // the second call ran by SHA-1 only
    expect(await calls('evalsha')).toBeGreaterThanOrEqual(2);

    await redis.client.script('FLUSH');
    // The swap still applies exactly once, and a failed compare still changes nothing.
    await expect(store.swap([{ key: 'grant:{g}', expect: null, value: 'one', ttlMs: 60_000 }])).resolves.toBe(true);
    expect(await calls('eval')).toBe(evalsBefore + 1);
    await expect(store.swap([{ key: 'grant:{g}', expect: null, value: 'two', ttlMs: 60_000 }])).resolves.toBe(false);
    await expect(store.get('grant:{g}')).resolves.toBe('one');
    await redis.client.script('FLUSH');
    await expect(store.increment('throttle:a', 60_000)).resolves.toBe(3);
  });
});
