/**
 * An RFC 7592 PUT whose body is slow (its pace is the client's) must not undo an operator's change made while the
 * body was arriving: the registration endpoint owns redirect URIs, grant types, name and scope, and writes only those,
 * onto the app as stored at write time. Deterministic: the request body is a function the handler awaits, and the
 * operator's change runs once the handler has asked for the body (so it has already read the app) and before the body
 * is handed over. On the in-memory registry and on PostgreSQL.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App, AppStore } from '../src/apps/app.js';
import type { Sentinel, SentinelEvent, SentinelResponse } from '../src/index.js';
import { MemoryAppStore } from '../src/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, type Registered, registerClient } from './helpers/registration-client.js';

const KEPT_LOGOUT_URI = 'https://app.example.com/bye';
const COMPROMISED_LOGOUT_URI = 'https://old.example.com/bye';
const OLD_KEY = {
  kty: 'EC',
  crv: 'P-256',
  kid: 'compromised',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
};
const NEW_KEY = {
  kty: 'EC',
  crv: 'P-256',
  kid: 'fresh',
  x: 'gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0',
  y: 'SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps',
};

/** A PUT whose body arrives only when `release()` is called; `asked` settles once the handler awaits the body. */
function slowPut(sentinel: Sentinel, info: Registered, body: unknown) {
  let release!: () => void;
  let asked!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const askedFor = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const response: Promise<SentinelResponse | null> = sentinel.handle({
    method: 'PUT',
    path: new URL(info.registration_client_uri).pathname,
    query: new URLSearchParams(),
    headers: { authorization: `Bearer ${info.registration_access_token}`, 'content-type': 'application/json' },
    body: async () => {
      asked();
      await released;
      return JSON.stringify(body);
    },
    ip: '203.0.113.7',
  });
  return { askedFor, release, response };
}

/** What an operator does through the store (or the CLI, which writes through it): a whole-app read-modify-write. */
async function operatorChange(store: AppStore, clientId: string, change: Partial<App>): Promise<void> {
  const current = (await store.findApp(ACCOUNT, clientId)) as App;
  expect(await store.updateApp?.({ ...current, ...change }, { actor: 'cli:operator' })).toBe(true);
}

function checks(name: string, storeOf: () => AppStore) {
  let sentinel: Sentinel;
  let events: SentinelEvent[];

  beforeAll(() => {
    events = [];
    sentinel = makeSentinel({
      apps: [],
      appStore: storeOf(),
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
      onEvent: (event) => events.push(event),
    });
  });

  it(`${name}: keys, demands and post-logout URIs an operator changes during a slow PUT survive it`, async () => {
    const store = storeOf();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    await operatorChange(store, info.client_id, {
      jwks: { keys: [OLD_KEY, NEW_KEY] },
      postLogoutRedirectUris: [KEPT_LOGOUT_URI, COMPROMISED_LOGOUT_URI],
    });

    const put = slowPut(sentinel, info, { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After' });
    await put.askedFor;
    // The handler has read the app and waits for the body: the operator drops the compromised key and URI now.
    await operatorChange(store, info.client_id, {
      jwks: { keys: [NEW_KEY] },
      postLogoutRedirectUris: [KEPT_LOGOUT_URI],
      requireDPoP: true,
    });
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(200);
    expect(jsonOf(response).client_name).toBe('After');

    const stored = (await store.findApp(ACCOUNT, info.client_id)) as App;
    expect(stored.name).toBe('After');
    expect(stored.jwks?.keys.map((key) => key.kid)).toEqual(['fresh']);
    expect(stored.postLogoutRedirectUris).toEqual([KEPT_LOGOUT_URI]);
    expect(stored.requireDPoP).toBe(true);
    expect(stored.registrationAccessTokenHash).toBeDefined();
    expect(events.filter((event) => event.type === 'app.updated' && event.clientId === info.client_id)).toEqual([
      expect.objectContaining({ actor: 'registration-endpoint', changed: ['name'] }),
    ]);
  });

  it(`${name}: a redirect URI an operator added, that the client could not register, is kept by its PUT, not re-added after removal`, async () => {
    const store = storeOf();
    const web = 'https://app.example.com/cb';
    const native = 'com.example.app:/oauth2redirect';
    const info = await registerClient(sentinel, { redirect_uris: [web], client_name: 'Before' });
    // A private-use scheme (RFC 8252 §7.1) only an operator may register: added to the client afterwards.
    await operatorChange(store, info.client_id, { redirectUris: [web, native] });
    const body = { client_id: info.client_id, redirect_uris: [web, native], client_name: 'After' };
    const kept = await manageClient(sentinel, 'PUT', info, { body });
    expect(kept.status, kept.body).toBe(200);
    expect((await store.findApp(ACCOUNT, info.client_id))?.redirectUris).toEqual([web, native]);
    // One it was never given is still the client's to be refused.
    const added = await manageClient(sentinel, 'PUT', info, { body: { ...body, redirect_uris: [web, native, 'com.other.app:/cb'] } });
    expect(added.status).toBe(400);
    expect(jsonOf(added)).toMatchObject({ error: 'invalid_redirect_uri' });
    // Nor may a PUT that read the app before the operator removed the URI put it back.
    const put = slowPut(sentinel, info, body);
    await put.askedFor;
    await operatorChange(store, info.client_id, { redirectUris: [web] });
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(400);
    expect(jsonOf(response)).toMatchObject({ error: 'invalid_redirect_uri' });
    expect((await store.findApp(ACCOUNT, info.client_id))?.redirectUris).toEqual([web]);
  });

  it(`${name}: a grant an operator added, that the client could not register, is kept by its PUT, not re-added after removal`, async () => {
    const store = storeOf();
    const exchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    await operatorChange(store, info.client_id, { grantTypes: ['client_credentials', exchange] });
    const body = { client_id: info.client_id, grant_types: ['client_credentials', exchange], client_name: 'After' };
    const kept = await manageClient(sentinel, 'PUT', info, { body });
    expect(kept.status, kept.body).toBe(200);
    expect((await store.findApp(ACCOUNT, info.client_id))?.grantTypes).toEqual(['client_credentials', exchange]);
    const added = await manageClient(sentinel, 'PUT', info, {
      body: { ...body, grant_types: ['client_credentials', exchange, 'urn:ietf:params:oauth:grant-type:jwt-bearer'] },
    });
    expect(added.status).toBe(400);
    expect(jsonOf(added)).toMatchObject({ error: 'invalid_client_metadata' });
    const put = slowPut(sentinel, info, body);
    await put.askedFor;
    await operatorChange(store, info.client_id, { grantTypes: ['client_credentials'] });
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(400);
    expect(jsonOf(response)).toMatchObject({ error: 'invalid_client_metadata' });
    expect((await store.findApp(ACCOUNT, info.client_id))?.grantTypes).toEqual(['client_credentials']);
  });

  it(`${name}: an app deleted during a slow PUT stays deleted and the PUT is refused`, async () => {
    const store = storeOf();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    const put = slowPut(sentinel, info, { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After' });
    await put.askedFor;
    expect(await store.deleteApp?.(ACCOUNT, info.client_id, { actor: 'cli:operator' })).toBe(true);
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(401);
    expect(jsonOf(response)).toMatchObject({ error: 'invalid_token' });
    expect(await store.findApp(ACCOUNT, info.client_id)).toBeNull();
  });

  it(`${name}: a secret rotated during a slow PUT no longer vouches for it`, async () => {
    const store = storeOf();
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    const put = slowPut(sentinel, info, {
      client_id: info.client_id,
      client_secret: info.client_secret,
      grant_types: ['client_credentials'],
      client_name: 'After',
    });
    await put.askedFor;
    const { hashClientSecret } = await import('../src/apps/client-secrets.js');
    expect(
      await store.rotateClientSecret?.(ACCOUNT, info.client_id, hashClientSecret('rotated-by-the-operator-0123456789'), 3600),
    ).not.toBeNull();
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(400);
    expect(jsonOf(response)).toMatchObject({ error: 'invalid_client_metadata' });
    expect((await store.findApp(ACCOUNT, info.client_id))?.name).toBe('Before');
  });
}

describe('RFC 7592 PUT racing an operator, in memory', () => {
  const store = new MemoryAppStore();
  checks('in memory', () => store);
});

describe('RFC 7592 PUT racing an operator, on a store written before patchApp', () => {
  // A host's registry with updateApp but no patchApp: the endpoint reads the app again right before writing it.
  const inner = new MemoryAppStore();
  const store: AppStore = {
    findApp: (accountId, clientId) => inner.findApp(accountId, clientId),
    hasAccount: (accountId) => inner.hasAccount(accountId),
    saveApp: (app) => inner.saveApp(app),
    listApps: (accountId) => inner.listApps(accountId),
    updateApp: (app) => inner.updateApp(app),
    deleteApp: (accountId, clientId) => inner.deleteApp(accountId, clientId),
    rotateClientSecret: (accountId, clientId, hash, overlap) => inner.rotateClientSecret(accountId, clientId, hash, overlap),
  };
  checks('without patchApp', () => store);
});

await describeOnPostgres('race-registration-put', 'RFC 7592 PUT racing an operator, on PostgreSQL', (registry) => {
  checks('PostgreSQL', () => registry().store);

  it('PostgreSQL: an app disabled during a slow PUT is not changed by it', async () => {
    const store = registry().store;
    const sentinel = makeSentinel({ apps: [], appStore: store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    const put = slowPut(sentinel, info, { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After' });
    await put.askedFor;
    expect(await store.disableApp(ACCOUNT, info.client_id, { actor: 'cli:operator' })).toBe(true);
    put.release();
    const response = (await put.response) as SentinelResponse;
    expect(response.status, response.body).toBe(401);
    const listed = (await store.listApps(ACCOUNT)).find((app) => app.clientId === info.client_id);
    expect(listed).toMatchObject({ name: 'Before', disabled: true });
  });

  it('PostgreSQL: an operator write committed while a PUT waits for the row lock is kept', async () => {
    const store = registry().store;
    const sentinel = makeSentinel({ apps: [], appStore: store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const info = await registerClient(sentinel, { grant_types: ['client_credentials'], client_name: 'Before' });
    await operatorChange(store, info.client_id, { postLogoutRedirectUris: [KEPT_LOGOUT_URI, COMPROMISED_LOGOUT_URI] });
    // The operator's transaction holds the row while the PUT (its body complete) reaches the store.
    const operator = new pg.Client({ connectionString: registry().url });
    await operator.connect();
    try {
      await operator.query('BEGIN');
      await operator.query('SELECT 1 FROM sentinel_apps WHERE account_id = $1 AND client_id = $2 FOR UPDATE', [ACCOUNT, info.client_id]);
      const put = slowPut(sentinel, info, { client_id: info.client_id, grant_types: ['client_credentials'], client_name: 'After' });
      put.release();
      // Wait until the PUT's transaction is blocked on the operator's row lock, then let the operator's change commit.
      for (;;) {
        const waiting = await operator.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (waiting.rows[0].n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await operator.query(
        `UPDATE sentinel_apps SET metadata = jsonb_set(metadata, '{postLogoutRedirectUris}', $3::jsonb)
          WHERE account_id = $1 AND client_id = $2`,
        [ACCOUNT, info.client_id, JSON.stringify([KEPT_LOGOUT_URI])],
      );
      await operator.query('COMMIT');
      const response = (await put.response) as SentinelResponse;
      expect(response.status, response.body).toBe(200);
    } finally {
      await operator.end();
    }
    const listed = (await store.listApps(ACCOUNT)).find((app) => app.clientId === info.client_id);
    expect(listed).toMatchObject({ name: 'After', postLogoutRedirectUris: [KEPT_LOGOUT_URI] });
  });
});
