/**
 * Two sentinel-idp *processes* (examples/multi-instance/server.ts, as a user runs them) sharing one real Redis and
 * the same signing key, plus the example's round-robin proxy in front: a code issued through A is redeemed at B and
 * its replay at A refused; a session made at A is honoured at B; 50 concurrent redemptions of one code spread over
 * both give exactly one token; a consumer-bound token from A opens B's guarded API; the whole browser flow works
 * through the proxy while every step lands on another instance.
 *
 * Skipped (with the reason printed) when no Redis answers at REDIS_URL, unless SENTINEL_REQUIRE_REDIS=1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_ID } from '../examples/multi-instance/account.js';
import { createRoundRobinProxy } from '../examples/multi-instance/proxy.js';
import { DEMO_CONSUMERS } from '../examples/shared/brand-tokens.js';
import { generateClientSecret, generatePrivateJWK } from '../src/index.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('multi-instance');

const FORM = 'application/x-www-form-urlencoded;charset=UTF-8';
const ACCOUNT_PATH = `/sentinel/api/account/${ACCOUNT_ID}`;
const USERNAME = 'demo';

interface Instance {
  name: string;
  base: string;
  child: ChildProcess;
}

/**
 * Starts one instance of the example as its own process on a port the system picks (PORT=0), and waits for its
 * "listening on <url>" line, which names the port.
 */
async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/multi-instance/server.ts'], {
    cwd: process.cwd(),
    env: { ...process.env, ...env, INSTANCE: name, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${name} did not start:\n${output}`)), 30_000);
    child.stdout?.on('data', () => {
      const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (listening?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance ${name} exited with ${code}:\n${output}`));
    });
  });
  return { name, base, child };
}

function stopInstance(instance: Instance | undefined): Promise<void> {
  if (instance === undefined || instance.child.exitCode !== null || instance.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    instance.child.once('exit', () => resolve());
    instance.child.kill('SIGTERM');
  });
}

/** A browser's cookie jar over fetch, one per simulated device; redirects are followed by hand. */
class Browser {
  readonly #cookies = new Map<string, string>();

  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.#keep(await fetch(url, { redirect: 'manual', headers: { ...headers, cookie: this.cookieHeader() } }));
  }

  async post(url: string, form: Record<string, string>): Promise<Response> {
    return this.#keep(
      await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        // A browser submitting the login form of the same origin says so (Fetch Metadata).
        headers: { 'content-type': FORM, 'sec-fetch-site': 'same-origin', cookie: this.cookieHeader() },
        body: new URLSearchParams(form),
      }),
    );
  }

  has(name: string): boolean {
    return this.#cookies.has(name);
  }

  cookieHeader(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  #keep(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const mark = pair.indexOf('=');
      const name = pair.slice(0, mark).trim();
      const value = pair.slice(mark + 1).trim();
      if (value === '' || attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return response;
  }
}

function location(response: Response): URL {
  const value = response.headers.get('location');
  expect(value, `a Location header (status ${response.status})`).toBeTruthy();
  return new URL(value as string, 'http://relative.invalid');
}

describe.skipIf(redis.skip)('two instances (separate processes) on one Redis', () => {
  const prefix = `sentinel-multi-test:${randomBytes(8).toString('hex')}:`;
  const clientId = randomUUID();
  const clientSecret = generateClientSecret();
  const password = randomBytes(12).toString('base64url');
  let issuer = '';
  let redirectUri = '';
  let a: Instance | undefined;
  let b: Instance | undefined;
  let proxy: Server | undefined;
  let proxyBase = '';
  let cleanupClient: Redis | undefined;

  beforeAll(async () => {
    requireAvailable(redis);
    // The proxy's port is the issuer's, which the instances need before they start: bind it first (port 0), and
    // hand its requests to the round-robin proxy once the instances are up.
    proxy = createServer();
    await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve));
    const proxyPort = (proxy.address() as AddressInfo).port;
    proxyBase = `http://127.0.0.1:${proxyPort}`;
    issuer = `http://localhost:${proxyPort}`;
    redirectUri = `${issuer}/callback`;
    const env = {
      ISSUER: issuer,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      // One key for both, generated here once: what a secret manager gives every instance in production.
      SENTINEL_KEYS: JSON.stringify([generatePrivateJWK('ES256')]),
      SENTINEL_CLIENT_ID: clientId,
      SENTINEL_CLIENT_SECRET: clientSecret,
      DEMO_PASSWORD: password,
    };
    [a, b] = await Promise.all([startInstance('A', env), startInstance('B', env)]);
    const roundRobin = createRoundRobinProxy({ upstreams: [a.base, b.base] });
    proxy.on('request', (request, response) => roundRobin.emit('request', request, response));
  }, 60_000);

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      if (proxy === undefined) return resolve();
      proxy.closeAllConnections();
      proxy.close(() => resolve());
    });
    await Promise.all([stopInstance(a), stopInstance(b)]);
    if (redis.problem === null) {
      cleanupClient = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      await deleteByPrefix(cleanupClient, prefix);
      cleanupClient.disconnect();
    }
  });

  function instances(): [Instance, Instance] {
    if (a === undefined || b === undefined) throw new Error('instances not running');
    return [a, b];
  }

  function pkce(): { verifier: string; challenge: string } {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  function authorizeURL(base: string, challenge: string, state: string): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return `${base}${ACCOUNT_PATH}/authorize?${query}`;
  }

  /** Authorize and log in at `base` (no session yet): the code of the 303 back to the app. */
  async function signIn(browser: Browser, base: string, challenge: string): Promise<string> {
    const state = randomBytes(8).toString('hex');
    const toLogin = await browser.get(authorizeURL(base, challenge, state));
    expect(toLogin.status).toBe(302);
    const loginPath = location(toLogin);
    expect(loginPath.pathname).toBe(`${ACCOUNT_PATH}/login`);
    const page = await browser.get(`${base}${loginPath.pathname}${loginPath.search}`);
    expect(page.status).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
    expect(csrf, 'the login page carries a CSRF token').toBeTruthy();
    const done = await browser.post(`${base}${loginPath.pathname}${loginPath.search}`, {
      csrf_token: csrf as string,
      username: USERNAME,
      password,
    });
    expect(done.status).toBe(303);
    const back = location(done);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('iss')).toBe(`${issuer}${ACCOUNT_PATH}`);
    const code = back.searchParams.get('code');
    expect(code).toBeTruthy();
    return code as string;
  }

  function exchange(base: string, code: string, verifier: string): Promise<Response> {
    return fetch(`${base}${ACCOUNT_PATH}/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
  }

  it('redeems at B a code issued through A, and refuses its replay at A without revoking within the retry grace', async () => {
    const [first, second] = instances();
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), first.base, challenge);

    const redeemed = await exchange(second.base, code, verifier);
    expect(redeemed.headers.get('x-instance')).toBe('B');
    expect(redeemed.status).toBe(200);
    const tokens = (await redeemed.json()) as Record<string, unknown>;
    expect(tokens.token_type).toBe('Bearer');
    expect(typeof tokens.access_token).toBe('string');
    expect(typeof tokens.refresh_token).toBe('string');

    const replay = await exchange(first.base, code, verifier);
    expect(replay.headers.get('x-instance')).toBe('A');
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as Record<string, unknown>).error).toBe('invalid_grant');

    // The replay came within the retry grace (it may be the client retrying after a lost answer): refused, and the
    // grant is left alone, on both instances. Replays after the grace revoke (test/grants.test.ts, oauth-redis).
    const refreshed = await fetch(`${second.base}${ACCOUNT_PATH}/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    expect(refreshed.status).toBe(200);
  });

  it('honours at B the session created by logging in at A: straight back to the app with a code', async () => {
    const [first, second] = instances();
    const browser = new Browser();
    await signIn(browser, first.base, pkce().challenge);
    expect(browser.has('sentinel_session')).toBe(true);

    const { verifier, challenge } = pkce();
    const atB = await browser.get(authorizeURL(second.base, challenge, 'from-b'));
    expect(atB.headers.get('x-instance')).toBe('B');
    expect(atB.status).toBe(302);
    const back = location(atB);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe('from-b');
    const code = back.searchParams.get('code');
    expect(code, 'no login page: a code at once').toBeTruthy();
    expect((await exchange(first.base, code as string, verifier)).status).toBe(200);

    // A device without the cookie still gets the login page at B.
    const stranger = await new Browser().get(authorizeURL(second.base, challenge, 'stranger'));
    expect(stranger.status).toBe(302);
    expect(location(stranger).pathname).toBe(`${ACCOUNT_PATH}/login`);
  });

  it('gives exactly one token for 50 concurrent redemptions of one code spread over both instances', async () => {
    const [first, second] = instances();
    const { verifier, challenge } = pkce();
    const code = await signIn(new Browser(), first.base, challenge);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, index) => exchange((index % 2 === 0 ? first : second).base, code, verifier)),
    );
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<Record<string, unknown>>;
    const served = new Set(responses.map((response) => response.headers.get('x-instance')));
    expect(served).toEqual(new Set(['A', 'B']));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    expect(bodies.filter((body) => typeof body.access_token === 'string')).toHaveLength(1);
    const losers = bodies.filter((body) => body.access_token === undefined);
    expect(losers).toHaveLength(49);
    expect(losers.every((body) => body.error === 'invalid_grant')).toBe(true);
  });

  it("opens B's guarded API with a consumer-bound token from A, and only for that consumer", async () => {
    const [first, second] = instances();
    const [consumer, otherConsumer] = DEMO_CONSUMERS;
    const issued = await fetch(`${first.base}/sentinel/api/v2/account/${ACCOUNT_ID}/app/token?state=${consumer}`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
    expect(issued.status).toBe(200);
    const { access_token: token } = (await issued.json()) as { access_token: string };

    const api = (consumerId: string, bearer: string): Promise<Response> =>
      fetch(`${second.base}/api/account/${ACCOUNT_ID}/consumer/${consumerId}/brand/tokens`, {
        headers: { authorization: `Bearer ${bearer}` },
      });
    const opened = await api(consumer, token);
    expect(opened.headers.get('x-instance')).toBe('B');
    expect(opened.status).toBe(200);
    expect(((await opened.json()) as { consumerId: string }).consumerId).toBe(consumer);

    expect((await api(otherConsumer, token)).status).toBe(401);
    // A segment that does not percent-decode is the client's mistake, refused by Express itself: 400, as in the
    // single-instance examples, never the catch-all's 500.
    const undecodable = await api('%ZZ', token);
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toMatchObject({ error: 'invalid_request' });
    // One changed signature byte: B really verifies the signature with the shared key rather than trusting it.
    const [header, payload, signature = ''] = token.split('.');
    const forged = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect((await api(consumer, forged)).status).toBe(401);

    // Both instances publish the same JWKS, so any verifier that caches it works with either.
    const jwks = await Promise.all(
      [first, second].map(async (instance) => (await fetch(`${instance.base}/sentinel/well-known/jwks`)).text()),
    );
    expect(jwks[0]).toBe(jwks[1]);
  });

  it('signs in through the proxy while consecutive steps land on alternate instances', async () => {
    const browser = new Browser();
    const seen: string[] = [];
    const step = async (url: string): Promise<Response> => {
      const response = await browser.get(url);
      seen.push(response.headers.get('x-instance') ?? '?');
      return response;
    };
    // The demo application starts the flow (its pending sign-in goes to Redis) ...
    const started = await step(`${proxyBase}/signin`);
    expect(started.status).toBe(302);
    const authorize = location(started);
    expect(authorize.origin).toBe(issuer);
    // ... the authorize request goes through the proxy (the issuer's host is the proxy's) ...
    const toLogin = await step(`${proxyBase}${authorize.pathname}${authorize.search}`);
    expect(toLogin.status).toBe(302);
    const loginPath = location(toLogin);
    const page = await step(`${proxyBase}${loginPath.pathname}${loginPath.search}`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const done = await browser.post(`${proxyBase}${loginPath.pathname}${loginPath.search}`, {
      csrf_token: csrf,
      username: USERNAME,
      password,
    });
    seen.push(done.headers.get('x-instance') ?? '?');
    expect(done.status).toBe(303);
    const callback = location(done);
    // ... and the callback, on yet another instance, finds the pending sign-in and exchanges the code.
    const finished = await step(`${proxyBase}${callback.pathname}${callback.search}`);
    expect(finished.status).toBe(200);
    expect(await finished.text()).toContain('Signed in as <strong id="subject">user-demo-1</strong>');
    expect(seen).toHaveLength(5);
    for (let index = 1; index < seen.length; index++) expect(seen[index]).not.toBe(seen[index - 1]);
  });
});

/**
 * Runs one of the example's scripts as a process until it exits: its exit code and everything it printed. One still
 * running after 40 s is killed (code `null`), so that a script that wrongly stays up fails the test, not outlives it.
 */
async function runToExit(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(killer);
  return { code, output };
}

/** Holds a port of 127.0.0.1, as another program on the machine would, for the duration of `use`. */
async function withPortHeld<T>(use: (port: number) => Promise<T>): Promise<T> {
  const holder = createServer((_request, response) => response.end('another program'));
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  try {
    return await use((holder.address() as AddressInfo).port);
  } finally {
    holder.close();
  }
}

describe('the example on a port another program holds', () => {
  it('an instance says it cannot listen and exits 1, never "listening on" (the proxy would send its share there)', async () => {
    const { code, output } = await withPortHeld((port) =>
      runToExit('examples/multi-instance/server.ts', {
        PORT: String(port),
        HOST: '127.0.0.1',
        INSTANCE: 'A',
        ISSUER: 'http://localhost:1',
        REDIS_URL,
        SENTINEL_KEYS: JSON.stringify([generatePrivateJWK('ES256')]),
        SENTINEL_CLIENT_ID: randomUUID(),
        SENTINEL_CLIENT_SECRET: generateClientSecret(),
        DEMO_PASSWORD: randomBytes(12).toString('base64url'),
      }),
    );
    expect(code, output).toBe(1);
    expect(output).toContain('instance A cannot listen');
    expect(output).not.toContain('listening on');
  }, 60_000);

  it('the example says which instance stopped and exits 1, with no proxy and no banner for instances that are gone', async () => {
    // Instance A gets the proxy's port + 1: the held one. Instance B's port is merely the next one, which another
    // test's server on a busy machine may hold too, so either instance may be the first to stop: the example must
    // name the one that did, and that one must have said why.
    const { code, output } = await withPortHeld((port) =>
      runToExit('examples/multi-instance/start.ts', { PORT: String(port - 1), REDIS_URL, REDIS_PREFIX: 'sentinel-multi-start:' }),
    );
    expect(code, output).toBe(1);
    const stopped = /instance ([AB]) stopped \(1\); shutting down the example/.exec(output)?.[1];
    expect(stopped, output).toBeDefined();
    expect(output).toContain(`instance ${stopped} cannot listen on 127.0.0.1:`);
    expect(output).not.toContain('client secret');
    expect(output).not.toContain('sentinel-idp multi-instance example: proxy');
  }, 60_000);
});

describe('the example proxy', () => {
  it('round-robins, and replaces the forwarding headers a client sends instead of trusting them', async () => {
    const seen: Array<Record<string, string | string[] | undefined>> = [];
    const upstreams = await Promise.all(
      ['one', 'two'].map(async (name) => {
        const server = createServer((request, response) => {
          seen.push(request.headers);
          response.writeHead(200, { 'x-upstream': name, 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] });
          request.pipe(response);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return server;
      }),
    );
    const urls = upstreams.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const proxy = createRoundRobinProxy({ upstreams: urls });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const answers = [];
      for (let index = 0; index < 3; index++) {
        answers.push(
          await fetch(`${base}/echo?n=${index}`, {
            method: 'POST',
            headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' },
            body: `body-${index}`,
          }),
        );
      }
      expect(answers.map((answer) => answer.headers.get('x-upstream'))).toEqual(['one', 'two', 'one']);
      expect(await answers[1]?.text()).toBe('body-1');
      expect(answers[0]?.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
      for (const headers of seen) {
        expect(headers['x-forwarded-for']).toBe('127.0.0.1');
        expect(headers['x-forwarded-proto']).toBe('http');
        expect(headers['x-forwarded-host']).toBe(new URL(base).host);
      }
      // An instance that is down: a clean 502, not a hang or a crash of the proxy.
      await new Promise<void>((resolve) => upstreams[1]?.close(() => resolve()));
      const down = await fetch(`${base}/echo`);
      const downAgain = await fetch(`${base}/echo`);
      expect([down.status, downAgain.status].sort()).toEqual([200, 502]);
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      for (const server of upstreams) {
        server.closeAllConnections();
        server.close();
      }
    }
  });
});
