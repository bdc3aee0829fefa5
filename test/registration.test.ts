/**
 * Dynamic client registration (RFC 7591) and management (RFC 7592) on a real PostgreSQL: two service instances
 * (A and B) share one database, as two processes of one deployment would. Covers registration, bad metadata,
 * tokens, management with the registration access token, rotation with overlap, deletion (client credentials,
 * codes and refresh tokens stop at once; the bearer guard within its cache TTL), and every adapter.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashClientSecret, type Sentinel, type SentinelResponse } from '../src/index.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { PRESENCE_TTL_MS } from '../src/guard/app-presence.js';
import { call, exchangeCode, FORM, jsonOf, postForm, signIn, useRefreshToken } from './helpers/direct-flow.js';
import {
  ACCOUNT,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_ACCOUNT,
  REDIRECT_URI,
  appTokenPath,
} from './helpers/fixtures.js';
import { movableClock } from './helpers/clock.js';
import { HOSTS } from './helpers/hosts.js';
import { requirePostgres, sharedPostgres, throwawayDatabase } from './helpers/postgres.js';
import { contextOf } from '../src/http/context.js';

const available = await sharedPostgres('registration');
const INITIAL = 'initial-access-token-for-tests';
const OVERLAP_SECONDS = 2;
const REGISTER = `/sentinel/api/account/${ACCOUNT}/register`;
const FIXTURE_RAT = 'fixture-registration-access-token-value-0001';

interface Registered {
  client_id: string;
  client_secret?: string;
  registration_access_token: string;
  registration_client_uri: string;
  [member: string]: unknown;
}

describe.skipIf(available.skip)('dynamic client registration on PostgreSQL (two instances)', () => {
  let database: Awaited<ReturnType<typeof throwawayDatabase>>;
  let storeA: PostgresAppStore;
  let storeB: PostgresAppStore;
  let a: Sentinel;
  let b: Sentinel;
  const errors: unknown[] = [];

  beforeAll(async () => {
    requirePostgres(available);
    database = await throwawayDatabase();
    storeA = new PostgresAppStore({ connectionString: database.url });
    storeB = new PostgresAppStore({ connectionString: database.url });
    await Promise.all([storeA.migrate(), storeB.migrate()]);
    const options = (appStore: PostgresAppStore) => ({
      apps: [],
      appStore,
      registration: { initialAccessToken: INITIAL, secretOverlapSeconds: OVERLAP_SECONDS },
      onError: (error: unknown) => errors.push(error),
    });
    a = makeSentinel(options(storeA));
    b = makeSentinel(options(storeB));
  });

  afterAll(async () => {
    await storeA?.close();
    await storeB?.close();
    await database?.drop();
  });

  function register(sentinel: Sentinel, body: unknown, headers: Record<string, string> = {}, path = REGISTER): Promise<SentinelResponse> {
    return call(sentinel, {
      method: 'POST',
      path,
      headers: { authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  async function registered(body: unknown = { grant_types: ['client_credentials'], client_name: 'Bot' }): Promise<Registered> {
    const response = await register(a, body);
    expect(response.status, response.body).toBe(201);
    return jsonOf(response) as Registered;
  }

  function manage(
    sentinel: Sentinel,
    method: string,
    info: Registered,
    token = info.registration_access_token,
    suffix = '',
    body?: unknown,
  ) {
    return call(sentinel, {
      method,
      path: new URL(info.registration_client_uri).pathname + suffix,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  function clientCredentials(sentinel: Sentinel, clientId: string, secret: string, accountId = ACCOUNT): Promise<SentinelResponse> {
    return postForm(
      sentinel,
      appTokenPath(CONSUMER_UUID, accountId),
      new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
    );
  }

  async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await sleep(25);
    }
    return check();
  }

  it('registers an app: 201 with the RFC 7591 members, the secret shown once, usable on both instances', async () => {
    const info = await registered({
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
      client_name: 'Acme Bot',
      scope: 'messages',
      unknown_member: 'ignored',
    });
    expect(info).toMatchObject({
      client_secret_expires_at: 0,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
      client_name: 'Acme Bot',
      scope: 'messages',
    });
    expect(info.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(info.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(info.registration_access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Math.abs((info.client_id_issued_at as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(info.registration_client_uri).toBe(`http://localhost${REGISTER}/${info.client_id}`);
    expect(info).not.toHaveProperty('unknown_member');
    for (const sentinel of [a, b]) {
      expect((await clientCredentials(sentinel, info.client_id, info.client_secret as string)).status).toBe(200);
    }
    // Stored as hashes only.
    const stored = await storeA.findApp(ACCOUNT, info.client_id);
    expect(JSON.stringify(stored)).not.toContain(info.client_secret);
    expect(JSON.stringify(stored)).not.toContain(info.registration_access_token);
  });

  it('advertises registration_endpoint in the metadata', async () => {
    await registered();
    const metadata = jsonOf(await call(b, { path: `/sentinel/api/account/${ACCOUNT}/.well-known/oauth-authorization-server` }));
    expect(metadata.registration_endpoint).toBe(`http://localhost${REGISTER}`);
    const without = makeSentinel();
    const plain = jsonOf(await call(without, { path: `/sentinel/api/account/${ACCOUNT}/.well-known/oauth-authorization-server` }));
    expect(plain).not.toHaveProperty('registration_endpoint');
  });

  it.each([
    ['a non-https redirect URI', { redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
    ['a private-use scheme', { redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
    ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, 'invalid_redirect_uri', 'redirect_uris[0]'],
    ['no redirect URI for the code grant', { grant_types: ['authorization_code'] }, 'invalid_redirect_uri', 'redirect_uris'],
    ['an unknown grant type', { grant_types: ['password'] }, 'invalid_client_metadata', 'grant_types'],
    [
      'a public client asking for client credentials',
      { grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' },
      'invalid_client_metadata',
      'grant_types',
    ],
    ['an unknown auth method', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'token_endpoint_auth_method'],
    ['a non-string client name', { grant_types: ['client_credentials'], client_name: 7 }, 'invalid_client_metadata', 'client_name'],
    ['a bad scope', { grant_types: ['client_credentials'], scope: 'a\tb' }, 'invalid_client_metadata', 'scope'],
    ['malformed JSON', '{"grant_types": [', 'invalid_client_metadata', 'JSON'],
    ['a JSON array', '[]', 'invalid_client_metadata', 'object'],
  ])('refuses %s with 400 and stores nothing', async (_name, body, error, named) => {
    const before = (await storeA.listApps(ACCOUNT)).length;
    const response = await register(a, body);
    expect(response.status).toBe(400);
    const json = jsonOf(response);
    expect(json.error).toBe(error);
    expect(String(json.error_description)).toContain(named);
    expect((await storeA.listApps(ACCOUNT)).length).toBe(before);
  });

  it('refuses a body that is not JSON by Content-Type', async () => {
    const response = await register(a, 'grant_types=client_credentials', { 'content-type': FORM });
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_client_metadata');
  });

  it.each([
    ['missing', undefined],
    ['wrong', 'Bearer not-the-initial-access-token'],
    ['not Bearer', `Basic ${Buffer.from(`x:${INITIAL}`).toString('base64')}`],
  ])('refuses a %s initial access token with 401 and WWW-Authenticate: Bearer', async (_name, authorization) => {
    const before = (await storeA.listApps(ACCOUNT)).length;
    const response = await call(a, {
      method: 'POST',
      path: REGISTER,
      headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
      body: JSON.stringify({ grant_types: ['client_credentials'] }),
    });
    expect(response.status).toBe(401);
    expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer /);
    expect(jsonOf(response).error).toBe('invalid_token');
    expect((await storeA.listApps(ACCOUNT)).length).toBe(before);
  });

  it('asks a function initial access token per account', async () => {
    const store = storeA;
    const perAccount = makeSentinel({
      apps: [],
      appStore: store,
      registration: { initialAccessToken: async (token, { accountId }) => token === `token-for-${accountId}` },
    });
    const body = JSON.stringify({ grant_types: ['client_credentials'] });
    const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    expect((await call(perAccount, { method: 'POST', path: REGISTER, headers: headers(`token-for-${ACCOUNT}`), body })).status).toBe(201);
    expect((await call(perAccount, { method: 'POST', path: REGISTER, headers: headers(`token-for-${OTHER_ACCOUNT}`), body })).status).toBe(
      401,
    );
  });

  it('reads and replaces a client with its registration access token (PUT seen by the other instance)', async () => {
    const info = await registered({ redirect_uris: ['https://app.example.com/cb'], grant_types: ['authorization_code'] });
    const read = await manage(b, 'GET', info);
    expect(read.status).toBe(200);
    expect(jsonOf(read)).toMatchObject({ client_id: info.client_id, redirect_uris: ['https://app.example.com/cb'] });
    expect(jsonOf(read)).not.toHaveProperty('client_secret');
    expect(jsonOf(read)).not.toHaveProperty('registration_access_token');

    const put = await manage(a, 'PUT', info, undefined, '', {
      client_id: info.client_id,
      redirect_uris: ['https://app.example.com/new'],
      grant_types: ['authorization_code', 'refresh_token'],
      client_name: 'Renamed',
    });
    expect(put.status, put.body).toBe(200);
    expect(jsonOf(put)).toMatchObject({ redirect_uris: ['https://app.example.com/new'], client_name: 'Renamed' });
    expect(
      await eventually(
        async () => (await contextOf(b).apps.findApp(ACCOUNT, info.client_id))?.redirectUris[0] === 'https://app.example.com/new',
      ),
    ).toBe(true);

    for (const body of [
      { client_id: 'another-client', grant_types: ['client_credentials'] },
      { client_id: info.client_id, registration_access_token: 'x', redirect_uris: ['https://app.example.com/cb'] },
      { client_id: info.client_id, client_secret: 'not-the-secret', redirect_uris: ['https://app.example.com/cb'] },
      { client_id: info.client_id, redirect_uris: ['http://evil.example.com/cb'] },
      { client_id: info.client_id, grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' },
    ]) {
      const refused = await manage(a, 'PUT', info, undefined, '', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    expect((await storeA.findApp(ACCOUNT, info.client_id))?.redirectUris).toEqual(['https://app.example.com/new']);
  });

  it('an update keeps a scope the client has, narrowed never widened, even by leaving it out', async () => {
    const body = { grant_types: ['client_credentials'], client_name: 'Scoped' };
    const info = await registered({ ...body, scope: 'read write' });
    const update = (scope?: string) => manage(a, 'PUT', info, undefined, '', { client_id: info.client_id, ...body, scope });
    // Left out, the scope would be cleared, and an app without a scope may ask for any.
    for (const widening of [undefined, 'read admin:all']) {
      const refused = await update(widening);
      expect(refused.status, String(widening)).toBe(400);
      expect(jsonOf(refused)).toMatchObject({ error: 'invalid_client_metadata' });
      expect((await storeA.findApp(ACCOUNT, info.client_id))?.scope).toBe('read write');
    }
    const narrowed = await update('read');
    expect(narrowed.status, narrowed.body).toBe(200);
    expect(jsonOf(narrowed).scope).toBe('read');
    // Narrowed (by the client here, or by an operator) it stays so: the earlier scope is not asked back.
    expect((await update('read write')).status).toBe(400);
    expect((await clientCredentials(a, info.client_id, info.client_secret as string)).status).toBe(200);
    expect((await storeA.findApp(ACCOUNT, info.client_id))?.scope).toBe('read');
  });

  it('reads a null metadata value in an update as left out (RFC 7592 §2.2), and checks every other value', async () => {
    const info = await registered({ grant_types: ['client_credentials'], client_name: 'Bot', backchannel_logout_uri: null });
    const body = { client_id: info.client_id, grant_types: ['client_credentials'] };
    const put = await manage(a, 'PUT', info, undefined, '', {
      ...body,
      client_name: null,
      redirect_uris: null,
      response_types: null,
      backchannel_logout_uri: null,
      backchannel_logout_session_required: null,
      resources: null,
    });
    expect(put.status, put.body).toBe(200);
    expect(jsonOf(put)).not.toHaveProperty('client_name');
    expect((await storeA.findApp(ACCOUNT, info.client_id))?.name).toBeUndefined();
    for (const wrong of [{ client_name: 5 }, { redirect_uris: 'https://app.example.com/cb' }, { resources: [null] }]) {
      const refused = await manage(a, 'PUT', info, undefined, '', { ...body, ...wrong });
      expect(refused.status, JSON.stringify(wrong)).toBe(400);
    }
  });

  it("never lets one app's registration access token manage another app, or an app of another account", async () => {
    const first = await registered();
    const second = await registered();
    for (const method of ['GET', 'DELETE']) {
      const response = await manage(a, method, second, first.registration_access_token);
      expect(response.status).toBe(401);
      expect(String(response.headers['www-authenticate'])).toMatch(/^Bearer /);
    }
    expect((await manage(a, 'POST', second, first.registration_access_token, '/secret')).status).toBe(401);
    // The same client id under another account's path is another (unknown) client.
    const elsewhere = { ...first, registration_client_uri: first.registration_client_uri.replace(ACCOUNT, OTHER_ACCOUNT) };
    expect((await manage(a, 'GET', elsewhere)).status).toBe(401);
    expect((await manage(a, 'GET', first, undefined)).status).toBe(200);
    expect((await manage(a, 'GET', first, 'wrong-token')).status).toBe(401);
    expect(await storeA.findApp(ACCOUNT, second.client_id)).not.toBeNull();
  });

  it('rotates the secret: the new one works at once on both instances, the old one until the overlap ends', async () => {
    const info = await registered();
    const oldSecret = info.client_secret as string;
    const rotated = await manage(a, 'POST', info, undefined, '/secret');
    expect(rotated.status).toBe(200);
    const body = jsonOf(rotated);
    const newSecret = body.client_secret as string;
    expect(newSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSecret).not.toBe(oldSecret);
    expect(body.client_secret_expires_at).toBe(0);
    expect(Math.abs((body.previous_secret_expires_at as number) - (Date.now() / 1000 + OVERLAP_SECONDS))).toBeLessThan(2);
    expect(await eventually(async () => (await clientCredentials(b, info.client_id, newSecret)).status === 200)).toBe(true);
    for (const sentinel of [a, b]) {
      expect((await clientCredentials(sentinel, info.client_id, newSecret)).status).toBe(200);
      expect((await clientCredentials(sentinel, info.client_id, oldSecret)).status).toBe(200);
    }
    await sleep(OVERLAP_SECONDS * 1000 + 500);
    for (const sentinel of [a, b]) {
      expect(jsonOf(await clientCredentials(sentinel, info.client_id, oldSecret)).error).toBe('invalid_client');
      expect((await clientCredentials(sentinel, info.client_id, newSecret)).status).toBe(200);
    }
  });

  it('deletes a client: its client credentials stop at once on both instances; the token guard refuses at once here', async () => {
    const info = await registered();
    const secret = info.client_secret as string;
    const issued = jsonOf(await clientCredentials(b, info.client_id, secret));
    const token = issued.access_token as string;
    expect((await a.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    const deleted = await manage(a, 'DELETE', info);
    expect(deleted.status).toBe(204);
    expect(jsonOf(await clientCredentials(a, info.client_id, secret)).error).toBe('invalid_client');
    expect(await eventually(async () => jsonOf(await clientCredentials(b, info.client_id, secret)).error === 'invalid_client', 2000)).toBe(
      true,
    );
    expect((await a.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(false);
    expect((await manage(a, 'GET', info)).status).toBe(401);
    expect((await manage(a, 'DELETE', info)).status).toBe(401);
  });

  it('the other instance’s bearer guard refuses a deleted app’s tokens within its cache TTL (< 60 s)', async () => {
    const info = await registered();
    const token = jsonOf(await clientCredentials(b, info.client_id, info.client_secret as string)).access_token as string;
    const check = () => b.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
    expect((await check()).ok).toBe(true); // B now trusts the app for PRESENCE_TTL_MS
    // The presence cache times its TTL by this process's clock (lru-cache, performance.now()): move it past the
    // TTL instead of waiting 30 s. Nothing else tells B, so it refuses only once that TTL has run out.
    const clock = movableClock();
    try {
      expect((await manage(a, 'DELETE', info)).status).toBe(204);
      const deletedAt = Date.now();
      await clock.advance(PRESENCE_TTL_MS);
      expect(await eventually(async () => !(await check()).ok, 5000)).toBe(true);
      expect(Date.now() - deletedAt).toBeLessThan(60_000);
    } finally {
      clock.restore();
    }
  });

  it('deleting an app ends its codes and refresh tokens at once', async () => {
    // The fixture app, stored with a registration access token we know.
    await storeA.saveApp({
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      clientSecretHash: hashClientSecret(CLIENT_SECRET),
      redirectUris: [REDIRECT_URI],
      grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      tokenEndpointAuthMethod: 'client_secret_post',
      registrationAccessTokenHash: hashClientSecret(FIXTURE_RAT),
    });
    const first = await signIn(a);
    const tokens = jsonOf(await exchangeCode(a, first.code, first.verifier));
    const refreshToken = tokens.refresh_token as string;
    expect(refreshToken).toBeTruthy();
    const pending = await signIn(a);
    const info = { registration_client_uri: `http://localhost${REGISTER}/${CLIENT_ID}` } as Registered;
    expect((await manage(a, 'DELETE', info, FIXTURE_RAT)).status).toBe(204);
    const code = await exchangeCode(a, pending.code, pending.verifier);
    expect(code.status).toBe(400);
    expect(jsonOf(code).error).toBe('invalid_client');
    const refresh = await useRefreshToken(a, refreshToken);
    expect(jsonOf(refresh).error).toBe('invalid_client');
    const access = await a.checkBearer(`Bearer ${tokens.access_token as string}`, { accountId: ACCOUNT });
    expect(access.ok).toBe(false);
  });

  it('refuses to rotate a secret for a private_key_jwt app (it authenticates with its keys), and mints none', async () => {
    const clientId = randomUUID();
    const publicJwk = {
      kty: 'EC',
      crv: 'P-256',
      x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
      y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
    };
    await storeA.saveApp({
      accountId: ACCOUNT,
      clientId,
      redirectUris: [REDIRECT_URI],
      grantTypes: ['authorization_code'],
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
      registrationAccessTokenHash: hashClientSecret(FIXTURE_RAT),
    });
    const info = { registration_client_uri: `http://localhost${REGISTER}/${clientId}` } as Registered;
    const rotated = await manage(a, 'POST', info, FIXTURE_RAT, '/secret');
    expect(rotated.status).toBe(400);
    expect(jsonOf(rotated).error).toBe('invalid_client_metadata');
    expect(jsonOf(rotated).client_secret).toBeUndefined();
    const stored = await storeA.findApp(ACCOUNT, clientId);
    expect(stored?.clientSecretHash).toBeUndefined();
    expect(stored?.jwks).toEqual({ keys: [publicJwk] });
  });

  it('answers ids PostgreSQL cannot hold (NUL) as unknown, with a 4xx and nothing reported', async () => {
    const before = errors.length;
    const cc = await clientCredentials(a, 'client\u0000id', 'whatever-secret');
    expect(jsonOf(cc).error).toBe('invalid_client');
    const metadata = await call(a, { path: '/sentinel/api/account/acc%00unt/.well-known/oauth-authorization-server' });
    expect(metadata.status).toBe(404);
    const managed = await call(a, { path: `${REGISTER}/client%00id`, headers: { authorization: 'Bearer some-token' } });
    expect(managed.status).toBe(401);
    const registeredThere = await register(a, { grant_types: ['client_credentials'] }, {}, '/sentinel/api/account/acc%00unt/register');
    expect(registeredThere.status).toBe(400);
    expect(errors.length).toBe(before);
  });

  it('reports nothing to onError in all of the above', () => {
    expect(errors).toEqual([]);
  });

  it.each(HOSTS.map((host) => [host.name, host] as const))('registers and manages through %s', async (_name, host) => {
    const mounted = await host.mount(a);
    try {
      const created = await fetch(`${mounted.url}${REGISTER}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grant_types: ['client_credentials'], client_name: `via ${randomUUID()}` }),
      });
      expect(created.status).toBe(201);
      const info = (await created.json()) as Registered;
      const path = new URL(info.registration_client_uri).pathname;
      const headers = { authorization: `Bearer ${info.registration_access_token}` };
      expect((await fetch(`${mounted.url}${path}`, { headers })).status).toBe(200);
      const rotated = await fetch(`${mounted.url}${path}/secret`, { method: 'POST', headers });
      expect(rotated.status).toBe(200);
      expect((await fetch(`${mounted.url}${path}`, { method: 'DELETE', headers })).status).toBe(204);
      const bad = await fetch(`${mounted.url}${REGISTER}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json' },
        body: '{oops',
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe('invalid_client_metadata');
    } finally {
      await mounted.close();
    }
  });
});
