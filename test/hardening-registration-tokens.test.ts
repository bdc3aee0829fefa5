/**
 * Wrong registration tokens — initial access tokens at the RFC 7591 endpoint, registration access tokens at the
 * RFC 7592 configuration endpoint — are throttled per client address (`throttle.maxFailuresPerIp` per
 * `throttle.windowSeconds`, then 429 with Retry-After), across instances sharing a Redis, and audited with a
 * `registration.denied` event that never carries the token. A host's check function gets the address and headers.
 * A Store that cannot count fails the request closed.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppStore, SentinelEvent, SentinelOptions } from '../src/index.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { MemoryStore } from '../src/stores/memory.js';
import { RedisStore } from '../src/stores/redis.js';
import type { Store } from '../src/stores/store.js';
import { call, jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient, registerPath } from './helpers/registration-client.js';

const BODY = { grant_types: ['client_credentials'] };
// 43 base64url characters, as a generated token is: a guess shaped like the real thing.
const guess = (index: number) => `guess-${String(index).padStart(4, '0')}-${'x'.repeat(32)}`;

function collecting(overrides: Partial<SentinelOptions> = {}) {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { sentinel, events, errors };
}

describe('wrong initial access tokens', () => {
  it('60 guesses from one address: 401 up to throttle.maxFailuresPerIp (50), then 429 with Retry-After, each audited', async () => {
    const { sentinel, events } = collecting();
    const statuses: number[] = [];
    let throttled: Awaited<ReturnType<typeof postRegistration>> | undefined;
    for (let index = 0; index < 60; index += 1) {
      const response = await postRegistration(sentinel, BODY, { token: guess(index), ip: '198.51.100.7' });
      statuses.push(response.status);
      if (response.status === 429) throttled ??= response;
    }
    expect(statuses.slice(0, 50)).toEqual(Array(50).fill(401));
    expect(statuses.slice(50)).toEqual(Array(10).fill(429));
    expect(throttled?.headers['retry-after']).toBe('900');
    expect(jsonOf(throttled as NonNullable<typeof throttled>).error).toBe('temporarily_unavailable');
    // The right token from the throttled address waits too (the check comes after the throttle); elsewhere it works.
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.7' })).status).toBe(429);
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.8' })).status).toBe(201);

    const denied = events.filter((event) => event.type === 'registration.denied');
    expect(denied).toHaveLength(50);
    expect(denied[0]).toMatchObject({ accountId: ACCOUNT, ip: '198.51.100.7', outcome: 'failure', reason: 'wrong initial access token' });
    expect(events.filter((event) => event.type === 'registration.throttled').length).toBe(11);
    expect(events.find((event) => event.type === 'registration.throttled')).toMatchObject({ scope: 'ip', outcome: 'failure' });
    const text = JSON.stringify(events);
    for (let index = 0; index < 60; index += 1) expect(text).not.toContain(guess(index));
    expect(text).not.toContain(INITIAL_ACCESS_TOKEN);
  });

  it('counts IPv6 per /48 too (throttle.maxFailuresPerNetwork): 70 /64s of one /48 are bounded, another /48 is not', async () => {
    const store = new MemoryStore();
    const { sentinel } = collecting({ store, throttle: { maxFailuresPerIp: 1, maxFailuresPerNetwork: 50 } });
    const statuses: number[] = [];
    for (let index = 0; index < 70; index += 1) {
      statuses.push((await postRegistration(sentinel, BODY, { token: guess(index), ip: `2001:db8:3:${index.toString(16)}::1` })).status);
    }
    expect(statuses).toEqual([...Array<number>(50).fill(401), ...Array<number>(20).fill(429)]);
    // The /64s its network refused got no counter in the login throttle's area.
    expect(await store.get('throttle:registration:ip:2001:db8:3:31')).toBe('1');
    expect(await store.get('throttle:registration:ip:2001:db8:3:32')).toBeNull();
    expect((await postRegistration(sentinel, BODY, { token: guess(70), ip: '2001:db8:4::1' })).status).toBe(401);
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:4:1::1' })).status).toBe(201);
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.30' })).status).toBe(201);
  });

  it('right tokens cost nothing: 60 registrations from one address all succeed', async () => {
    const { sentinel } = collecting({ throttle: { maxFailuresPerIp: 3 } });
    for (let index = 0; index < 60; index += 1) {
      expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.9' })).status).toBe(201);
    }
  });

  it('a burst of concurrent guesses reaches the host check at most maxFailuresPerIp times', async () => {
    let checked = 0;
    const { sentinel } = collecting({
      throttle: { maxFailuresPerIp: 5 },
      registration: {
        initialAccessToken: async () => {
          checked += 1;
          await new Promise((resolve) => setTimeout(resolve, 20));
          return false;
        },
      },
    });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) => postRegistration(sentinel, BODY, { token: guess(index), ip: '198.51.100.10' })),
    );
    expect(checked).toBe(5);
    expect(responses.filter((response) => response.status === 401)).toHaveLength(5);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(25);
  });

  it("the host's check function gets the account, the client address and the headers", async () => {
    const seen: unknown[] = [];
    const { sentinel } = collecting({
      registration: {
        initialAccessToken: (token, context) => {
          seen.push(context);
          return token === INITIAL_ACCESS_TOKEN && context.ip === '198.51.100.11';
        },
      },
    });
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.11', headers: { 'x-request-id': 'req-42' } })).status).toBe(201);
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.12' })).status).toBe(401);
    expect(seen[0]).toMatchObject({
      accountId: ACCOUNT,
      ip: '198.51.100.11',
      headers: expect.objectContaining({ 'x-request-id': 'req-42' }),
    });
  });

  it('fails closed when the Store cannot count: 500, reported, and the token is never checked', async () => {
    let checked = 0;
    const memory = new MemoryStore();
    // The MemoryStore in every respect but counting.
    const broken = new Proxy(memory, {
      get(target, property) {
        if (property === 'increment') {
          return async () => {
            throw new Error('store down');
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const { sentinel, errors } = collecting({
      store: broken,
      registration: {
        initialAccessToken: () => {
          checked += 1;
          return true;
        },
      },
    });
    const response = await postRegistration(sentinel, BODY, { token: guess(1) });
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(checked).toBe(0);
    expect(errors).toHaveLength(1);
  });
});

describe('two credentials in the Authorization field', () => {
  it('are invalid_request with the Bearer challenge (RFC 6750 §3.1) at both endpoints, the right token first', async () => {
    const { sentinel, events } = collecting();
    const info = await registerClient(sentinel);
    const path = new URL(info.registration_client_uri).pathname;
    const fields = (token: string): (string | string[])[] => [
      [`Bearer ${token}`, `Bearer ${guess(1)}`], // every line, as a host calling the core itself may hand them
      `Bearer ${token}, Bearer ${guess(1)}`, // the lines joined, as the adapters and a fetch runtime give them
      `Bearer ${token}, Basic YTpi`,
    ];
    const requests: [string, string, string][] = [
      ['POST', registerPath(), INITIAL_ACCESS_TOKEN],
      ['GET', path, info.registration_access_token],
    ];
    for (const [method, target, token] of requests) {
      for (const authorization of fields(token)) {
        const headers = { authorization, 'content-type': 'application/json' };
        const response = await call(sentinel, { method, path: target, headers, body: method === 'POST' ? BODY : undefined });
        const label = `${method} ${JSON.stringify(authorization)}`;
        expect([response.status, jsonOf(response).error], label).toEqual([400, 'invalid_request']);
        expect(response.headers['www-authenticate'], label).toBe('Bearer realm="sentinel", error="invalid_request"');
      }
    }
    // Refused before any token is compared: nothing was registered, read, or counted as a guess.
    expect(events.filter((event) => event.type === 'registration.denied')).toHaveLength(0);
    expect(events.filter((event) => event.type === 'app.registered')).toHaveLength(1);
    expect((await manageClient(sentinel, 'GET', info)).status).toBe(200);
  });
});

describe('wrong registration access tokens', () => {
  it('are audited with the client they aimed at and throttled with the same per-address budget', async () => {
    const { sentinel, events } = collecting({ throttle: { maxFailuresPerIp: 4 } });
    const info = await registerClient(sentinel);
    const attempts = [
      () => manageClient(sentinel, 'GET', info, { token: guess(1), ip: '198.51.100.20' }),
      () => manageClient(sentinel, 'PUT', info, { token: guess(2), ip: '198.51.100.20', body: { client_id: info.client_id } }),
      () => manageClient(sentinel, 'DELETE', info, { token: guess(3), ip: '198.51.100.20' }),
      () => manageClient(sentinel, 'POST', info, { token: guess(4), ip: '198.51.100.20', suffix: '/secret' }),
    ];
    for (const attempt of attempts) expect((await attempt()).status).toBe(401);
    const throttled = await manageClient(sentinel, 'GET', info, { ip: '198.51.100.20' });
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('900');
    // Another address manages the app with its token as before.
    expect((await manageClient(sentinel, 'GET', info, { ip: '198.51.100.21' })).status).toBe(200);

    const denied = events.filter((event) => event.type === 'registration.denied');
    expect(denied).toHaveLength(4);
    expect(denied[0]).toMatchObject({ accountId: ACCOUNT, clientId: info.client_id, reason: 'wrong registration access token' });
    expect(events.find((event) => event.type === 'registration.throttled')).toMatchObject({ clientId: info.client_id });
    const text = JSON.stringify(events);
    expect(text).not.toContain(info.registration_access_token);
    for (let index = 1; index <= 4; index += 1) expect(text).not.toContain(guess(index));
  });

  it('a registration access token of another account counts as a wrong one', async () => {
    const { sentinel, events } = collecting();
    const info = await registerClient(sentinel);
    const path = new URL(info.registration_client_uri).pathname.replace(`/account/${ACCOUNT}/`, `/account/${OTHER_ACCOUNT}/`);
    const response = await sentinel.handle({
      method: 'GET',
      path,
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${info.registration_access_token}` },
      ip: '198.51.100.22',
    });
    expect(response?.status).toBe(401);
    expect(events.filter((event) => event.type === 'registration.denied')).toHaveLength(1);
  });

  it("is refused at another account's configuration endpoint even when the host's registry answers by client id alone", async () => {
    // A host's registry that finds, replaces, rotates and deletes apps by client id alone (its client ids being unique
    // across its accounts, as UUIDs are): whichever account asks, it answers the app. Only the account check of the
    // registration access token then keeps account A's token out of account B's configuration endpoint.
    const inner = new MemoryAppStore();
    const accountOf = new Map<string, string>();
    const own = (clientId: string): string => accountOf.get(clientId) ?? '';
    const appStore: AppStore = {
      findApp: (_accountId, clientId) => inner.findApp(own(clientId), clientId),
      hasAccount: (accountId) => accountId === ACCOUNT || accountId === OTHER_ACCOUNT,
      saveApp: (app) => {
        accountOf.set(app.clientId, app.accountId);
        inner.saveApp(app);
      },
      updateApp: (app) => inner.updateApp({ ...app, accountId: own(app.clientId) }),
      deleteApp: (_accountId, clientId) => inner.deleteApp(own(clientId), clientId),
      rotateClientSecret: (_accountId, clientId, hash, overlap) => inner.rotateClientSecret(own(clientId), clientId, hash, overlap),
    };
    const { sentinel, events } = collecting({ apps: [], appStore });
    const info = await registerClient(sentinel);
    const elsewhere = {
      ...info,
      registration_client_uri: info.registration_client_uri.replace(`/account/${ACCOUNT}/`, `/account/${OTHER_ACCOUNT}/`),
    };
    const read = await manageClient(sentinel, 'GET', elsewhere);
    expect(read.status).toBe(401);
    expect(read.body).not.toContain(info.client_id);
    expect((await manageClient(sentinel, 'DELETE', elsewhere)).status).toBe(401);
    expect(events.filter((event) => event.type === 'registration.denied')).toMatchObject([
      { accountId: OTHER_ACCOUNT, clientId: info.client_id, reason: 'wrong registration access token' },
      { accountId: OTHER_ACCOUNT, clientId: info.client_id, reason: 'wrong registration access token' },
    ]);
    expect(events.some((event) => event.type === 'app.deleted')).toBe(false);
    // The app is still there, and still its own account's to manage with the same token.
    expect(inner.findApp(ACCOUNT, info.client_id)).not.toBeNull();
    expect((await manageClient(sentinel, 'GET', info)).status).toBe(200);
  });
});

const redis = await sharedRedis('hardening-registration-tokens');
describe.skipIf(redis.skip)('on one Redis, two instances share the budget', () => {
  let client: Redis;
  const prefix = `h4-registration-${randomUUID()}:`;

  beforeAll(() => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { lazyConnect: false });
  });

  afterAll(async () => {
    await deleteByPrefix(client, prefix);
    client.disconnect();
  });

  it('guesses spread over both instances are throttled at the one limit', async () => {
    const store = () => new RedisStore(client, { prefix });
    const a = collecting({ store: store(), throttle: { maxFailuresPerIp: 6 } }).sentinel;
    const b = collecting({ store: store(), throttle: { maxFailuresPerIp: 6 } }).sentinel;
    const statuses: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      statuses.push((await postRegistration(index % 2 === 0 ? a : b, BODY, { token: guess(index), ip: '198.51.100.30' })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429, 429, 429]);
  });
});
