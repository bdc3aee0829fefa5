/**
 * What the Redis suites share: whether a Redis (or the `redis-server` binary) is there, the skip-or-fail decision
 * around it, and private throwaway `redis-server` processes on spare ports that a test can pause, kill and restart.
 *
 * Locally a missing Redis skips a suite with a printed reason; with SENTINEL_REQUIRE_REDIS=1 (set by `.ci/run`) the
 * suite runs anyway and its `beforeAll` fails with that reason, so CI can never pass by skipping.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startOnFreePort } from './free-port.js';

/** The shared Redis of the suites (`.ci/run` starts one there). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The binary the fault suites start on spare ports. */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
/** CI sets this: a missing Redis is then a failure, not a skip. */
export const REDIS_REQUIRED = process.env.SENTINEL_REQUIRE_REDIS === '1';

/**
 * Connects once with a short timeout and no retries.
 * @returns why it failed, or `null` when Redis answered PING.
 */
export async function probeRedis(url: string = REDIS_URL): Promise<string | null> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The socket error (ECONNREFUSED, ENOTFOUND, ...) says more than connect()'s "Connection is closed."
  let socketError: string | undefined;
  client.on('error', (error: Error) => {
    socketError ??= error.message;
  });
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return socketError ?? (error instanceof Error ? error.message : String(error));
  } finally {
    client.disconnect();
  }
}

/** The outcome of a precondition check: `problem` is null when all is there; `skip` is true only when it may be skipped. */
export interface Availability {
  problem: string | null;
  skip: boolean;
}

/**
 * Decides skip-or-run for a suite that needs something, and prints the reason when it skips.
 * Call {@link requireAvailable} first thing in the suite's `beforeAll`, so that under SENTINEL_REQUIRE_REDIS=1 the
 * missing piece fails the suite with its reason.
 */
export function availability(suite: string, problem: string | null): Availability {
  const skip = problem !== null && !REDIS_REQUIRED;
  if (skip) {
    console.warn(`[${suite}] skipped: ${problem}. Set REDIS_URL / REDIS_SERVER, or SENTINEL_REQUIRE_REDIS=1 to make this a failure.`);
  }
  return { problem, skip };
}

/** Throws the reason when a required piece is missing (reached only when SENTINEL_REQUIRE_REDIS=1). */
export function requireAvailable(found: Availability): void {
  if (found.problem !== null) throw new Error(`SENTINEL_REQUIRE_REDIS=1 but ${found.problem}`);
}

/** Whether the shared Redis at REDIS_URL answers, as an {@link Availability} (prints the skip reason). */
export async function sharedRedis(suite: string): Promise<Availability> {
  const unreachable = await probeRedis(REDIS_URL);
  return availability(suite, unreachable === null ? null : `no Redis at ${REDIS_URL} (${unreachable})`);
}

/** Whether the redis-server binary exists, as an {@link Availability} (prints the skip reason). */
export function redisServerBinary(suite: string): Availability {
  return availability(suite, existsSync(REDIS_SERVER) ? null : `no redis-server binary at ${REDIS_SERVER}`);
}

/** Glob-escapes `prefix` for SCAN MATCH, so a prefix can never match keys it does not own. */
function matchPrefix(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
}

/** Deletes every key under `prefix`, one key per command (the same cleanup would work on a cluster). */
export async function deleteByPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', matchPrefix(prefix), 'COUNT', 500);
    cursor = next;
    for (const key of keys) await client.del(key);
  } while (cursor !== '0');
}

/** One private, non-persistent redis-server that can be paused, resumed, killed and started again on its port. */
export class PrivateRedis {
  readonly #args: string[];
  readonly #dir = mkdtempSync(join(tmpdir(), 'sentinel-redis-'));
  #process: ChildProcess | undefined;
  port = 0;

  constructor(extraArgs: string[] = []) {
    this.#args = extraArgs;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (on the same port as before, after a kill), resolving once it accepts connections. */
  async start(): Promise<void> {
    if (this.port !== 0) return this.#launch();
    await startOnFreePort(async (port) => {
      this.port = port;
      await this.#launch();
    });
  }

  async #launch(): Promise<void> {
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.#dir, ...this.#args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.#process = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${output}`));
      });
    });
  }

  /** Kills the server at once (SIGKILL: no goodbye to clients, like a crash). */
  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL'); // also ends a stopped process
    await exited;
  }

  /** Freezes the server: connections stay open and nothing answers. */
  pause(): void {
    this.#process?.kill('SIGSTOP');
  }

  resume(): void {
    this.#process?.kill('SIGCONT');
  }

  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/**
 * A private redis-server for one describe block: started before its tests (or the suite failed, as
 * {@link requireAvailable} decides), destroyed after them, with every client its tests connected disconnected first.
 * Call it inside the `describe`.
 *
 * @example const { server, connect } = usePrivateRedis(binary, ['--maxmemory-policy', 'noeviction']);
 */
export function usePrivateRedis(
  binary: Availability,
  args: string[] = [],
  options: RedisOptions = {},
): { server: PrivateRedis; connect(): Redis } {
  const server = new PrivateRedis(args);
  const clients: Redis[] = [];
  beforeAll(async () => {
    requireAvailable(binary);
    await server.start();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server.destroy();
  });
  const connect = (): Redis => {
    const client = new Redis(server.url, options);
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  return { server, connect };
}
