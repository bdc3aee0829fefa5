/**
 * PostgreSQL going away under a running service: a private, throwaway `postgres` on a spare port is killed
 * (SIGKILL, like a crash) and started again. While it is down, token and registration requests answer
 * `500 server_error` with the cause reported to `onError` and nothing half-written; once it is back, the same
 * service instance recovers without a restart.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { call, jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { PrivatePostgres, privatePostgresAvailability, requirePostgres } from './helpers/postgres.js';

const available = privatePostgresAvailability('postgres-faults');
const INITIAL = 'initial-access-token-for-faults';
const REGISTER = `/sentinel/api/account/${ACCOUNT}/register`;

describe.skipIf(available.skip)('PostgreSQL down and back', () => {
  let server: PrivatePostgres;
  let store: PostgresAppStore;
  let sentinel: Sentinel;
  const reported: { error: unknown; route: string }[] = [];

  beforeAll(async () => {
    requirePostgres(available);
    server = new PrivatePostgres();
    await server.start();
    store = new PostgresAppStore({ connectionString: server.url, connectTimeoutMs: 1000, queryTimeoutMs: 2000 });
    await store.migrate();
    sentinel = makeSentinel({
      apps: [],
      appStore: store,
      registration: { initialAccessToken: INITIAL },
      onError: (error, context) => reported.push({ error, route: context.route }),
    });
  });

  afterAll(async () => {
    await store?.close();
    await server?.destroy();
  });

  function register(name: string): Promise<SentinelResponse> {
    return call(sentinel, {
      method: 'POST',
      path: REGISTER,
      headers: { authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_types: ['client_credentials'], client_name: name }),
    });
  }

  function token(clientId: string, secret: string): Promise<SentinelResponse> {
    return postForm(
      sentinel,
      appTokenPath(CONSUMER_UUID),
      new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
    );
  }

  async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return check();
  }

  it('answers 500 server_error while the database is down, reports the cause, writes nothing, and recovers', async () => {
    const created = jsonOf(await register('before the outage'));
    const clientId = created.client_id as string;
    const secret = created.client_secret as string;
    expect((await token(clientId, secret)).status).toBe(200);

    await server.kill();
    // Cached lookups may still answer until the change listener notices the loss; then every lookup asks the database.
    expect(await eventually(async () => (await token(clientId, secret)).status === 500, 10_000)).toBe(true);
    const failed = await token(clientId, secret);
    expect(failed.status).toBe(500);
    expect(jsonOf(failed)).toEqual({ error: 'server_error', error_description: 'the server could not complete the request' });
    const refused = await register('during the outage');
    expect(refused.status).toBe(500);
    expect(jsonOf(refused).error).toBe('server_error');
    expect(reported.some((entry) => entry.route === 'app-token-v2' && entry.error instanceof Error)).toBe(true);
    expect(reported.some((entry) => entry.route === 'register' && entry.error instanceof Error)).toBe(true);
    // The causes name the database failure, never a secret.
    for (const entry of reported) expect(String(entry.error)).not.toContain(secret);

    await server.start();
    expect(await eventually(async () => (await token(clientId, secret)).status === 200, 15_000)).toBe(true);
    const names = (await store.listApps(ACCOUNT)).map((app) => app.name);
    expect(names).toEqual(['before the outage']);
    expect((await register('after the outage')).status).toBe(201);
  }, 60_000);

  it('fails a write whose connection is cut mid-transaction with an error, not an uncaught one that ends the process', async () => {
    const created = jsonOf(await register('cut mid-transaction'));
    const clientId = created.client_id as string;
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      uncaught.push(error);
    };
    process.prependListener('uncaughtException', onUncaught);
    // Another transaction holds the app's row, so the rotation's SELECT … FOR UPDATE waits, mid-transaction.
    const holder = new pg.Client({ connectionString: server.url });
    const admin = new pg.Client({ connectionString: server.url });
    await holder.connect();
    await admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM sentinel_apps WHERE account_id = $1 AND client_id = $2 FOR UPDATE', [ACCOUNT, clientId]);
      const rotation = store.rotateClientSecret(ACCOUNT, clientId, 'sha256:0000', 0).then(
        () => 'rotated',
        (error: unknown) => error,
      );
      let waiting = 0;
      for (let i = 0; i < 100 && waiting === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        waiting = (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).rows[0].n;
      }
      expect(waiting).toBe(1);
      // The waiting connection is cut (an administrator, a failover, a proxy dropping it).
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
      const outcome = await rotation;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(outcome).toBeInstanceOf(Error);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
      await admin.end();
    }
    // The store goes on: the rotation retried works.
    expect(await store.rotateClientSecret(ACCOUNT, clientId, 'sha256:1111', 0)).not.toBeNull();
  }, 30_000);
});
