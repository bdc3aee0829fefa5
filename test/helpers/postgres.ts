/**
 * What the PostgreSQL suites share: whether the shared server answers, a throwaway database per suite (dropped
 * afterwards), and a private `postgres` cluster on a spare port that a fault test may stop and start again.
 *
 * Locally a missing PostgreSQL skips a suite with a printed reason; with SENTINEL_REQUIRE_POSTGRES=1 (set by
 * `.ci/run`) the suite runs anyway and its `beforeAll` fails with that reason, so CI can never pass by skipping.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { PostgresAppStore } from '../../src/postgres/index.js';
import { startOnFreePort } from './free-port.js';

/** The shared server's maintenance database (`.ci/run` starts one there). */
export const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** CI sets this: a missing PostgreSQL is then a failure, not a skip. */
export const POSTGRES_REQUIRED = process.env.SENTINEL_REQUIRE_POSTGRES === '1';

/** Skip-or-run for a suite that needs PostgreSQL. */
export interface PostgresAvailability {
  problem: string | null;
  skip: boolean;
}

function decide(suite: string, problem: string | null): PostgresAvailability {
  const skip = problem !== null && !POSTGRES_REQUIRED;
  if (skip) console.warn(`[${suite}] skipped: ${problem}. Set POSTGRES_URL, or SENTINEL_REQUIRE_POSTGRES=1 to make this a failure.`);
  return { problem, skip };
}

/** Whether the shared PostgreSQL at POSTGRES_URL answers (prints the skip reason). */
export async function sharedPostgres(suite: string): Promise<PostgresAvailability> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return decide(suite, null);
  } catch (error) {
    return decide(suite, `no PostgreSQL at ${POSTGRES_URL} (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Throws the reason when PostgreSQL is required but missing. Call first in `beforeAll`. */
export function requirePostgres(found: PostgresAvailability): void {
  if (found.problem !== null) throw new Error(`SENTINEL_REQUIRE_POSTGRES=1 but ${found.problem}`);
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A fresh database on the server at `serverUrl`; `drop()` removes it (ending whatever is still connected). */
export async function throwawayDatabase(serverUrl: string = POSTGRES_URL): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sentinel_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  admin.on('error', () => {});
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(serverUrl, name),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
      client.on('error', () => {});
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A migrated `PostgresAppStore` without a lookup cache on a throwaway database, for the tests of the calling file (or
 * `describe`): made before them, closed and its database dropped after.
 * @example const registry = useThrowawayAppStore(available); // … await registry.store().saveApp(app)
 */
export function useThrowawayAppStore(available: PostgresAvailability): { store(): PostgresAppStore; url(): string } {
  let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;
  let store: PostgresAppStore | undefined;
  beforeAll(async () => {
    requirePostgres(available);
    database = await throwawayDatabase();
    store = new PostgresAppStore({ connectionString: database.url, cache: false });
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });
  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the throwaway app store is made before the tests');
    return value;
  };
  return { store: () => made(store), url: () => made(database).url };
}

/**
 * A throwaway database for the tests of the calling file: made before them (refusing as `requirePostgres` does when
 * PostgreSQL is required and absent), dropped after. Call at the top level or in a `describe`.
 * @example const database = useThrowawayDatabase(available); // … new PostgresAppStore({ connectionString: database().url })
 */
export function useThrowawayDatabase(available: PostgresAvailability): () => { url: string } {
  let database: Awaited<ReturnType<typeof throwawayDatabase>> | undefined;
  beforeAll(async () => {
    requirePostgres(available);
    database = await throwawayDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (database === undefined) throw new Error('the throwaway database is made before the tests');
    return database;
  };
}

/**
 * How many connections are open to the database of `url`, counted from the shared server's maintenance database: a
 * pool a test expects ended leaves none.
 * @example expect(await connectionsTo(database().url)).toBe(0);
 */
export async function connectionsTo(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const name = new URL(url).pathname.slice(1);
    const result = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
    return result.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** The `bin` directory of the newest installed PostgreSQL, or `null`. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((entry) => existsSync(join(root, entry, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], 'bin');
}

/** postgres refuses to run as root: as root, the cluster runs as the `postgres` account the package created. */
function serverAccount(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** Whether a private cluster can be started here (binaries present; as root, a `postgres` account). */
export function privatePostgresAvailability(suite: string): PostgresAvailability {
  if (postgresBinaries() === null) return decide(suite, 'no PostgreSQL binaries under /usr/lib/postgresql');
  if (userInfo().uid === 0 && serverAccount() === undefined) return decide(suite, 'running as root and there is no postgres account');
  return decide(suite, null);
}

/** A private, throwaway PostgreSQL cluster that a test can stop and start again on the same port. */
export class PrivatePostgres {
  readonly #dir = mkdtempSync(join(tmpdir(), 'sentinel-pg-'));
  readonly #bin: string;
  readonly #account = serverAccount();
  #process: ChildProcess | undefined;
  port = 0;

  constructor() {
    const bin = postgresBinaries();
    if (bin === null) throw new Error('no PostgreSQL binaries');
    this.#bin = bin;
    if (this.#account !== undefined) chownSync(this.#dir, this.#account.uid, this.#account.gid);
    execFileSync(join(bin, 'initdb'), ['-D', join(this.#dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
      stdio: 'ignore',
      ...this.#account,
    });
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
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
      join(this.#bin, 'postgres'),
      ['-D', join(this.#dir, 'data'), '-p', String(this.port), '-h', '127.0.0.1', '-k', this.#dir, '-c', 'fsync=off'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...this.#account },
    );
    this.#process = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres did not start:\n${output}`)), 20_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`postgres exited:\n${output}`));
      });
    });
  }

  /** Stops the server at once (SIGKILL: no goodbye to the clients, like a crash). */
  async kill(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // The postmaster's children die with it shortly after; the next start waits for the lock file to clear.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
