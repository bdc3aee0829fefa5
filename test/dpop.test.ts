/**
 * DPoP (RFC 9449): every bad proof the token endpoint must refuse with 400 `invalid_dpop_proof` issuing nothing,
 * every bad presentation the guard must refuse with 401 and `WWW-Authenticate: DPoP`, and the bindings that make
 * a stolen code, refresh token or access token useless without the key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import request from 'supertest';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { requireAccessToken as requireExpressAccessToken } from '../adapters/express/index.js';
import { requireAccessToken as requireFastifyAccessToken } from '../adapters/fastify/index.js';
import { requireAccessToken as requireKoaAccessToken } from '../adapters/koa/index.js';
import { exportJWK, generateKeyPair } from 'jose';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { createSentinel, MemoryStore, OAuthError, type Sentinel, type SentinelEvent, type SentinelOptions } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, PUBLIC_CLIENT_ID, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { HOSTS, listen, type MountedHost } from './helpers/hosts.js';
import { clientKey, dpopProof, keyedOptions, keyedSentinel, type ClientKey } from './helpers/key-bound.js';
import { codeFor } from './helpers/oauth.js';
import { pkcePair } from './helpers/pkce.js';

const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
const V2_HTU = `http://localhost${V2_PATH}`;
const TOKEN_PATH = `/sentinel/api/account/${ACCOUNT}/token`;
const TOKEN_HTU = `http://localhost${TOKEN_PATH}`;
const API_PATH = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`;

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function start(overrides: Partial<SentinelOptions> = {}, app: Record<string, unknown> = {}) {
  const events: SentinelEvent[] = [];
  const key = await clientKey();
  const sentinel = keyedSentinel(key, app, { onEvent: (event) => events.push(event), ...overrides });
  const mounted = await HOSTS[1]!.mount(sentinel);
  open.push(mounted);
  return { sentinel, server: mounted.server, url: mounted.url, events, key };
}

function consumerToken(server: unknown, proof?: string): request.Test {
  const call = request(server as never)
    .post(`${V2_PATH}?state=${CONSUMER_UUID}`)
    .type('form')
    .send({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
  return proof === undefined ? call : call.set('DPoP', proof);
}

function issued(events: SentinelEvent[]): number {
  return events.filter((event) => event.type === 'token.issued').length;
}

async function expectRefusedAtTokenEndpoint(server: unknown, events: SentinelEvent[], proof: string, why: RegExp): Promise<void> {
  const before = issued(events);
  const response = await consumerToken(server, proof);
  expect(response.status).toBe(400);
  expect(response.body.error).toBe('invalid_dpop_proof');
  expect(response.body.error_description).toMatch(why);
  expect(response.body.access_token).toBeUndefined();
  expect(issued(events)).toBe(before);
}

/** A bound consumer token and the key it is bound to. */
async function boundToken(server: unknown, key: ClientKey): Promise<string> {
  const response = await consumerToken(server, await dpopProof(key, { htm: 'POST', htu: V2_HTU }));
  expect(response.status).toBe(200);
  expect(response.body.token_type).toBe('DPoP');
  return response.body.access_token as string;
}

function ath(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

async function callAPI(url: string, token: string, proof?: string, scheme = 'DPoP'): Promise<Response> {
  return fetch(`${url}${API_PATH}`, { headers: { authorization: `${scheme} ${token}`, ...(proof === undefined ? {} : { dpop: proof }) } });
}

describe('DPoP at the token endpoint', () => {
  it('binds the token: token_type DPoP and cnf.jkt = the thumbprint of the proof key', async () => {
    const { server, key } = await start();
    const token = await boundToken(server, key);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { cnf: { jkt: string } };
    expect(claims.cnf.jkt).toBe(key.jkt);
  });

  it('binds v1 app tokens too (htu = the v1 endpoint)', async () => {
    const { server, key } = await start();
    const v1 = `/sentinel/api/account/${ACCOUNT}/app/token`;
    const response = await request(server)
      .post(v1)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: `http://localhost${v1}` }))
      .send({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('DPoP');
  });

  it('refuses a replayed proof', async () => {
    const { server, events, key } = await start();
    const proof = await dpopProof(key, { htm: 'POST', htu: V2_HTU });
    expect((await consumerToken(server, proof)).status).toBe(200);
    await expectRefusedAtTokenEndpoint(server, events, proof, /already used/);
  });

  it('accepts one of 20 concurrent presentations of one proof, across two instances sharing a store', async () => {
    const store = new MemoryStore();
    const key = await clientKey();
    const hosts: MountedHost['server'][] = [];
    for (const host of [HOSTS[0]!, HOSTS[4]!]) {
      const mounted = await host.mount(keyedSentinel(key, {}, { store }));
      open.push(mounted);
      hosts.push(mounted.server);
    }
    const proof = await dpopProof(key, { htm: 'POST', htu: V2_HTU });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => consumerToken(hosts[index % 2], proof)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.error === 'invalid_dpop_proof')).toHaveLength(19);
  });

  it('answers 500 server_error, issues nothing and reports the cause when the replay cache fails', async () => {
    const store = new MemoryStore();
    store.increment = async () => {
      throw new Error('replay cache down');
    };
    const errors: unknown[] = [];
    const { server, events, key } = await start({ store, onError: (error) => errors.push(error) });
    const response = await consumerToken(server, await dpopProof(key, { htm: 'POST', htu: V2_HTU }));
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: 'server_error', error_description: 'the server could not complete the request' });
    expect(issued(events)).toBe(0);
    expect(errors).toEqual([expect.objectContaining({ message: 'replay cache down' })]);
  });

  it('refuses a proof for another URL (htu)', async () => {
    const { server, events, key } = await start();
    await expectRefusedAtTokenEndpoint(server, events, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }), /htu/);
  });

  it('refuses a proof for another method (htm)', async () => {
    const { server, events, key } = await start();
    await expectRefusedAtTokenEndpoint(server, events, await dpopProof(key, { htm: 'GET', htu: V2_HTU }), /htm/);
  });

  it('refuses a stale proof (iat outside the window)', async () => {
    const { server, events, key } = await start();
    const iat = Math.floor(Date.now() / 1000) - 120;
    await expectRefusedAtTokenEndpoint(server, events, await dpopProof(key, { htm: 'POST', htu: V2_HTU, iat }), /iat/);
  });

  it('refuses a proof dated beyond the clock tolerance in the future (iat)', async () => {
    const { server, events, key } = await start();
    const iat = Math.floor(Date.now() / 1000) + 120;
    await expectRefusedAtTokenEndpoint(server, events, await dpopProof(key, { htm: 'POST', htu: V2_HTU, iat }), /iat/);
  });

  it('refuses a proof with an empty jti', async () => {
    const { server, events, key } = await start();
    await expectRefusedAtTokenEndpoint(server, events, await dpopProof(key, { htm: 'POST', htu: V2_HTU, jti: '' }), /jti/);
  });

  it('refuses an unsigned proof (alg none)', async () => {
    const { server, events, key } = await start();
    const { kid: _kid, alg: _alg, ...jwk } = key.publicJwk;
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${encode({ alg: 'none', typ: 'dpop+jwt', jwk })}.${encode({ htm: 'POST', htu: V2_HTU, iat: now, jti: 'x' })}.`;
    const response = await consumerToken(server, unsigned);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_dpop_proof');
    expect(issued(events)).toBe(0);
    await expectRefusedAtTokenEndpoint(server, events, `${unsigned}c2ln`, /ES256/);
  });

  it('refuses an HS256 proof', async () => {
    const { server, events, key } = await start();
    const secret = randomBytes(32);
    const proof = await dpopProof(
      key,
      { htm: 'POST', htu: V2_HTU },
      { alg: 'HS256', jwk: { kty: 'oct', k: secret.toString('base64url') } },
      secret,
    );
    await expectRefusedAtTokenEndpoint(server, events, proof, /signed with one of/);
  });

  it('refuses a proof whose jwk carries the private key', async () => {
    const { server, events, key } = await start();
    const proof = await dpopProof(key, { htm: 'POST', htu: V2_HTU }, { jwk: key.privateJwk });
    await expectRefusedAtTokenEndpoint(server, events, proof, /private key/);
  });

  it('refuses a proof signed by another key than its jwk', async () => {
    const { server, events, key } = await start();
    const other = await clientKey();
    await expectRefusedAtTokenEndpoint(
      server,
      events,
      await dpopProof(key, { htm: 'POST', htu: V2_HTU }, {}, other.privateKey),
      /signature/,
    );
  });

  it('requires a proof from an app registered with requireDPoP', async () => {
    const key = await clientKey();
    const options = keyedOptions(key);
    const apps = (options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, requireDPoP: true } : app));
    const sentinel = createSentinel({ ...options, apps });
    const mounted = await HOSTS[1]!.mount(sentinel);
    open.push(mounted);
    const response = await consumerToken(mounted.server);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_dpop_proof');
    expect((await consumerToken(mounted.server, await dpopProof(key, { htm: 'POST', htu: V2_HTU }))).status).toBe(200);
  });

  it('asks for a server nonce when nonces are on, and accepts the proof that carries it', async () => {
    const { server, key } = await start({ dpop: { nonce: true } });
    const first = await consumerToken(server, await dpopProof(key, { htm: 'POST', htu: V2_HTU }));
    expect(first.status).toBe(400);
    expect(first.body.error).toBe('use_dpop_nonce');
    const nonce = first.headers['dpop-nonce'];
    expect(nonce).toMatch(/^[a-z0-9]+\.[A-Za-z0-9_-]{22}$/);
    expect((await consumerToken(server, await dpopProof(key, { htm: 'POST', htu: V2_HTU, nonce: 'x.forged' }))).body.error).toBe(
      'use_dpop_nonce',
    );
    expect((await consumerToken(server, await dpopProof(key, { htm: 'POST', htu: V2_HTU, nonce }))).status).toBe(200);
  });

  it('with keyRotation (no static keys), a nonce from one instance is accepted by another sharing the store', async () => {
    const store = new MemoryStore();
    // ES256 alone: the nonce's key is the question here, not the RS256 key an OpenID Connect ring would generate.
    const keyRotation = {
      encryptionKey: randomBytes(32).toString('base64url'),
      rotateEverySeconds: 3600,
      prePublishSeconds: 400,
      algorithms: ['ES256' as const],
    };
    const first = await start({ store, keys: undefined, keyRotation, dpop: { nonce: true } });
    const second = await start({ store, keys: undefined, keyRotation, dpop: { nonce: true } });
    await first.sentinel.ready();
    await second.sentinel.ready();
    const asked = await consumerToken(first.server, await dpopProof(first.key, { htm: 'POST', htu: V2_HTU }));
    expect(asked.body.error).toBe('use_dpop_nonce');
    const nonce = asked.headers['dpop-nonce'] as string;
    const elsewhere = await consumerToken(second.server, await dpopProof(first.key, { htm: 'POST', htu: V2_HTU, nonce }));
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.token_type).toBe('DPoP');
    // Another encryption key is another service: its nonces are not ours.
    const foreign = await start({
      keys: undefined,
      keyRotation: { ...keyRotation, encryptionKey: randomBytes(32).toString('base64url') },
      dpop: { nonce: true },
    });
    await foreign.sentinel.ready();
    const refused = await consumerToken(foreign.server, await dpopProof(first.key, { htm: 'POST', htu: V2_HTU, nonce }));
    expect(refused.body.error).toBe('use_dpop_nonce');
  });
});

describe('DPoP at the guard (requireAccessToken)', () => {
  it('accepts the bound token with a fresh proof carrying ath', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const response = await callAPI(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) }));
    expect(response.status).toBe(200);
  });

  it('refuses a proof signed with a different key than cnf.jkt', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const other = await clientKey();
    const response = await callAPI(url, token, await dpopProof(other, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(
      /^DPoP algs="[^"]+", error="invalid_dpop_proof", error_description="[^"]*another key/,
    );
  });

  it('refuses a proof without ath', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const response = await callAPI(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}` }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof".*ath/);
  });

  it('refuses a proof whose ath is the hash of another token', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const other = await boundToken(server, key);
    const response = await callAPI(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(other) }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof".*ath does not match/);
  });

  it('refuses a replayed proof, a proof for another URL, and a stale proof', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const proof = await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) });
    expect((await callAPI(url, token, proof)).status).toBe(200);
    expect((await callAPI(url, token, proof)).status).toBe(401);
    expect((await callAPI(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}/elsewhere`, ath: ath(token) }))).status).toBe(401);
    const iat = Math.floor(Date.now() / 1000) - 300;
    expect((await callAPI(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token), iat }))).status).toBe(
      401,
    );
  });

  // RFC 9449 §4.3 with RFC 3986 §6.2.2: an encoded unreserved character is that character, and hex digits have no case.
  it('matches htu after percent-encoding normalization, and never decodes a reserved character', async () => {
    const { server, url, key } = await start();
    const token = await boundToken(server, key);
    const encodedPath = API_PATH.replace('-', '%2D');
    const proofFor = (htu: string) => dpopProof(key, { htm: 'GET', htu, ath: ath(token) });
    const call = async (path: string, htu: string) =>
      (await fetch(`${url}${path}`, { headers: { authorization: `DPoP ${token}`, dpop: await proofFor(htu) } })).status;
    expect(await call(encodedPath, `${url}${API_PATH}`)).toBe(200);
    expect(await call(API_PATH, `${url}${API_PATH.replace('-', '%2d')}`)).toBe(200);
    expect(await call(API_PATH, `${url}${API_PATH.replace('/brand/', '/brand%2f')}`)).toBe(401);
  });

  it('refuses the bound token presented as a Bearer token, and verifyAccessToken refuses it without a proof', async () => {
    const { sentinel, server, url, key } = await start();
    const token = await boundToken(server, key);
    const response = await callAPI(url, token, undefined, 'Bearer');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^DPoP .*error="invalid_token"/);
    await expect(sentinel.verifyAccessToken(token, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('introspects a bound token as active with its cnf (its client presents it, no proof needed)', async () => {
    const { server, key } = await start();
    const token = await boundToken(server, key);
    const response = await request(server)
      .post(`/sentinel/api/account/${ACCOUNT}/token/introspect`)
      .type('form')
      .send({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(response.body).toMatchObject({ active: true, cnf: { jkt: key.jkt }, token_type: 'DPoP' });
  });

  it('checks a proof outside the FAPI 2.0 algorithms when the app store refuses the client: no 503', async () => {
    const key = await clientKey();
    const options = keyedOptions(key);
    const registry = new MemoryAppStore(createSentinel(options).config.apps);
    let refusing = false;
    // A host registry that answers a client it no longer serves with invalid_client, as the document resolver does.
    const appStore = {
      hasAccount: (accountId: string) => registry.hasAccount(accountId),
      findApp: async (accountId: string, clientId: string) => {
        if (refusing) throw new OAuthError('invalid_client', 'this client is suspended', { status: 401 });
        return registry.findApp(accountId, clientId);
      },
    };
    const errors: unknown[] = [];
    const sentinel = createSentinel({ ...options, apps: [], appStore, onError: (error) => errors.push(error) });
    const pair = await generateKeyPair('ES384', { extractable: true });
    const es384 = { privateKey: pair.privateKey, publicJwk: await exportJWK(pair.publicKey) } as ClientKey;
    const issued = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      { headers: { dpop: await dpopProof(es384, { htm: 'POST', htu: TOKEN_HTU }, { alg: 'ES384' }) } },
    );
    const token = jsonOf(issued).access_token as string;
    const guarded = async () =>
      sentinel.checkBearer(
        `DPoP ${token}`,
        {},
        {
          method: 'GET',
          url: API_PATH,
          headers: {
            host: 'localhost',
            dpop: await dpopProof(es384, { htm: 'GET', htu: `http://localhost${API_PATH}`, ath: ath(token) }, { alg: 'ES384' }),
          },
        },
      );
    expect((await guarded()).ok).toBe(true);
    // Still known present to the guard: the refusal is no failure of the store, and the binding check goes on.
    refusing = true;
    expect((await guarded()).ok).toBe(true);
    expect(errors).toEqual([]);
  });

  it('keeps unbound Bearer tokens working', async () => {
    const { server, url } = await start();
    const token = (await consumerToken(server)).body.access_token as string;
    expect((await callAPI(url, token, undefined, 'Bearer')).status).toBe(200);
  });
});

// Every adapter hands the guard the path and all headers, so the core alone decides the URL a proof must name.
describe.each(HOSTS)('DPoP at the guard behind a TLS-terminating proxy on $name', (host) => {
  const PUBLIC_HTU = `https://api.example.com${API_PATH}`;
  const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };

  async function mount(trustProxy: SentinelOptions['trustProxy']) {
    const key = await clientKey();
    const mounted = await host.mount(keyedSentinel(key, {}, { trustProxy }));
    open.push(mounted);
    return { ...mounted, key, token: await boundToken(mounted.server, key) };
  }

  function callForwarded(url: string, token: string, proof: string): Promise<Response> {
    return fetch(`${url}${API_PATH}`, { headers: { authorization: `DPoP ${token}`, dpop: proof, ...FORWARDED } });
  }

  it('with trustProxy, expects the htu the proxy forwarded (X-Forwarded-Proto / -Host)', async () => {
    const { url, key, token } = await mount(true);
    const proof = await dpopProof(key, { htm: 'GET', htu: PUBLIC_HTU, ath: ath(token) });
    expect((await callForwarded(url, token, proof)).status).toBe(200);
    const direct = await callForwarded(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) }));
    expect(direct.status).toBe(401);
    expect(direct.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof".*htu/);
  });

  it('without trustProxy, ignores the forwarded headers and expects the Host URL', async () => {
    const { url, key, token } = await mount(false);
    expect((await callForwarded(url, token, await dpopProof(key, { htm: 'GET', htu: PUBLIC_HTU, ath: ath(token) }))).status).toBe(401);
    expect((await callForwarded(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) }))).status).toBe(
      200,
    );
  });

  // RFC 9700 §4.13: anyone can send X-Forwarded-Host. A proof made for another resource server must not pass here
  // because the client said that server's name, from a peer (127.0.0.1) that trustProxy does not name.
  it('with trustProxy naming other proxies, ignores the forwarded headers of a peer it does not name', async () => {
    const { url, key, token } = await mount(['10.9.9.9']);
    const forged = await callForwarded(url, token, await dpopProof(key, { htm: 'GET', htu: PUBLIC_HTU, ath: ath(token) }));
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof".*htu/);
    expect((await callForwarded(url, token, await dpopProof(key, { htm: 'GET', htu: `${url}${API_PATH}`, ath: ath(token) }))).status).toBe(
      200,
    );
  });

  it('with trustProxy naming the peer, or no hops, believes the forwarded headers only from that peer', async () => {
    const named = await mount(['loopback']);
    expect(
      (await callForwarded(named.url, named.token, await dpopProof(named.key, { htm: 'GET', htu: PUBLIC_HTU, ath: ath(named.token) })))
        .status,
    ).toBe(200);
    const none = await mount(0);
    expect(
      (await callForwarded(none.url, none.token, await dpopProof(none.key, { htm: 'GET', htu: PUBLIC_HTU, ath: ath(none.token) }))).status,
    ).toBe(401);
  });
});

/** A GET of `path` with these headers as sent, `Host` included (fetch would set its own). */
function getRaw(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; challenge: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${url}${path}`, { headers, setHost: false }, (incoming) => {
      incoming.resume();
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, challenge: String(incoming.headers['www-authenticate']) }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

// The URL a proof must name is rebuilt from Host: a Host carrying a path and a `#` or `?` moved where the host
// ends, so a request for API_PATH was checked as one for the path in the Host, and a proof made for another route
// of the same server passed here.
describe.each(HOSTS)('DPoP at the guard on $name: a Host that carries more than a host', (host) => {
  it.each([['#'], ['?']])('names no URL a proof matches when it ends in a path and %s', async (cut) => {
    const key = await clientKey();
    const mounted = await host.mount(keyedSentinel(key, {}, {}));
    open.push(mounted);
    const token = await boundToken(mounted.server, key);
    const authority = new URL(mounted.url).host;
    const elsewhere = '/api/other/route';
    const proof = await dpopProof(key, { htm: 'GET', htu: `${mounted.url}${elsewhere}`, ath: ath(token) });
    const forged = await getRaw(mounted.url, API_PATH, {
      host: `${authority}${elsewhere}${cut}`,
      authorization: `DPoP ${token}`,
      dpop: proof,
    });
    // The fetch host builds its Request's URL from Host too, so there the route is not even reached (404).
    if (host.name === 'fetch') expect(forged.status).toBe(404);
    else {
      expect(forged.status).toBe(401);
      expect(forged.challenge).toMatch(/error="invalid_dpop_proof".*htu/);
    }
    // The honest request, with a proof naming the route it calls, passes.
    const honest = await dpopProof(key, { htm: 'GET', htu: `${mounted.url}${API_PATH}`, ath: ath(token) });
    expect((await getRaw(mounted.url, API_PATH, { host: authority, authorization: `DPoP ${token}`, dpop: honest })).status).toBe(200);
  });
});

describe('DPoP at the guard: the authority a request names', () => {
  const PUBLIC = 'api.example.com';
  const OTHER_ROUTE = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/read`;

  async function checked(headers: Record<string, string>, options: Partial<SentinelOptions> = {}) {
    const key = await clientKey();
    const sentinel = keyedSentinel(key, {}, options);
    const issuedToken = jsonOf(
      await postForm(
        sentinel,
        `${V2_PATH}?state=${CONSUMER_UUID}`,
        new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
        { headers: { dpop: await dpopProof(key, { htm: 'POST', htu: V2_HTU }) } },
      ),
    ).access_token as string;
    const proofFor = (url: string) => dpopProof(key, { htm: 'GET', htu: url, ath: ath(issuedToken) });
    return async (htu: string) =>
      (
        await sentinel.checkBearer(
          `DPoP ${issuedToken}`,
          { accountId: ACCOUNT, consumerId: CONSUMER_UUID },
          { method: 'GET', url: API_PATH, headers: { ...headers, dpop: await proofFor(htu) }, secure: true, ip: '127.0.0.1' },
        )
      ).ok;
  }

  it.each([
    ['Host', { host: `${PUBLIC}${OTHER_ROUTE}#` }, {}],
    ["HTTP/2's :authority", { ':authority': `${PUBLIC}${OTHER_ROUTE}?` }, {}],
    ["a trusted proxy's X-Forwarded-Host", { host: 'internal', 'x-forwarded-host': `${PUBLIC}${OTHER_ROUTE}#` }, { trustProxy: true }],
  ] as const)('refuses a proof for another route through %s', async (_name, headers, options) => {
    const check = await checked(headers, options);
    expect(await check(`https://${PUBLIC}${OTHER_ROUTE}`)).toBe(false);
  });

  it('takes a well-formed Host with a port or an IP literal, and only an http or https forwarded scheme', async () => {
    expect(await (await checked({ host: `${PUBLIC}:8443` }))(`https://${PUBLIC}:8443${API_PATH}`)).toBe(true);
    expect(await (await checked({ host: '[::1]:8443' }))(`https://[::1]:8443${API_PATH}`)).toBe(true);
    const proxied = await checked({ host: 'internal', 'x-forwarded-host': PUBLIC, 'x-forwarded-proto': 'https' }, { trustProxy: true });
    expect(await proxied(`https://${PUBLIC}${API_PATH}`)).toBe(true);
    const badScheme = await checked(
      { host: 'internal', 'x-forwarded-host': PUBLIC, 'x-forwarded-proto': `https://${PUBLIC}${OTHER_ROUTE}#` },
      { trustProxy: true },
    );
    expect(await badScheme(`https://${PUBLIC}${OTHER_ROUTE}`)).toBe(false);
  });
});

// RFC 9449 §4.3: htu is the URL the client called. A host may rewrite the URL before its routes (a version prefix
// dropped): Express's req.originalUrl and Koa's ctx.originalUrl keep the one the client sent, and so must Fastify's
// guard when the host's rewriteUrl has changed request.url, or a proof for the public URL is refused and one naming
// the internal path, which no client called, passes.
const REWRITTEN: { name: string; guard: (sentinel: Sentinel) => Promise<MountedHost> }[] = [
  {
    name: 'express',
    async guard(sentinel) {
      const app = express();
      app.use((request, _response, next) => {
        request.url = request.url.replace(/^\/v1\//, '/');
        next();
      });
      app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireExpressAccessToken(sentinel), (_request, response) => {
        response.json({ ok: true });
      });
      return listen(createServer(app));
    },
  },
  {
    name: 'koa',
    async guard(sentinel) {
      const app = new Koa();
      const guard = requireKoaAccessToken(sentinel);
      app.use(async (ctx, next) => {
        ctx.url = ctx.url.replace(/^\/v1\//, '/');
        await next();
      });
      app.use(async (ctx) => {
        await guard(ctx, async () => {
          ctx.body = { ok: true };
        });
      });
      return listen(createServer(app.callback()));
    },
  },
  {
    name: 'fastify',
    async guard(sentinel) {
      const app = Fastify({ rewriteUrl: (request) => (request.url ?? '/').replace(/^\/v1\//, '/') });
      app.get(
        '/api/account/:accountId/consumer/:consumerId/brand/tokens',
        { preHandler: requireFastifyAccessToken(sentinel) },
        async () => ({
          ok: true,
        }),
      );
      await app.ready();
      return listen(app.server);
    },
  },
];

describe.each(REWRITTEN)('DPoP at the $name guard behind a URL the host rewrites', ({ guard }) => {
  it('expects the htu of the URL the client called, not the rewritten one', async () => {
    const { sentinel, server, key } = await start();
    const token = await boundToken(server, key);
    const mounted = await guard(sentinel);
    open.push(mounted);
    const call = async (htu: string): Promise<number> => {
      const proof = await dpopProof(key, { htm: 'GET', htu, ath: ath(token) });
      return (await fetch(`${mounted.url}/v1${API_PATH}`, { headers: { authorization: `DPoP ${token}`, dpop: proof } })).status;
    };
    expect(await call(`${mounted.url}/v1${API_PATH}`)).toBe(200);
    expect(await call(`${mounted.url}${API_PATH}`)).toBe(401);
  });
});

describe('DPoP bindings of codes and refresh tokens', () => {
  it('redeems a dpop_jkt code only with a proof by that key', async () => {
    const { sentinel, server, key } = await start();
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(sentinel, {
      clientId: PUBLIC_CLIENT_ID,
      redirectUri: REDIRECT_URI,
      codeChallenge: challenge,
      dpopJkt: key.jkt,
    });
    const other = await clientKey();
    const form = {
      grant_type: 'authorization_code',
      code,
      client_id: PUBLIC_CLIENT_ID,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    };
    const refused = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(other, { htm: 'POST', htu: TOKEN_HTU }))
      .send(form);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    expect(refused.body.access_token).toBeUndefined();
  });

  it("binds a public client's refresh token at its first proof, even when the code was redeemed without one", async () => {
    const { sentinel, server, key } = await start();
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID, redirectUri: REDIRECT_URI, codeChallenge: challenge });
    const bearer = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .send({ grant_type: 'authorization_code', code, client_id: PUBLIC_CLIENT_ID, code_verifier: verifier, redirect_uri: REDIRECT_URI });
    expect(bearer.body.token_type).toBe('Bearer');
    const refresh = (token: string) => ({ grant_type: 'refresh_token', refresh_token: token, client_id: PUBLIC_CLIENT_ID });
    const bound = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }))
      .send(refresh(bearer.body.refresh_token as string));
    expect(bound.body.token_type).toBe('DPoP');
    // RFC 9449 §5: the refresh token that answer carries is bound to the key: not usable without its proof.
    const without = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .send(refresh(bound.body.refresh_token as string));
    expect(without.body.error).toBe('invalid_dpop_proof');
    const stranger = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(await clientKey(), { htm: 'POST', htu: TOKEN_HTU }))
      .send(refresh(bound.body.refresh_token as string));
    expect(stranger.body.error).toBe('invalid_dpop_proof');
  });

  it("binds a public client's refresh token: refused without the key's proof, and not burnt by the attempt", async () => {
    const { sentinel, server, key } = await start();
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID, redirectUri: REDIRECT_URI, codeChallenge: challenge });
    const tokens = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }))
      .send({ grant_type: 'authorization_code', code, client_id: PUBLIC_CLIENT_ID, code_verifier: verifier, redirect_uri: REDIRECT_URI });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('DPoP');
    const form = { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, client_id: PUBLIC_CLIENT_ID };
    const without = await request(server).post(TOKEN_PATH).type('form').send(form);
    expect(without.status).toBe(400);
    expect(without.body.error).toBe('invalid_dpop_proof');
    const other = await clientKey();
    const wrongKey = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(other, { htm: 'POST', htu: TOKEN_HTU }))
      .send(form);
    expect(wrongKey.body.error).toBe('invalid_dpop_proof');
    const right = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }))
      .send(form);
    expect(right.status).toBe(200);
    expect(JSON.parse(Buffer.from((right.body.access_token as string).split('.')[1]!, 'base64url').toString()).sub).toBe(USER_ID);
  });
});

describe('DPoP with atomic grants, UserInfo and client_credentials at the token endpoint', () => {
  const USERINFO_PATH = `/sentinel/api/account/${ACCOUNT}/userinfo`;
  const USERINFO_HTU = `http://localhost${USERINFO_PATH}`;

  /** DPoP-bound tokens of a public client (openid scope) and the key they are bound to. */
  async function boundUserTokens() {
    const started = await start();
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(started.sentinel, {
      clientId: PUBLIC_CLIENT_ID,
      redirectUri: REDIRECT_URI,
      codeChallenge: challenge,
      scope: 'openid',
    });
    const tokens = await request(started.server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(started.key, { htm: 'POST', htu: TOKEN_HTU }))
      .send({ grant_type: 'authorization_code', code, client_id: PUBLIC_CLIENT_ID, code_verifier: verifier, redirect_uri: REDIRECT_URI });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('DPoP');
    return { ...started, tokens: tokens.body as { access_token: string; refresh_token: string } };
  }

  it('UserInfo takes a bound token with the DPoP scheme and a proof for its URL, and refuses it as Bearer', async () => {
    const { server, key, tokens } = await boundUserTokens();
    const token = tokens.access_token;
    const asBearer = await request(server).get(USERINFO_PATH).set('authorization', `Bearer ${token}`);
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers['www-authenticate']).toMatch(/^DPoP /);
    const withoutProof = await request(server).get(USERINFO_PATH).set('authorization', `DPoP ${token}`);
    expect(withoutProof.status).toBe(401);
    expect(withoutProof.body.error).toBe('invalid_dpop_proof');
    const otherURL = await request(server)
      .get(USERINFO_PATH)
      .set('authorization', `DPoP ${token}`)
      .set('DPoP', await dpopProof(key, { htm: 'GET', htu: TOKEN_HTU, ath: ath(token) }));
    expect(otherURL.status).toBe(401);
    expect(otherURL.body.error).toBe('invalid_dpop_proof');
    const other = await clientKey();
    const otherKey = await request(server)
      .get(USERINFO_PATH)
      .set('authorization', `DPoP ${token}`)
      .set('DPoP', await dpopProof(other, { htm: 'GET', htu: USERINFO_HTU, ath: ath(token) }));
    expect(otherKey.status).toBe(401);
    const ok = await request(server)
      .get(USERINFO_PATH)
      .set('authorization', `DPoP ${token}`)
      .set('DPoP', await dpopProof(key, { htm: 'GET', htu: USERINFO_HTU, ath: ath(token) }));
    expect(ok.status).toBe(200);
    expect(ok.body.sub).toBe(USER_ID);
    expect(ok.headers['access-control-expose-headers']).toMatch(/DPoP-Nonce/);
  });

  it('a rotated bound refresh token keeps its binding, and a replay without the key neither rotates nor revokes', async () => {
    const { server, key, tokens } = await boundUserTokens();
    const refresh = (refreshToken: string, proof?: string) => {
      const call = request(server)
        .post(TOKEN_PATH)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: PUBLIC_CLIENT_ID });
      return proof === undefined ? call : call.set('DPoP', proof);
    };
    const first = await refresh(tokens.refresh_token, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }));
    expect(first.status).toBe(200);
    expect(first.body.token_type).toBe('DPoP');
    const rotated = first.body.refresh_token as string;
    // The next generation is bound to the same key.
    expect((await refresh(rotated)).body.error).toBe('invalid_dpop_proof');
    // The spent generation, replayed by someone without the key: refused for the proof, the grant stays live.
    const stolen = await refresh(tokens.refresh_token);
    expect(stolen.body.error).toBe('invalid_dpop_proof');
    const second = await refresh(rotated, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }));
    expect(second.status).toBe(200);
    expect(second.body.token_type).toBe('DPoP');
  });

  it('client_credentials at the account token endpoint binds the app token to the proof key (htu = …/token)', async () => {
    const { server, key } = await start();
    const form = { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
    const wrongURL = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: V2_HTU }))
      .send(form);
    expect(wrongURL.status).toBe(400);
    expect(wrongURL.body.error).toBe('invalid_dpop_proof');
    const bound = await request(server)
      .post(TOKEN_PATH)
      .type('form')
      .set('DPoP', await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }))
      .send(form);
    expect(bound.status).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    const claims = JSON.parse(Buffer.from((bound.body.access_token as string).split('.')[1]!, 'base64url').toString());
    expect(claims.cnf).toEqual({ jkt: key.jkt });
    const plain = await request(server).post(TOKEN_PATH).type('form').send(form);
    expect(plain.body.token_type).toBe('Bearer');
  });
});
