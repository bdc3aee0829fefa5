/**
 * Client ID metadata documents: an https `client_id` read from the URL it names, through the guarded fetcher, over
 * real TLS on loopback (a throwaway certificate the resolver is given as its trust anchor). Every refusal is
 * `invalid_client`: a document that names its URL is told what is wrong with it (and fetched again next time), any
 * other failure gets one description and a few seconds' pause (test/mcp-client-id-metadata-oracle.test.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PRESENCE_TTL_MS } from '../src/guard/app-presence.js';
import { ClientIdMetadataResolver, cacheSecondsOf, DOCUMENT_UNAVAILABLE, FAILURE_RETRY_MS } from '../src/apps/client-id-metadata.js';
import { withClientIdMetadataDocuments } from '../src/apps/resolving-app-store.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { resolveConfig } from '../src/config.js';
import type { AppStore } from '../src/apps/app.js';
import type { ErrorContext } from '../src/hooks.js';
import { contextOf } from '../src/http/context.js';
import { createSentinel, type Sentinel, type SentinelEvent, type SentinelOptions } from '../src/index.js';
import type { TrustedIssuer } from '../src/trusted-issuers/trusted-issuer.js';
import { ACCOUNT, baseOptions, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  signIn,
  startInteraction,
  TOKEN_PATH,
  useRefreshToken,
} from './helpers/direct-flow.js';
import { movableClock } from './helpers/clock.js';
import { type LoopbackTLS, loopbackTLS } from './helpers/loopback-tls.js';
import { pkcePair } from './helpers/pkce.js';
import { INITIAL_ACCESS_TOKEN } from './helpers/registration-client.js';

let tls: LoopbackTLS;
let server: Server;
let origin: string;
/** What the document server answers, per path: status, headers and body, once `held` (if any) has settled. */
const documents = new Map<string, { status?: number; headers?: Record<string, string>; body: string; held?: Promise<void> }>();
let hits = 0;

beforeAll(async () => {
  tls = loopbackTLS();
  server = createServer({ key: tls.key, cert: tls.cert }, async (request, response) => {
    hits += 1;
    const doc = documents.get(request.url ?? '');
    if (doc === undefined) {
      response.writeHead(404).end();
      return;
    }
    await doc.held;
    response.writeHead(doc.status ?? 200, { 'content-type': 'application/json', ...doc.headers }).end(doc.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A resolver with a 1 s fetch deadline, which every failure to retrieve a document waits out. */
function resolverFor(options: { allowPrivateAddresses?: boolean; allow?: string[] } = {}): ClientIdMetadataResolver {
  const config = resolveConfig(
    baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true, ...options }, clientJwks: { timeoutMs: 1000 } }),
  );
  return new ClientIdMetadataResolver(config, { ca: tls.cert });
}

function serve(path: string, doc: Record<string, unknown> | string, headers?: Record<string, string>, status?: number): string {
  documents.set(path, { body: typeof doc === 'string' ? doc : JSON.stringify(doc), headers, status });
  return `${origin}${path}`;
}

describe('resolving a client id metadata document', () => {
  it('makes a public app of it, named by client_name and host', async () => {
    const url = `${origin}/agent.json`;
    serve('/agent.json', { client_id: url, client_name: 'Research Agent', redirect_uris: ['http://127.0.0.1:9999/cb'] });
    const app = await resolverFor().resolve(ACCOUNT, url);
    expect(app).toMatchObject({
      accountId: ACCOUNT,
      clientId: url,
      tokenEndpointAuthMethod: 'none',
      redirectUris: ['http://127.0.0.1:9999/cb'],
      grantTypes: ['authorization_code', 'refresh_token'],
      name: `Research Agent (${new URL(url).host})`,
    });
    expect(app.clientSecretHash).toBeUndefined();
  });

  it('refuses what is no document alike, without fetching it again for a few seconds', async () => {
    const cases: [string, (url: string) => Record<string, unknown> | string, number?][] = [
      ['/big.json', (url) => ({ client_id: url, redirect_uris: ['https://a.example/cb'], pad: 'x'.repeat(6000) })],
      ['/text.json', () => 'not json'],
      ['/array.json', () => '[]'],
      ['/noid.json', () => ({ redirect_uris: ['https://a.example/cb'] })],
      ['/other.json', () => ({ client_id: 'https://elsewhere.example/agent.json', redirect_uris: ['https://a.example/cb'] })],
      ['/redirect.json', () => '', 302],
      ['/gone.json', () => '', 404],
    ];
    const resolver = resolverFor();
    // All at once: each failure waits out the fetch deadline.
    await Promise.all(
      cases.map(async ([path, make, status]) => {
        const url = serve(path, make(`${origin}${path}`), status === 302 ? { location: '/agent.json' } : undefined, status);
        for (let round = 0; round < 2; round++) {
          await expect(resolver.resolve(ACCOUNT, url), path).rejects.toMatchObject({
            code: 'invalid_client',
            description: DOCUMENT_UNAVAILABLE,
          });
        }
      }),
    );
    // Fetched once each: the second round was answered from the pause after a failure.
    const before = hits;
    for (const [path] of cases) await expect(resolver.resolve(ACCOUNT, `${origin}${path}`)).rejects.toThrow(DOCUMENT_UNAVAILABLE);
    expect(hits).toBe(before);
  });

  it('tells what is wrong with a document that names its URL, fetching it anew each time', async () => {
    const cases: [string, (url: string) => Record<string, unknown>, RegExp][] = [
      ['/nouris.json', (url) => ({ client_id: url }), /no redirect_uris/],
      ['/secret.json', (url) => ({ client_id: url, redirect_uris: ['https://a.example/cb'], client_secret: 's' }), /client secret/],
      [
        '/basic.json',
        (url) => ({ client_id: url, redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }),
        /public client/,
      ],
      ['/scheme.json', (url) => ({ client_id: url, redirect_uris: ['javascript:alert(1)'] }), /redirect_uri/],
      ['/bidi.json', (url) => ({ client_id: url, redirect_uris: ['https://a.example/cb'], client_name: 'Bank\u202e' }), /client_name/],
    ];
    const resolver = resolverFor();
    for (const [path, make, reason] of cases) {
      const url = serve(path, make(`${origin}${path}`));
      for (let round = 0; round < 2; round++) {
        const before = hits;
        await expect(resolver.resolve(ACCOUNT, url), path).rejects.toMatchObject({
          code: 'invalid_client',
          description: expect.stringMatching(reason),
        });
        // Fetched again the second time: an invalid document is never kept (the draft).
        expect(hits, path).toBe(before + 1);
      }
    }
  });

  it('refuses loopback and private addresses unless allowPrivateAddresses, and URLs the draft forbids', async () => {
    const url = serve('/agent2.json', { client_id: `${origin}/agent2.json`, redirect_uris: ['https://a.example/cb'] });
    const before = hits;
    // Without a port (outside development a client_id URL may not name one): the address alone is refused.
    await expect(resolverFor({ allowPrivateAddresses: false }).resolve(ACCOUNT, 'https://127.0.0.1/agent2.json')).rejects.toMatchObject({
      code: 'invalid_client',
      description: DOCUMENT_UNAVAILABLE,
    });
    expect(hits).toBe(before);
    const resolver = resolverFor();
    for (const bad of [
      `${origin}/`,
      `${origin}/a.json#x`,
      `https://user@127.0.0.1:1/a.json`,
      `${origin}/x/../a.json`,
      'https://EXAMPLE.com/a.json',
    ]) {
      await expect(resolver.resolve(ACCOUNT, bad), bad).rejects.toMatchObject({ code: 'invalid_client' });
    }
    await expect(resolverFor({ allow: ['agents.example.com'] }).resolve(ACCOUNT, url)).rejects.toMatchObject({
      description: expect.stringMatching(/not on the list/),
    });
  });

  it('refuses a client_id URL whose host does not resolve as invalid_client, not a server error', async () => {
    // A host name the resolver refuses at once (EINVAL: longer than a DNS name may be), so the test needs no network.
    const host = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.example`;
    await expect(resolverFor({ allowPrivateAddresses: false }).resolve(ACCOUNT, `https://${host}/client.json`)).rejects.toMatchObject({
      code: 'invalid_client',
      description: DOCUMENT_UNAVAILABLE,
    });
  });

  it('keeps a document as its caching headers say, at most 24 hours', async () => {
    expect(cacheSecondsOf({ 'cache-control': 'public, max-age=600' })).toBe(600);
    expect(cacheSecondsOf({ 'cache-control': 'max-age=999999' })).toBe(86_400);
    expect(cacheSecondsOf({ 'cache-control': 'no-store' })).toBe(0);
    expect(cacheSecondsOf({ 'cache-control': 'no-cache, max-age=60' })).toBe(0);
    expect(cacheSecondsOf({})).toBe(300);
    // What a cache in front of the document has already held counts (RFC 9111 §4.2.3): Age is taken off, down to 0.
    expect(cacheSecondsOf({ 'cache-control': 'max-age=86400', age: '86399' })).toBe(1);
    expect(cacheSecondsOf({ 'cache-control': 'max-age=600', age: '900' })).toBe(0);
    expect(cacheSecondsOf({ 'cache-control': 'max-age=999999', age: '100' })).toBe(86_400);
    const date = new Date(Date.now() - 10_000).toUTCString();
    const expires = new Date(Date.now() + 590_000).toUTCString();
    expect(cacheSecondsOf({ date, expires, age: '300' })).toBeCloseTo(300, -1);
    expect(cacheSecondsOf({ expires, age: '300' })).toBeCloseTo(290, -1);
    // Expires is a time: the seconds since Date are no extra age on top of an Age that covers them.
    expect(cacheSecondsOf({ date, expires, age: '5' })).toBeCloseTo(590, -1);
    // An Age that is not a non-negative integer is ignored (§5.1).
    for (const age of ['-5', '1.5', 'abc', '']) expect(cacheSecondsOf({ 'cache-control': 'max-age=600', age }), age).toBe(600);
    const cached = serve(
      '/cached.json',
      { client_id: `${origin}/cached.json`, redirect_uris: ['https://a.example/cb'] },
      { 'cache-control': 'max-age=60' },
    );
    const uncached = serve(
      '/uncached.json',
      { client_id: `${origin}/uncached.json`, redirect_uris: ['https://a.example/cb'] },
      { 'cache-control': 'no-store' },
    );
    const resolver = resolverFor();
    let before = hits;
    await resolver.resolve(ACCOUNT, cached);
    await resolver.resolve(ACCOUNT, cached);
    expect(hits).toBe(before + 1);
    before = hits;
    await resolver.resolve(ACCOUNT, uncached);
    await resolver.resolve(ACCOUNT, uncached);
    expect(hits).toBe(before + 2);
  });

  it('keeps nothing whose stated freshness is invalid: a max-age that is no number, an Expires that is no date', async () => {
    // RFC 9111 §4.2.1: invalid freshness information is stale; §5.3: an invalid Expires is "already expired".
    for (const control of ['max-age=-1', 'max-age=abc', 'max-age=1.5', 'max-age', 'max-age=', 'public, max-age="soon"']) {
      expect(cacheSecondsOf({ 'cache-control': control }), control).toBe(0);
    }
    for (const expires of ['never', '', '-1', '0', '2099', 'Thu, 01 Jan 2099', '2099-01-01T00:00:00Z']) {
      expect(cacheSecondsOf({ expires }), expires).toBe(0);
    }
    // max-age wins over an Expires, valid or not (§5.3), and the quoted form of a number is read (§5.2).
    expect(cacheSecondsOf({ 'cache-control': 'max-age=600', expires: 'never' })).toBe(600);
    expect(cacheSecondsOf({ 'cache-control': 'max-age="600"' })).toBe(600);
    // Every form of an HTTP-date (RFC 9110 §5.6.7) is one, asctime's read as GMT.
    const date = new Date(Date.now() - 1000);
    const expires = new Date(date.getTime() + 600_000);
    const weekday = expires.toUTCString().slice(0, 3);
    const long = { Mon: 'Monday', Tue: 'Tuesday', Wed: 'Wednesday', Thu: 'Thursday', Fri: 'Friday', Sat: 'Saturday', Sun: 'Sunday' };
    const [, dd, mon, yyyy, time] = expires.toUTCString().split(' ') as string[];
    const forms = [
      expires.toUTCString(),
      `${long[weekday as keyof typeof long]}, ${dd}-${mon}-${String(yyyy).slice(2)} ${time} GMT`,
      `${weekday} ${mon} ${String(Number(dd)).padStart(2, ' ')} ${time} ${yyyy}`,
    ];
    for (const form of forms) expect(cacheSecondsOf({ date: date.toUTCString(), expires: form }), form).toBeCloseTo(600, -1);
    // Served so, a document is fetched every time, as with no-store.
    const url = serve(
      '/expires-never.json',
      { client_id: `${origin}/expires-never.json`, redirect_uris: ['https://a.example/cb'] },
      { expires: 'never' },
    );
    const resolver = resolverFor();
    const before = hits;
    await resolver.resolve(ACCOUNT, url);
    await resolver.resolve(ACCOUNT, url);
    expect(hits).toBe(before + 2);
  });
});

describe('the service with client ID metadata documents', () => {
  it('advertises them, resolves through the app lookup, and shows the host on the login page', async () => {
    const url = serve('/login-agent.json', {
      client_id: `${origin}/login-agent.json`,
      client_name: 'Research Agent',
      redirect_uris: ['http://127.0.0.1:9999/cb'],
    });
    const options = baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true } });
    const sentinel = createSentinel(options);
    const metadata = await call(sentinel, { path: `/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}` });
    expect(jsonOf(metadata).client_id_metadata_document_supported).toBe(true);
    const off = createSentinel(baseOptions());
    expect(jsonOf(await call(off, { path: `/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}` }))).not.toHaveProperty(
      'client_id_metadata_document_supported',
    );
    // The service's own resolver has no test trust anchor: the same wrapper, built on a resolver given the test's
    // certificate, stands in for it (the service wraps its store exactly so when the option is on).
    const apps = withClientIdMetadataDocuments(
      new MemoryAppStore(sentinel.config.apps),
      new ClientIdMetadataResolver(sentinel.config, { ca: tls.cert }),
    );
    const tested = createSentinel({ ...baseOptions(), apps: [], appStore: apps });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: url,
      redirect_uri: 'http://127.0.0.1:9999/cb',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const started = await call(tested, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query });
    expect(started.status).toBe(302);
    const login = await call(tested, {
      path: String(started.headers.location)
        .replace(/^https?:\/\/[^/]+/, '')
        .split('?')[0] as string,
      query: new URL(String(started.headers.location), 'http://x').searchParams,
    });
    expect(login.body).toContain(`Research Agent (${new URL(url).host})`);
    // PKCE is required of such a client: it is public.
    query.delete('code_challenge');
    query.delete('code_challenge_method');
    const noPkce = await call(tested, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query });
    expect(new URL(String(noPkce.headers.location)).searchParams.get('error')).toBe('invalid_request');
    // A redirect URI the document does not list is refused on the page, never redirected to.
    query.set('redirect_uri', 'http://127.0.0.1:9999/other');
    const wrong = await call(tested, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query });
    expect(wrong.status).toBe(400);
    // And with the feature off, an https client id is just an unknown client.
    const unknown = await call(off, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query: new URLSearchParams({ client_id: url }) });
    expect(unknown.status).toBe(401);
  });
});

describe('the registry behind the document wrapper', () => {
  it('keeps every method of the registry, bound to it, but the lookups it overrides', async () => {
    /** A class registry, like PostgresAppStore: its methods read its own fields, and it has some of its own. */
    class Registry extends MemoryAppStore {
      readonly issuers: TrustedIssuer[] = [{ accountId: ACCOUNT, issuer: 'https://brand.example.com', jwks: { keys: [] } }];
      findTrustedIssuers(accountId: string): TrustedIssuer[] {
        return this.issuers.filter((entry) => entry.accountId === accountId);
      }
      close(): this {
        return this;
      }
    }
    const options = baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true } });
    const registry = new Registry(resolveConfig(options).apps);
    const apps = withClientIdMetadataDocuments(registry, new ClientIdMetadataResolver(resolveConfig(options), { ca: tls.cert }));
    const clientId = resolveConfig(options).apps[0]?.clientId as string;
    expect(await apps.findTrustedIssuers?.(ACCOUNT)).toEqual(registry.issuers);
    expect((apps as unknown as Registry).close()).toBe(registry);
    expect(await apps.disableApp?.(ACCOUNT, clientId)).toBe(true);
    expect(await apps.findApp(ACCOUNT, clientId)).toBeNull();
    expect(await apps.enableApp?.(ACCOUNT, clientId)).toBe(true);
    expect((await apps.findApp(ACCOUNT, clientId))?.clientId).toBe(clientId);
    // findApp is still the wrapper's: a document URL is resolved, not looked up in the registry.
    const url = serve('/wrapped-agent.json', { client_id: `${origin}/wrapped-agent.json`, redirect_uris: [AGENT_CALLBACK] });
    expect((await apps.findApp(ACCOUNT, url))?.tokenEndpointAuthMethod).toBe('none');
    // And the service built with the option on keeps the in-memory registry's disable and enable.
    const service = contextOf(createSentinel(options)).apps;
    expect([typeof service.disableApp, typeof service.enableApp]).toEqual(['function', 'function']);
  });
});

/** The agent's redirect URI in the documents below. */
const AGENT_CALLBACK = 'http://127.0.0.1:9999/cb';

/**
 * The service with documents enabled, over a registry the test can make fail (`registry.failing`): the wrapper the
 * service builds, on a resolver given the test's certificate (as in the test above).
 */
function serviceWithDocuments(overrides: Partial<SentinelOptions> = {}): { sentinel: Sentinel; registry: { failing: boolean } } {
  const options = baseOptions({ clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true }, ...overrides });
  const config = createSentinel(options).config;
  const memory = new MemoryAppStore(config.apps);
  const registry = { failing: false };
  const own: AppStore = {
    findApp: (accountId, clientId) => memory.findApp(accountId, clientId),
    hasAccount: async (accountId) => {
      if (registry.failing) throw new Error('the registry is down');
      return memory.hasAccount(accountId);
    },
  };
  const apps = withClientIdMetadataDocuments(own, new ClientIdMetadataResolver(config, { ca: tls.cert }));
  const { clientIdMetadataDocuments: _documents, ...rest } = options;
  const sentinel = createSentinel({ ...rest, apps: [], appStore: apps });
  // Built without the option so that it does not wrap `apps` again (with a resolver lacking the test's trust anchor);
  // its config then says documents are on, as the service's own would, for the paths that ask it (logout, end_session).
  (contextOf(sentinel).config.clientIdMetadataDocuments as { enabled: boolean }).enabled = true;
  return { sentinel, registry };
}

/**
 * The agent (client id `url`) signs the user in through a fresh browser, asking for `scope`: the code, its PKCE
 * verifier and the browser's session cookie.
 */
async function agentCode(
  sentinel: Sentinel,
  url: string,
  scope?: string,
): Promise<{ code: string; verifier: string; sessionCookie: string }> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({
    client_id: url,
    redirect_uri: AGENT_CALLBACK,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(scope === undefined ? {} : { scope }),
  });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const session = setCookies(login).find((line) => line.startsWith('sentinel_session=')) as string;
  return {
    code: new URL(String(login.headers.location)).searchParams.get('code') as string,
    verifier,
    sessionCookie: session.slice('sentinel_session='.length).split(';')[0] as string,
  };
}

/** The agent (a public client, client id `url`) exchanges `code`, sending `headers` (a DPoP proof) with it. */
function exchangeAgentCode(sentinel: Sentinel, url: string, code: string, verifier: string, headers: Record<string, string> = {}) {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: AGENT_CALLBACK,
      client_id: url,
    }).toString(),
    { headers },
  );
}

/**
 * The agent (client id `url`) signs the user in through a fresh browser and exchanges its code; with `exchange`, it
 * asks for `scope` and sends `headers` (a DPoP proof) with the exchange.
 */
async function agentSignIn(
  sentinel: Sentinel,
  url: string,
  exchange: { scope?: string; headers?: Record<string, string> } = {},
): Promise<{ sessionCookie: string; accessToken: string; refreshToken: string; idToken: string | undefined }> {
  const { code, verifier, sessionCookie } = await agentCode(sentinel, url, exchange.scope);
  const exchanged = await exchangeAgentCode(sentinel, url, code, verifier, exchange.headers);
  expect(exchanged.status, exchanged.body).toBe(200);
  return {
    sessionCookie,
    accessToken: jsonOf(exchanged).access_token as string,
    refreshToken: jsonOf(exchanged).refresh_token as string,
    idToken: jsonOf(exchanged).id_token as string | undefined,
  };
}

/** An agent's DPoP key under ES384, a proof algorithm outside the FAPI 2.0 ones, and proofs signed by it. */
async function es384Agent(): Promise<{ proof: (htm: string, htu: string, accessToken?: string) => Promise<string> }> {
  const { privateKey, publicKey } = await generateKeyPair('ES384', { extractable: true });
  const jwk = await exportJWK(publicKey);
  return {
    proof: (htm, htu, accessToken) =>
      new SignJWT({
        jti: randomUUID(),
        iat: Math.floor(Date.now() / 1000),
        htm,
        htu,
        ...(accessToken === undefined ? {} : { ath: createHash('sha256').update(accessToken).digest('base64url') }),
      })
        .setProtectedHeader({ alg: 'ES384', typ: 'dpop+jwt', jwk })
        .sign(privateKey),
  };
}

/** Serves an agent's document (kept by nobody, so every lookup fetches it) and returns its URL. */
function serveAgent(path: string): string {
  return serve(
    path,
    { client_id: `${origin}${path}`, client_name: 'Research Agent', redirect_uris: [AGENT_CALLBACK] },
    { 'cache-control': 'no-store' },
  );
}

describe('a client whose metadata document becomes unavailable', () => {
  it('does not stop "sign out everywhere": every session ends, and the registered app gets no token more', async () => {
    const { sentinel } = serviceWithDocuments();
    const url = serveAgent('/everywhere-agent.json');
    await agentSignIn(sentinel, url);
    const browser = await signIn(sentinel);
    const refreshToken = jsonOf(await exchangeCode(sentinel, browser.code, browser.verifier)).refresh_token as string;
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(2);
    documents.set('/everywhere-agent.json', { status: 503, body: '' });
    const before = hits;
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(2);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    // Ending a session never asks the agent's host: its document cannot name a back-channel logout URI.
    expect(hits).toBe(before);
    expect((await useRefreshToken(sentinel, refreshToken)).status).toBe(400);
  });

  it('does not stop a logout, and its document admits no cross-site logout and no return to the agent', async () => {
    const { sentinel } = serviceWithDocuments();
    const url = serveAgent('/logout-agent.json');
    const logout = (sessionCookie: string, headers: Record<string, string>) =>
      postForm(
        sentinel,
        `${ACCOUNT_PATH}/logout`,
        new URLSearchParams({ client_id: url, post_logout_redirect_uri: AGENT_CALLBACK }).toString(),
        {
          headers: { cookie: `sentinel_session=${sessionCookie}`, ...headers },
        },
      );
    // The document lists the agent's origin, but anyone can publish a document naming their own: not a proof.
    const first = await agentSignIn(sentinel, url);
    let before = hits;
    const crossSite = await logout(first.sessionCookie, { 'sec-fetch-site': 'cross-site', origin: new URL(AGENT_CALLBACK).origin });
    expect(crossSite.status).toBe(403);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(1);
    const sameOrigin = await logout(first.sessionCookie, { 'sec-fetch-site': 'same-origin' });
    expect(sameOrigin.status).toBe(200);
    expect(setCookies(sameOrigin).some((line) => line.startsWith('sentinel_session=;'))).toBe(true);
    expect(hits).toBe(before);
    // While the document is unavailable, the sign-out goes through all the same.
    const second = await agentSignIn(sentinel, url);
    documents.set('/logout-agent.json', { status: 503, body: '' });
    before = hits;
    const unavailable = await logout(second.sessionCookie, { 'sec-fetch-site': 'same-origin' });
    expect(unavailable.status).toBe(200);
    expect(setCookies(unavailable).some((line) => line.startsWith('sentinel_session=;'))).toBe(true);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(hits).toBe(before);
  });

  it('does not stop the account page, which shows the agent by its URL without fetching the document', async () => {
    const { sentinel } = serviceWithDocuments({ account: { enabled: true } });
    const url = serveAgent('/account-agent.json');
    const { sessionCookie } = await agentSignIn(sentinel, url);
    const page = () => call(sentinel, { path: `${ACCOUNT_PATH}/account`, headers: { cookie: `sentinel_session=${sessionCookie}` } });
    let before = hits;
    const available = await page();
    expect(available.status).toBe(200);
    expect(available.body).toContain(url);
    expect(hits).toBe(before);
    documents.delete('/account-agent.json');
    before = hits;
    const gone = await page();
    expect(gone.status).toBe(200);
    expect(gone.body).toContain(url);
    expect(hits).toBe(before);
  });

  it('at end_session, returns to the agent only beside an ID token it got, and signs out while its document is down', async () => {
    const { sentinel } = serviceWithDocuments();
    const url = serveAgent('/end-session-agent.json');
    const endSession = (query: Record<string, string>, sessionCookie?: string) =>
      call(sentinel, {
        path: `${ACCOUNT_PATH}/end_session`,
        query: new URLSearchParams(query),
        headers: sessionCookie === undefined ? {} : { cookie: `sentinel_session=${sessionCookie}` },
      });
    // The document lists the address, but anyone can publish one: without an ID token it is no redirector.
    const unconfirmed = await endSession({ client_id: url, post_logout_redirect_uri: AGENT_CALLBACK, state: 's' });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.headers.location).toBeUndefined();
    // With the document down, the user still gets the page that signs them out, not an error.
    const { sessionCookie } = await agentSignIn(sentinel, url);
    documents.set('/end-session-agent.json', { status: 503, body: '' });
    const confirmation = await endSession({ client_id: url, post_logout_redirect_uri: AGENT_CALLBACK }, sessionCookie);
    expect(confirmation.status).toBe(200);
    expect(String(confirmation.body)).toContain('name="confirmation"');
  });

  it("at end_session, returns to the document's post_logout_redirect_uris only, when it lists them", async () => {
    const { sentinel } = serviceWithDocuments();
    const path = '/logout-list-agent.json';
    const bye = 'http://127.0.0.1:9999/bye';
    const url = serve(
      path,
      { client_id: `${origin}${path}`, redirect_uris: [AGENT_CALLBACK], post_logout_redirect_uris: [bye] },
      { 'cache-control': 'no-store' },
    );
    const endSession = async (returnTo: string, withSession = true) => {
      const { idToken, sessionCookie } = await agentSignIn(sentinel, url, { scope: 'openid' });
      expect(idToken).toBeTypeOf('string');
      const query = { id_token_hint: idToken as string, post_logout_redirect_uri: returnTo, state: 's' };
      const headers: Record<string, string> = withSession ? { cookie: `sentinel_session=${sessionCookie}` } : {};
      return call(sentinel, { path: `${ACCOUNT_PATH}/end_session`, query: new URLSearchParams(query), headers });
    };
    const listed = await endSession(bye);
    expect(listed.status, listed.body).toBe(303);
    expect(listed.headers.location).toBe(`${bye}?state=s`);
    // A browser without the session is sent nowhere by itself: anyone who publishes a document can sign in to their
    // own agent once, and its ID token (whose expiry a hint does not need) would make this an open redirector for
    // every link they send. The page offers the way back as a link naming the host.
    const unasked = await endSession(bye, false);
    expect(unasked.status, unasked.body).toBe(200);
    expect(unasked.headers.location).toBeUndefined();
    expect(unasked.body).toContain(`<a href="${bye}?state=s" rel="noreferrer">`);
    expect(unasked.body).toContain('127.0.0.1:9999');
    // The list is the document's answer to where a logout may return: its redirect URIs are not, once it has one.
    const redirectUri = await endSession(AGENT_CALLBACK);
    expect(redirectUri.status).toBe(400);
    expect(redirectUri.headers.location).toBeUndefined();
    // A list holding what a redirect URI may not be is a document refused, as a bad redirect_uris is.
    for (const bad of [['https://agent.example/bye#x'], 'https://agent.example/bye', ['com.example.agent:/bye']]) {
      serve(path, { client_id: url, redirect_uris: [AGENT_CALLBACK], post_logout_redirect_uris: bad }, { 'cache-control': 'no-store' });
      const refused = await Promise.resolve(contextOf(sentinel).apps.findApp(ACCOUNT, url)).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused, JSON.stringify(bad)).toMatchObject({ code: 'invalid_client' });
      expect(String((refused as Error).message), JSON.stringify(bad)).toMatch(/post_logout_redirect_uris/);
    }
  });

  it('honours the demands a document makes of its own requests: DPoP proofs, pushed authorization requests', async () => {
    const { sentinel } = serviceWithDocuments();
    const agentDocument = (path: string, demands: Record<string, unknown>) =>
      serve(path, { client_id: `${origin}${path}`, redirect_uris: [AGENT_CALLBACK], ...demands }, { 'cache-control': 'no-store' });
    // dpop_bound_access_tokens (RFC 9449 §5.2): a token request without a proof is refused, one with a proof is bound.
    const dpopAgent = agentDocument('/dpop-demand-agent.json', { dpop_bound_access_tokens: true });
    const unproved = await agentCode(sentinel, dpopAgent);
    const refused = await exchangeAgentCode(sentinel, dpopAgent, unproved.code, unproved.verifier);
    expect(refused.status).toBe(400);
    expect(jsonOf(refused).error).toBe('invalid_dpop_proof');
    const proved = await agentCode(sentinel, dpopAgent);
    const agent = await es384Agent();
    const bound = await exchangeAgentCode(sentinel, dpopAgent, proved.code, proved.verifier, {
      dpop: await agent.proof('POST', `http://localhost${TOKEN_PATH}`),
    });
    expect(bound.status, bound.body).toBe(200);
    expect(jsonOf(bound).token_type).toBe('DPoP');
    // require_pushed_authorization_requests (RFC 9126 §6): an authorization request in the URL is refused.
    const parAgent = agentDocument('/par-demand-agent.json', { require_pushed_authorization_requests: true });
    const { challenge } = pkcePair();
    const direct = await call(sentinel, {
      path: `${ACCOUNT_PATH}/authorize`,
      query: authorizeQuery({
        client_id: parAgent,
        redirect_uri: AGENT_CALLBACK,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    });
    // On the service's error page, not by a redirect: no operator vetted the document's redirect URIs (RFC 9700
    // §4.11.2). The page's one link is the error response the agent would have had.
    expect(direct.status).toBe(400);
    expect(direct.headers.location).toBeUndefined();
    const location = new URL(String(/<a href="([^"]*)"/.exec(String(direct.body))?.[1]).replaceAll('&amp;', '&'));
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/push/);
    // Pushed first (RFC 9126 §2, a public client naming itself), the same request signs the user in.
    const pushed = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/par`,
      new URLSearchParams({
        client_id: parAgent,
        response_type: 'code',
        redirect_uri: AGENT_CALLBACK,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString(),
    );
    expect(pushed.status, pushed.body).toBe(201);
    const viaPar = new URLSearchParams({ client_id: parAgent, request_uri: jsonOf(pushed).request_uri as string });
    expect((await startInteraction(sentinel, viaPar)).interaction).toBeTypeOf('string');
    // A demand that is not a boolean is a document refused, not a demand dropped.
    const vague = agentDocument('/vague-demand-agent.json', { dpop_bound_access_tokens: 'yes' });
    const answer = await Promise.resolve(contextOf(sentinel).apps.findApp(ACCOUNT, vague)).then(
      () => null,
      (error: unknown) => error,
    );
    expect(answer).toMatchObject({ code: 'invalid_client' });
    expect(String((answer as Error).message)).toMatch(/dpop_bound_access_tokens/);
  });

  it('checks a DPoP proof outside the FAPI 2.0 algorithms without fetching the document: no 503 once it is gone', async () => {
    const errors: unknown[] = [];
    const { sentinel } = serviceWithDocuments({ onError: (error) => errors.push(error) });
    const url = serveAgent('/dpop-guard-agent.json');
    const agent = await es384Agent();
    const { accessToken } = await agentSignIn(sentinel, url, {
      headers: { dpop: await agent.proof('POST', `http://localhost${TOKEN_PATH}`) },
    });
    const guarded = async () =>
      sentinel.checkBearer(
        `DPoP ${accessToken}`,
        {},
        {
          method: 'GET',
          url: '/api/x',
          headers: { host: 'api.example.com', dpop: await agent.proof('GET', 'http://api.example.com/api/x', accessToken) },
        },
      );
    let before = hits;
    expect((await guarded()).ok).toBe(true);
    // The presence check alone reads the document; the proof's algorithm needs no profile of it.
    expect(hits - before).toBe(1);
    before = hits;
    expect((await guarded()).ok).toBe(true);
    expect(hits).toBe(before);
    // Gone while the guard still trusts the app to exist: the token is treated as every other of a present app.
    documents.set('/dpop-guard-agent.json', { status: 404, body: '' });
    expect((await guarded()).ok).toBe(true);
    expect(errors).toEqual([]);
  });

  it('never answers invalid_client at UserInfo for a DPoP-bound token of an agent whose document is gone', async () => {
    const errors: [unknown, ErrorContext][] = [];
    const { sentinel } = serviceWithDocuments({ onError: (error, context) => errors.push([error, context]) });
    const url = serveAgent('/dpop-userinfo-agent.json');
    const agent = await es384Agent();
    const { accessToken } = await agentSignIn(sentinel, url, {
      scope: 'openid',
      headers: { dpop: await agent.proof('POST', `http://localhost${TOKEN_PATH}`) },
    });
    const path = `${ACCOUNT_PATH}/userinfo`;
    const userinfo = async () =>
      call(sentinel, {
        path,
        headers: { authorization: `DPoP ${accessToken}`, dpop: await agent.proof('GET', `http://localhost${path}`, accessToken) },
      });
    expect((await userinfo()).status).toBe(200);
    documents.set('/dpop-userinfo-agent.json', { status: 404, body: '' });
    // While the app is still known present, the token is good (as at the guard); once that lapses, it is refused
    // as a resource refuses a token (RFC 6750 §3.1), never with the token endpoint's invalid_client and Basic.
    const cached = await userinfo();
    expect(cached.status, String(cached.body)).toBe(200);
    expect(jsonOf(cached).sub).toBe(USER_ID);
    const clock = movableClock();
    try {
      await clock.advance(PRESENCE_TTL_MS + 1000);
      const lapsed = await userinfo();
      expect(lapsed.status).toBe(401);
      expect(jsonOf(lapsed).error).toBe('invalid_token');
      expect(String(lapsed.headers['www-authenticate'])).toMatch(/^(Bearer|DPoP) .*error="invalid_token"/);
    } finally {
      clock.restore();
    }
    // The operator hears of the document once; nothing failed on our side.
    expect(errors.map(([error, context]) => [(error as Error).name, context.route])).toEqual([
      ['DocumentRetrievalError', 'client-id-metadata'],
    ]);
  });

  it("makes the agent's tokens stop at the guard like a deleted app's, while a failure of the registry stays a 503", async () => {
    const errors: [unknown, ErrorContext][] = [];
    const { sentinel, registry } = serviceWithDocuments({ onError: (error, context) => errors.push([error, context]) });
    const url = serveAgent('/guard-agent.json');
    const { accessToken } = await agentSignIn(sentinel, url);
    for (const status of [503, 404]) {
      documents.set('/guard-agent.json', { status, body: '' });
      const refused = await sentinel.checkBearer(`Bearer ${accessToken}`);
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.response.status, String(status)).toBe(401);
        expect(JSON.parse(String(refused.response.body)).error).toBe('invalid_token');
      }
    }
    // The operator hears of the document (once: the second check came within the pause after the failure).
    expect(errors.map(([, context]) => context.route)).toEqual(['client-id-metadata']);
    // Our own registry failing is not the agent's doing: the token is neither accepted nor called invalid.
    serveAgent('/guard-agent.json');
    registry.failing = true;
    const unavailable = await sentinel.checkBearer(`Bearer ${accessToken}`);
    expect(unavailable.ok ? 200 : unavailable.response.status).toBe(503);
    expect(errors.map(([, context]) => context.route)).toEqual(['client-id-metadata', 'bearer']);
    registry.failing = false;
    const clock = movableClock();
    try {
      await clock.advance(FAILURE_RETRY_MS + 1);
      expect((await sentinel.checkBearer(`Bearer ${accessToken}`)).ok).toBe(true);
    } finally {
      clock.restore();
    }
  });
});

describe('a guard while every document fetch slot is taken', () => {
  it("answers an agent's token 503, not invalid_token: the service is busy, the agent did nothing wrong", async () => {
    const errors: [unknown, ErrorContext][] = [];
    const { sentinel } = serviceWithDocuments({
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true, maxConcurrentFetches: 1 },
      onError: (error, context) => errors.push([error, context]),
    });
    const url = serveAgent('/busy-guard-agent.json');
    const { accessToken } = await agentSignIn(sentinel, url);
    // Someone else's document, slow to come, holds the one slot.
    let answer = (): void => {};
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const slowUrl = `${origin}/slow-agent.json`;
    documents.set('/slow-agent.json', { body: JSON.stringify({ client_id: slowUrl, redirect_uris: [AGENT_CALLBACK] }), held });
    const before = hits;
    const slow = contextOf(sentinel).apps.findApp(ACCOUNT, slowUrl);
    await vi.waitFor(() => expect(hits).toBe(before + 1));
    try {
      // The agent's document (kept by nobody) cannot be fetched now: its token is not called invalid, and the agent
      // is told to come back.
      const busy = await sentinel.checkBearer(`Bearer ${accessToken}`);
      expect(busy.ok ? 200 : busy.response.status).toBe(503);
      if (!busy.ok) expect(busy.response.headers['retry-after']).toBe('1');
      await expect(sentinel.verifyAccessToken(accessToken)).rejects.toMatchObject({ code: 'temporarily_unavailable', status: 503 });
    } finally {
      answer();
      await slow;
    }
    // onError heard of the saturation once, from the lookup, not once per refused presentation.
    expect(errors.map(([error, context]) => [String(error), context.route])).toEqual([
      [expect.stringContaining('maxConcurrentFetches'), 'client-id-metadata'],
    ]);
    // The slot is back: the same token passes.
    await vi.waitFor(async () => expect((await sentinel.checkBearer(`Bearer ${accessToken}`)).ok).toBe(true));
  });
});

describe('the RFC 7592 endpoints with a document URL as the client id', () => {
  it('refuse it as an unknown client, with the same event, and never fetch the URL', async () => {
    const events: SentinelEvent[] = [];
    const errors: unknown[] = [];
    const options = baseOptions({
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
      clientJwks: { timeoutMs: 1000 },
      registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
    });
    // As serviceWithDocuments builds it, over the whole in-memory registry that registration needs.
    const config = createSentinel(options).config;
    const apps = withClientIdMetadataDocuments(new MemoryAppStore(config.apps), new ClientIdMetadataResolver(config, { ca: tls.cert }));
    const { clientIdMetadataDocuments: _documents, ...rest } = options;
    const sentinel = createSentinel({ ...rest, apps: [], appStore: apps });
    (contextOf(sentinel).config.clientIdMetadataDocuments as { enabled: boolean }).enabled = true;
    // A served document (an agent that exists), one that is not (a 404), and one on a host that does not resolve:
    // none holds a registration access token, so each is refused as an id the registry does not know.
    const ids = [
      'no-such-client',
      serveAgent('/managed-agent.json'),
      `${origin}/unserved-agent.json`,
      'https://unresolvable.invalid/x.json',
    ];
    const requests: [string, string, string?][] = [
      ['GET', ''],
      ['PUT', '', '{"redirect_uris":["https://a.example/cb"]}'],
      ['DELETE', ''],
      ['POST', '/secret'],
    ];
    const before = hits;
    for (const clientId of ids) {
      for (const [method, suffix, body] of requests) {
        const response = await call(sentinel, {
          method,
          path: `${ACCOUNT_PATH}/register/${encodeURIComponent(clientId)}${suffix}`,
          headers: { authorization: 'Bearer wrong-registration-access-token', 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body }),
        });
        expect([response.status, jsonOf(response).error], `${method} ${clientId}${suffix}`).toEqual([401, 'invalid_token']);
        expect(String(response.headers['www-authenticate'])).toBe('Bearer realm="sentinel", error="invalid_token"');
      }
    }
    expect(hits).toBe(before);
    expect(errors).toEqual([]);
    const denied = events.filter((event) => event.type === 'registration.denied');
    expect(denied.map((event) => (event as { clientId?: string }).clientId)).toEqual(ids.flatMap((id) => requests.map(() => id)));
  });
});
