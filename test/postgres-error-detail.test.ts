/**
 * A write PostgreSQL refuses (a violated constraint) explains itself in the error's `detail`, which quotes the row:
 * for the app tables, the digests of client secrets and registration access tokens. What reaches `onError` keeps the
 * message, SQLSTATE, table and constraint, and none of the row's values.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { hashClientSecret } from '../src/apps/client-secrets.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { sharedPostgres, useThrowawayDatabase } from './helpers/postgres.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, type Registered } from './helpers/registration-client.js';

const available = await sharedPostgres('postgres-error-detail');
const database = useThrowawayDatabase(available);

describe.skipIf(available.skip)('PostgresAppStore: failed writes', () => {
  it('report no value of the refused row to onError', async () => {
    const store = new PostgresAppStore({ connectionString: database().url, cache: false });
    await store.migrate();
    const reported: unknown[] = [];
    const sentinel = makeSentinel({
      apps: [],
      appStore: store,
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
      onError: (error) => reported.push(error),
    });
    const registered = jsonOf(await postRegistration(sentinel, { grant_types: ['client_credentials'] })) as Registered;
    const admin = new pg.Client({ connectionString: database().url });
    await admin.connect();
    try {
      // A constraint no new row meets (NOT VALID: the rows already there stay), so the next secret's insert fails.
      await admin.query(`ALTER TABLE sentinel_app_secrets ADD CONSTRAINT refuse_new CHECK (created_at < '2000-01-01') NOT VALID`);
      const rotated = await manageClient(sentinel, 'POST', registered, { suffix: '/secret' });
      expect(rotated.status).toBe(500);
    } finally {
      await admin.end();
      await store.close();
    }
    expect(reported).toHaveLength(1);
    const error = reported[0] as Error & Record<string, unknown>;
    expect(error.message).toContain('refuse_new');
    expect(error).toMatchObject({ code: '23514', table: 'sentinel_app_secrets', constraint: 'refuse_new' });
    const written = `${error.message} ${JSON.stringify(error)} ${String(error.stack)} ${String(error.cause)}`;
    expect(written).not.toContain(hashClientSecret(registered.client_secret ?? ''));
    expect(written).not.toContain(hashClientSecret(registered.registration_access_token));
    expect(written).not.toContain('Failing row');
  });
});
