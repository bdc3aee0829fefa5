/**
 * The service over HTTP when its Redis dies: a private `redis-server` on a spare port, a sentinel on a RedisStore
 * whose ioredis client is configured as the README says (fail fast), mounted in Express. Redis is killed, then
 * started again on the same port:
 *
 * - while it is down, the token endpoints (code exchange, refresh) answer 500/503 `server_error` within a bound,
 *   the authorize endpoint an error page or a `server_error` redirect to the app (never a code), the login page and
 *   the login POST an error page; nothing is issued, and the cause reaches `onError` without any secret in it;
 * - once it is back, the same service (no restart) signs users in and issues tokens again.
 *
 * No redis-server binary: skipped with the reason printed, unless SENTINEL_REQUIRE_REDIS=1, where it fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { createSentinel, type Sentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT, CLIENT_ID, PASSWORD, REDIRECT_URI, USERNAME, appTokenPath, baseOptions, ccBody } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';
import { exchange, refresh } from './helpers/oauth.js';

const binary = redisServerBinary('service-faults');

type Agent = ReturnType<typeof request.agent>;

/** What a request may take while Redis is down (the store gives up after 1 s; ioredis fails at once when disconnected). */
const BOUND_MS = 5000;
/** Only so that a hanging request fails this test instead of timing it out; the bound above is what is tested. */
const HANG_MS = BOUND_MS * 2;
/** How long the service may take to work again once Redis is back (ioredis backs off up to a few seconds). */
const RECOVERY_DEADLINE_MS = 20_000;
const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;
const FORM = 'application/x-www-form-urlencoded';
const ISSUED = new Set(['token.issued', 'code.issued', 'session.created', 'login.succeeded']);

function authorizePath(state: string): string {
  return `${AUTHORIZE}?${new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state })}`;
}

function setCookies(response: request.Response): string[] {
  const value = response.headers['set-cookie'] as string[] | string | undefined;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** Runs one request and measures it; a request still open after HANG_MS fails the test. */
async function timed(test: request.Test): Promise<{ response: request.Response; elapsed: number }> {
  const started = performance.now();
  const response = await test.timeout(HANG_MS);
  return { response, elapsed: performance.now() - started };
}

/** The login page path of a fresh authorize request (no session on `agent`). */
async function startLogin(agent: Agent, state = 'fault'): Promise<string> {
  const response = await agent.get(authorizePath(state));
  expect(response.status).toBe(302);
  const location = response.headers.location as string;
  expect(location).toMatch(/\/login\?interaction=/);
  return location;
}

async function csrfOf(agent: Agent, loginPath: string): Promise<string> {
  const page = await agent.get(loginPath);
  expect(page.status).toBe(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1];
  expect(csrf).toBeTruthy();
  return csrf as string;
}

function postLogin(agent: Agent, loginPath: string, csrf: string): request.Test {
  return agent
    .post(loginPath)
    .set('content-type', FORM)
    .set('sec-fetch-site', 'same-origin')
    .send(new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString());
}

/** Authorize + login: the code of the 303 back to the app. */
async function signIn(agent: Agent, state = 'fault'): Promise<string> {
  const loginPath = await startLogin(agent, state);
  const response = await postLogin(agent, loginPath, await csrfOf(agent, loginPath));
  expect(response.status).toBe(303);
  const code = new URL(response.headers.location as string).searchParams.get('code');
  expect(code).toBeTruthy();
  return code as string;
}

/** A JSON `server_error` of the token endpoint within the bound. */
function expectServerError(label: string, outcome: { response: request.Response; elapsed: number }): void {
  const { response, elapsed } = outcome;
  expect([500, 503], `${label}: status`).toContain(response.status);
  expect(response.body.error, label).toBe('server_error');
  expect(response.body.access_token, label).toBeUndefined();
  expect(response.headers['cache-control'], label).toBe('no-store');
  expect(elapsed, `${label} took ${Math.round(elapsed)} ms`).toBeLessThan(BOUND_MS);
}

/** An HTML error page (no redirect, no session) within the bound. */
function expectErrorPage(label: string, outcome: { response: request.Response; elapsed: number }): void {
  const { response, elapsed } = outcome;
  expect(response.status, `${label}: status`).toBeGreaterThanOrEqual(500);
  expect(response.headers['content-type'], label).toMatch(/^text\/html/);
  expect(response.headers.location, label).toBeUndefined();
  expect(
    setCookies(response).filter((line) => line.startsWith('sentinel_session=') && !/max-age=0/i.test(line)),
    label,
  ).toEqual([]);
  expect(elapsed, `${label} took ${Math.round(elapsed)} ms`).toBeLessThan(BOUND_MS);
}

/**
 * What a validated authorize request may answer while the store is down: an error page, or the RFC 6749 §4.1.2.1
 * `server_error` redirect to the app. Never a code, never the login page (whose interaction could not be saved).
 */
function expectAuthorizeFailure(label: string, outcome: { response: request.Response; elapsed: number }): void {
  const { response, elapsed } = outcome;
  if (response.status === 302) {
    const target = new URL(response.headers.location as string);
    expect(`${target.origin}${target.pathname}`, label).toBe(REDIRECT_URI);
    expect(target.searchParams.get('error'), label).toBe('server_error');
    expect(target.searchParams.has('code'), label).toBe(false);
    expect(elapsed, `${label} took ${Math.round(elapsed)} ms`).toBeLessThan(BOUND_MS);
  } else {
    expectErrorPage(label, outcome);
  }
}

describe.skipIf(binary.skip)('the service when its Redis goes down and comes back', () => {
  const redis = new PrivateRedis();
  let client: Redis | undefined;
  let sentinel: Sentinel;
  let host: MountedHost | undefined;
  const errors: unknown[] = [];
  const events: SentinelEvent[] = [];

  beforeAll(async () => {
    requireAvailable(binary);
    await redis.start();
    // The client as the README configures it: reject at once while disconnected, one retry, a per-command timeout.
    client = new Redis(redis.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 1000 });
    client.on('error', () => {}); // the outage is the point; failures surface as rejected store calls
    await new Promise((resolve) => client?.once('ready', resolve));
    const store = new RedisStore(client, { prefix: 'faults:', commandTimeoutMs: 1000 });
    sentinel = createSentinel(baseOptions({ store, onError: (error) => errors.push(error), onEvent: (event) => events.push(event) }));
    host = await (HOSTS[0] as (typeof HOSTS)[number]).mount(sentinel);
  });

  function serverOf(): MountedHost['server'] {
    if (host === undefined) throw new Error('the service is not mounted');
    return host.server;
  }

  afterAll(async () => {
    await host?.close();
    client?.disconnect();
    await redis.destroy();
  });

  it('answers server_error within the bound, issues nothing, and recovers without a restart', async () => {
    const server = serverOf();
    // While Redis is up: an unredeemed code, a refresh token, a device session, and a login form ready to post.
    const withSession = request.agent(server);
    const pendingCode = await signIn(withSession, 'pending');
    const issued = await exchange(server, await signIn(request.agent(server), 'refresh'));
    expect(issued.status).toBe(200);
    const refreshToken = issued.body.refresh_token as string;
    const midLogin = request.agent(server);
    const loginPath = await startLogin(midLogin);
    const csrf = await csrfOf(midLogin, loginPath);

    await redis.kill();
    const before = { errors: errors.length, events: events.length };
    const figures: Record<string, number> = {};
    const note = (label: string, outcome: { elapsed: number }): void => {
      figures[label] = Math.round(outcome.elapsed);
    };

    const codeExchange = await timed(exchange(server, pendingCode));
    note('code exchange', codeExchange);
    expectServerError('code exchange', codeExchange);

    const refreshing = await timed(refresh(server, refreshToken));
    note('refresh', refreshing);
    expectServerError('refresh', refreshing);

    const authorizeWithSession = await timed(withSession.get(authorizePath('down-session')));
    note('authorize with a session', authorizeWithSession);
    expectAuthorizeFailure('authorize with a session', authorizeWithSession);

    const authorizeFresh = await timed(request(server).get(authorizePath('down-fresh')));
    note('authorize without a session', authorizeFresh);
    expectAuthorizeFailure('authorize without a session', authorizeFresh);

    const loginPage = await timed(midLogin.get(loginPath));
    note('login page', loginPage);
    expectErrorPage('login page', loginPage);

    const loginPost = await timed(postLogin(midLogin, loginPath, csrf));
    note('login POST', loginPost);
    expectErrorPage('login POST', loginPost);
    expect(loginPost.response.text).not.toContain(csrf);

    // Nothing issued during the outage, and every failure reported to onError without a secret in it.
    const duringOutage = events.slice(before.events);
    expect(duringOutage.filter((event) => ISSUED.has(event.type))).toEqual([]);
    const reported = errors.slice(before.errors);
    expect(reported.length).toBeGreaterThanOrEqual(6);
    for (const error of reported) {
      expect(error).toBeInstanceOf(Error);
      const text = `${(error as Error).message} ${JSON.stringify(error)}`;
      expect(text).toMatch(/RedisStore/);
      for (const secret of [pendingCode, refreshToken, csrf, loginPath.split('=')[1] as string]) expect(text).not.toContain(secret);
    }
    console.info(`[service-faults] Redis down, time to answer (ms): ${JSON.stringify(figures)}`);

    // Back on the same port: the same service instance works again once ioredis has reconnected.
    await redis.start();
    const started = performance.now();
    let lastStatus = 'none';
    for (;;) {
      try {
        const agent = request.agent(server);
        const response = await startLogin(agent, 'recovery').then(async (path) => postLogin(agent, path, await csrfOf(agent, path)));
        lastStatus = String(response.status);
        if (response.status === 303) {
          const code = new URL(response.headers.location as string).searchParams.get('code') as string;
          const tokens = await exchange(server, code);
          if (tokens.status === 200) break;
          lastStatus = `exchange ${tokens.status}`;
        }
      } catch (error) {
        lastStatus = error instanceof Error ? error.message : String(error);
      }
      if (performance.now() - started > RECOVERY_DEADLINE_MS) {
        throw new Error(`no recovery within ${RECOVERY_DEADLINE_MS} ms; last: ${lastStatus}`);
      }
      await sleep(200);
    }
    console.info(`[service-faults] recovered ${Math.round(performance.now() - started)} ms after redis-server started again`);

    // Consumer-bound tokens and the pre-outage device session: the session died with the non-persistent Redis, so
    // the device is asked to log in again rather than let in on nothing.
    const appToken = await request(server).post(appTokenPath()).set('content-type', FORM).send(ccBody());
    expect(appToken.status).toBe(200);
    const again = await withSession.get(authorizePath('after'));
    expect(again.status).toBe(302);
    expect(again.headers.location).toMatch(/\/login\?interaction=/);
  }, 60_000);

  it('answers server_error within the bound while Redis hangs, and the retry of a redemption that timed out is paid out once, not taken for a replay', async () => {
    const server = serverOf();
    const pendingCode = await signIn(request.agent(server), 'paused');
    const before = events.length;
    // SIGSTOP: the connection stays open and nothing answers, so only the timeouts end the requests.
    redis.pause();
    let codeExchange: { response: request.Response; elapsed: number };
    let authorize: { response: request.Response; elapsed: number };
    try {
      codeExchange = await timed(exchange(server, pendingCode));
      authorize = await timed(request(server).get(authorizePath('paused-fresh')));
    } finally {
      redis.resume();
    }
    expectServerError('code exchange, Redis paused', codeExchange);
    expectAuthorizeFailure('authorize, Redis paused', authorize);
    console.info(
      `[service-faults] Redis paused, time to answer (ms): code exchange ${Math.round(codeExchange.elapsed)}, authorize ${Math.round(authorize.elapsed)}`,
    );
    expect(events.slice(before).filter((event) => ISSUED.has(event.type))).toEqual([]);

    // Whatever reached Redis when it resumed either spent the code and wrote its grant together, or did nothing: the
    // client's ordinary retry is never a replay. Here the exchange gave up while reading the code, so the code is
    // intact and the retry is paid out — once.
    let retry: request.Response | undefined;
    const started = performance.now();
    do {
      retry = await exchange(server, pendingCode);
      if (retry.status !== 500) break;
      await sleep(100);
    } while (performance.now() - started < RECOVERY_DEADLINE_MS);
    expect(retry.status).toBe(200);
    expect(events.slice(before).filter((event) => event.type === 'token.issued')).toHaveLength(1);
    expect(events.slice(before).filter((event) => event.type === 'code.replayed')).toEqual([]);
  }, 60_000);
});
