/**
 * The registry commands of the built CLI against a real PostgreSQL (a throwaway database per run):
 * `db migrate`, `apps register|list|show|rotate-secret|delete --database`, text by default and `--json`, and a
 * running service that sees what the CLI did (a rotated secret, a deleted app).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ensureBuilt, runCli } from './helpers/dist.js';
import { ACCOUNT, appTokenPath, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('cli-postgres');

const cli = (args: string[]) => runCli(args);

describe.skipIf(available.skip)('sentinel-idp apps / db against PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof throwawayDatabase>>;
  let store: PostgresAppStore;
  let sentinel: Sentinel;

  beforeAll(async () => {
    requirePostgres(available);
    ensureBuilt();
    database = await throwawayDatabase();
    store = new PostgresAppStore({ connectionString: database.url });
    sentinel = makeSentinel({ apps: [], appStore: store });
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  const token = (clientId: string, secret: string) =>
    postForm(
      sentinel,
      appTokenPath(CONSUMER_UUID),
      new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
    );

  it('migrates the schema, once', async () => {
    const first = await cli(['db', 'migrate', '--database', database.url]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('Applied migrations 1, 2, 3.\n');
    const again = await cli(['db', 'migrate', '--database', database.url, '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
  });

  it('registers, lists, shows, rotates and deletes an app; the service sees each change', async () => {
    const db = ['--database', database.url, '--account', ACCOUNT];
    const registered = await cli(['apps', 'register', ...db, '--grant', 'client_credentials', '--name', 'Nightly export', '--json']);
    expect(registered.code, registered.stderr).toBe(0);
    const app = JSON.parse(registered.stdout) as { clientId: string; clientSecret: string; name: string };
    expect(app.name).toBe('Nightly export');
    expect(app.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await token(app.clientId, app.clientSecret)).status).toBe(200);

    const listed = await cli(['apps', 'list', ...db]);
    expect(listed.stdout).toContain(app.clientId);
    expect(listed.stdout).toContain('Nightly export');
    const listedJSON = JSON.parse((await cli(['apps', 'list', ...db, '--json'])).stdout) as { clientId: string }[];
    expect(listedJSON.map((entry) => entry.clientId)).toEqual([app.clientId]);

    const rotated = await cli(['apps', 'rotate-secret', ...db, '--client', app.clientId, '--overlap', '0', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const { clientSecret } = JSON.parse(rotated.stdout) as { clientSecret: string };
    // The service's cache hears of the change through the database and drops the old secret.
    let oldRefused = false;
    for (let i = 0; i < 40 && !oldRefused; i++) {
      oldRefused = jsonOf(await token(app.clientId, app.clientSecret)).error === 'invalid_client';
      if (!oldRefused) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(oldRefused).toBe(true);
    expect((await token(app.clientId, clientSecret)).status).toBe(200);

    const shown = await cli(['apps', 'show', ...db, '--client', app.clientId]);
    expect(shown.stdout).toContain(`client id:       ${app.clientId}`);
    expect(shown.stdout).toMatch(/created\s+by cli:/);
    expect(shown.stdout).toMatch(/secret-rotated\s+by cli:/);
    expect(shown.stdout).not.toContain(clientSecret);
    expect(shown.stdout).not.toContain('sha256:');

    expect((await cli(['apps', 'disable', ...db, '--client', app.clientId])).stdout).toBe(`Disabled ${app.clientId}.\n`);
    let disabledRefused = false;
    for (let i = 0; i < 40 && !disabledRefused; i++) {
      disabledRefused = jsonOf(await token(app.clientId, clientSecret)).error === 'invalid_client';
      if (!disabledRefused) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(disabledRefused).toBe(true);
    expect((await cli(['apps', 'list', ...db])).stdout).toContain('[disabled]');
    expect((await cli(['apps', 'show', ...db, '--client', app.clientId])).stdout).toContain('DISABLED');
    expect((await cli(['apps', 'enable', ...db, '--client', app.clientId, '--json'])).stdout).toBe(
      `${JSON.stringify({ clientId: app.clientId, disabled: false })}\n`,
    );
    expect((await token(app.clientId, clientSecret)).status).toBe(200);

    const deleted = await cli(['apps', 'delete', ...db, '--client', app.clientId]);
    expect(deleted.stdout).toBe(`Deleted ${app.clientId}.\n`);
    let refused = false;
    for (let i = 0; i < 40 && !refused; i++) {
      refused = jsonOf(await token(app.clientId, clientSecret)).error === 'invalid_client';
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refused).toBe(true);
    const missing = await cli(['apps', 'show', ...db, '--client', app.clientId]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no app');
  });

  it('refuses bad command lines with exit code 2 and never echoes the database URL', async () => {
    const noDatabase = await cli(['apps', 'list', '--account', ACCOUNT]);
    expect(noDatabase.code).toBe(2);
    expect(noDatabase.stderr).toContain('--database is required');
    const badUrl = await cli(['apps', 'list', '--account', ACCOUNT, '--database', 'mysql://secret-password@db']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).not.toContain('secret-password');
    const badOverlap = await cli([
      'apps',
      'rotate-secret',
      '--database',
      database.url,
      '--account',
      ACCOUNT,
      '--client',
      'x',
      '--overlap',
      '-5',
    ]);
    expect(badOverlap.code).toBe(2);
    const unreachable = await cli(['apps', 'list', '--account', ACCOUNT, '--database', 'postgres://u:hunter2-password@127.0.0.1:1/db']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).not.toContain('hunter2-password');
  });

  it('lists the new commands in the help', async () => {
    const help = await cli(['apps', '--help']);
    expect(help.stdout.startsWith('Usage: sentinel-idp apps register|list|show|rotate-secret|delete|disable|enable')).toBe(true);
    expect((await cli(['db', '--help'])).stdout.startsWith('Usage: sentinel-idp db migrate')).toBe(true);
  });
});
