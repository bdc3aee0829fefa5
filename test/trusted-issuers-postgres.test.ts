/**
 * Trusted brand issuers in the PostgreSQL registry (migration 3): the store's add / replace / remove with the
 * append-only change log, the same checks as the `trustedIssuers` option, the service accepting a brand JWT only
 * while the registry trusts its issuer — on a second instance too (the NOTIFY evicts its cache) — and the built
 * CLI's `issuers add|list|history|remove`. A throwaway database per run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/apps/app.js';
import { hashClientSecret } from '../src/apps/client-secrets.js';
import type { Sentinel } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ensureBuilt, runCli } from './helpers/dist.js';
import { BOT, BOT_CLIENT_ID, BRAND_ISSUER, brandJWT, brandKey, JWT_BEARER, TOKEN_EXCHANGE, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';

const available = await sharedPostgres('trusted-issuers-postgres');
const key = await brandKey();
const JWKS = { keys: [key.publicJwk as Record<string, unknown>] };

const bot: App = {
  accountId: ACCOUNT,
  clientId: BOT_CLIENT_ID,
  clientSecretHash: hashClientSecret(CLIENT_SECRET),
  redirectUris: [],
  grantTypes: [JWT_BEARER, TOKEN_EXCHANGE, 'client_credentials'],
  tokenEndpointAuthMethod: 'client_secret_post',
  scope: 'read write',
};

const cli = (args: string[]) => runCli(args);

async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(25);
  }
  return check();
}

async function bearerStatus(sentinel: Sentinel): Promise<{ status: number; error?: unknown }> {
  const response = await postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({ grant_type: JWT_BEARER, assertion: await brandJWT(key), ...BOT }).toString(),
  );
  return { status: response.status, error: jsonOf(response).error_description };
}

describe.skipIf(available.skip)('trusted issuers in the PostgreSQL registry', () => {
  let database: Awaited<ReturnType<typeof throwawayDatabase>>;
  const open: PostgresAppStore[] = [];
  const store = (cache = true) => {
    const made = new PostgresAppStore({ connectionString: database.url, ...(cache ? {} : { cache: false }) });
    open.push(made);
    return made;
  };

  beforeAll(async () => {
    requirePostgres(available);
    ensureBuilt();
    database = await throwawayDatabase();
    const first = store();
    expect(await first.migrate()).toEqual([1, 2, 3]);
    await first.saveApp(bot);
  }, 180_000);

  afterAll(async () => {
    for (const made of open) await made.close();
    await database?.drop();
  });

  it('adds, replaces and removes an entry, each in the append-only change log with who did it', async () => {
    const registry = store(false);
    const accountId = 'log-account';
    const issuer = 'https://id.log-brand.example';
    expect(await registry.saveTrustedIssuer({ accountId, issuer, jwks: JWKS }, { actor: 'test:alice' })).toBe('added');
    expect(
      await registry.saveTrustedIssuer(
        { accountId, issuer, jwksUri: 'https://id.log-brand.example/jwks.json', consumerIdClaim: 'pid' },
        { actor: 'test:bob' },
      ),
    ).toBe('replaced');
    expect(await registry.listTrustedIssuers(accountId)).toEqual([
      { accountId, issuer, jwksUri: 'https://id.log-brand.example/jwks.json', consumerIdClaim: 'pid' },
    ]);
    expect(await registry.deleteTrustedIssuer(accountId, issuer, { actor: 'test:carol' })).toBe(true);
    expect(await registry.deleteTrustedIssuer(accountId, issuer)).toBe(false);
    expect(await registry.findTrustedIssuers(accountId)).toEqual([]);
    const changes = await registry.listTrustedIssuerChanges(accountId, issuer);
    expect(changes.map((change) => [change.action, change.actor])).toEqual([
      ['added', 'test:alice'],
      ['replaced', 'test:bob'],
      ['removed', 'test:carol'],
    ]);
    expect(changes[0]?.detail).toEqual({ jwksKids: [key.publicJwk.kid] });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await expect(admin.query('UPDATE sentinel_trusted_issuer_changes SET actor = $1', ['mallory'])).rejects.toThrow(/append-only/);
      await expect(admin.query('DELETE FROM sentinel_trusted_issuer_changes')).rejects.toThrow(/append-only/);
    } finally {
      await admin.end();
    }
  });

  it('refuses what the trustedIssuers option refuses, writing nothing', async () => {
    const registry = store(false);
    const accountId = 'refusal-account';
    const issuer = 'https://id.refused.example';
    await expect(registry.saveTrustedIssuer({ accountId, issuer, jwksUri: 'ftp://id.refused.example/jwks' })).rejects.toThrow(/https/);
    await expect(registry.saveTrustedIssuer({ accountId, issuer })).rejects.toThrow(/exactly one of jwks or jwksUri/);
    await expect(registry.saveTrustedIssuer({ accountId, issuer, jwks: JWKS, jwksUri: 'https://id.refused.example/jwks' })).rejects.toThrow(
      /exactly one/,
    );
    await expect(registry.saveTrustedIssuer({ accountId, issuer, jwks: { keys: [await brandKeyWithPrivate()] } })).rejects.toThrow(
      /private/,
    );
    await expect(registry.saveTrustedIssuer({ accountId, issuer, jwks: JWKS, extra: 1 } as never)).rejects.toThrow(/extra/);
    expect(await registry.listTrustedIssuers(accountId)).toEqual([]);
    expect(await registry.listTrustedIssuerChanges(accountId, issuer)).toEqual([]);
  });

  it('the service trusts an issuer only while the registry does, on a second instance as well', async () => {
    const writer = store();
    const first = makeSentinel({ apps: [], appStore: writer });
    const secondStore = store();
    const second = makeSentinel({ apps: [], appStore: secondStore });
    expect(await bearerStatus(first)).toMatchObject({ status: 400, error: expect.stringMatching(/not trusted/) });
    // Warm the second instance's cache of the account's (empty) issuer list once its listener is up.
    expect(await eventually(async () => (await bearerStatus(second)).status === 400)).toBe(true);
    await writer.saveTrustedIssuer({ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: JWKS });
    expect((await bearerStatus(first)).status).toBe(200);
    expect(await eventually(async () => (await bearerStatus(second)).status === 200)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await bearerStatus(second)).status).toBe(200);
    await writer.deleteTrustedIssuer(ACCOUNT, BRAND_ISSUER);
    expect((await bearerStatus(first)).status).toBe(400);
    expect(await eventually(async () => (await bearerStatus(second)).status === 400)).toBe(true);
  });

  it('the CLI adds, lists, shows the history of and removes a trusted issuer; the service follows', async () => {
    const sentinel = makeSentinel({ apps: [], appStore: store() });
    const dir = mkdtempSync(join(tmpdir(), 'sentinel-issuers-'));
    const jwksFile = join(dir, 'brand-jwks.json');
    writeFileSync(jwksFile, JSON.stringify(JWKS));
    const base = ['--database', database.url, '--account', ACCOUNT];

    const added = await cli(['issuers', 'add', ...base, '--issuer', BRAND_ISSUER, '--jwks-file', jwksFile]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe(`Trusted ${BRAND_ISSUER} for account ${ACCOUNT}.\n`);
    expect(await eventually(async () => (await bearerStatus(sentinel)).status === 200)).toBe(true);

    const listed = await cli(['issuers', 'list', ...base, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwks: JWKS }]);
    const text = await cli(['issuers', 'list', ...base]);
    expect(text.stdout).toBe(`${BRAND_ISSUER}  inline JWKS (1 keys)\n`);

    const removed = await cli(['issuers', 'remove', ...base, '--issuer', BRAND_ISSUER]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await eventually(async () => (await bearerStatus(sentinel)).status === 400)).toBe(true);
    const again = await cli(['issuers', 'remove', ...base, '--issuer', BRAND_ISSUER]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/does not trust/);

    const history = await cli(['issuers', 'history', ...base, '--issuer', BRAND_ISSUER, '--json']);
    expect(history.code, history.stderr).toBe(0);
    const actions = (JSON.parse(history.stdout) as { action: string; actor: string }[]).slice(-2);
    expect(actions.map((change) => change.action)).toEqual(['added', 'removed']);
    expect(actions.every((change) => change.actor.startsWith('cli:'))).toBe(true);
  });

  it('the CLI refuses a wrong entry as a usage error (exit 2), never printing the database URL', async () => {
    const base = ['--database', database.url, '--account', ACCOUNT, '--issuer', 'https://id.cli-refused.example'];
    const insecure = await cli(['issuers', 'add', ...base, '--jwks-uri', 'ftp://id.cli-refused.example/jwks']);
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toMatch(/https/);
    // Plain http: no instance fetches it without clientJwks.allowPrivateAddresses (development), which the CLI cannot see.
    const plain = await cli(['issuers', 'add', ...base, '--jwks-uri', 'http://id.cli-refused.example/jwks']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/--jwks-uri of https:\/\/id\.cli-refused\.example must be an https URL/);
    const both = await cli(['issuers', 'add', ...base, '--jwks-uri', 'https://a.example/j', '--jwks-file', '/nonexistent']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exactly one of --jwks-uri and --jwks-file/);
    const unreadable = await cli(['issuers', 'add', ...base, '--jwks-file', '/nonexistent/jwks.json']);
    expect(unreadable.code).toBe(2);
    for (const run of [insecure, plain, both, unreadable]) expect(run.stderr).not.toContain(database.url);
    const listed = await cli(['issuers', 'list', '--database', database.url, '--account', ACCOUNT, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
});

/** A full (private) JWK of a new key: the registry must refuse it as an issuer's key. */
async function brandKeyWithPrivate(): Promise<Record<string, unknown>> {
  const { exportJWK, generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: 'private-one' };
}
