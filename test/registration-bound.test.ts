/**
 * The per-address bound on successful dynamic client registrations (RFC 7591 §3). Anyone holding an initial access
 * token (one token may serve every account, and apps ship it) could register apps without end: each is a permanent
 * record in the AppStore. Valid registrations now count per client address (`registration.registrationsPerAddress`
 * per hour, IPv6 per /64) and per IPv6 /48 (`registration.registrationsPerNetwork`), then `429
 * temporarily_unavailable` with `Retry-After`, a `registration.throttled` event, and nothing saved. A client's
 * changes to its own registration count across instances too (registration-change-bound.test.ts has the rest).
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MemoryStore, type SentinelEvent, type SentinelOptions, type Store } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { CHANGES_PER_CLIENT } from '../src/registration/registration-bound.js';

const BODY = { grant_types: ['client_credentials'] };

function harness(registration: Record<string, unknown> = {}, overrides: Partial<SentinelOptions> = {}) {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    registration: { initialAccessToken: INITIAL_ACCESS_TOKEN, ...registration },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  const registered = async () => ((await contextOf(sentinel).apps.listApps?.(ACCOUNT)) ?? []).length;
  return { sentinel, events, errors, registered };
}

describe('successful registrations, per client address', () => {
  it('at most registrationsPerAddress an hour, then 429 with Retry-After and an event, nothing saved', async () => {
    const { sentinel, events, registered } = harness({ registrationsPerAddress: 3 });
    const before = await registered();
    for (let index = 0; index < 3; index += 1) {
      expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.20' })).status).toBe(201);
    }
    events.length = 0;
    const refused = await postRegistration(sentinel, BODY, { ip: '198.51.100.20' });
    expect(refused.status, refused.body).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600');
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    expect(events.map((event) => event.type)).toEqual(['registration.throttled']);
    expect(events[0]).toMatchObject({ accountId: ACCOUNT, ip: '198.51.100.20', scope: 'registrations', outcome: 'failure' });
    expect(await registered()).toBe(before + 3);
    // Another address still registers.
    expect((await postRegistration(sentinel, BODY, { ip: '198.51.100.21' })).status).toBe(201);
  });

  it('past the bound, audits only accounts that exist: made-up ones get the 429 but grow no audit log', async () => {
    const { sentinel, events } = harness({ registrationsPerAddress: 1 });
    const ip = '198.51.100.25';
    expect((await postRegistration(sentinel, BODY, { ip })).status).toBe(201);
    events.length = 0;
    for (let index = 0; index < 5; index += 1) {
      const refused = await postRegistration(sentinel, BODY, { ip, accountId: `made-up-${index}` });
      expect(refused.status, refused.body).toBe(429);
      expect(refused.headers['retry-after']).toBe('3600');
    }
    expect(events).toEqual([]);
    // An account the AppStore knows is audited as before.
    expect((await postRegistration(sentinel, BODY, { ip })).status).toBe(429);
    expect(events).toMatchObject([{ type: 'registration.throttled', accountId: ACCOUNT, scope: 'registrations' }]);
  });

  it('counts only registrations that would be saved: a wrong token or bad metadata spends no slot', async () => {
    const { sentinel } = harness({ registrationsPerAddress: 1 });
    const ip = '198.51.100.30';
    expect((await postRegistration(sentinel, BODY, { ip, token: `wrong-${'x'.repeat(32)}` })).status).toBe(401);
    expect((await postRegistration(sentinel, { redirect_uris: ['http://app.example.com/cb'] }, { ip })).status).toBe(400);
    expect((await postRegistration(sentinel, BODY, { ip })).status).toBe(201);
    expect((await postRegistration(sentinel, BODY, { ip })).status).toBe(429);
  });

  it('counts IPv6 per /64, and a /48 across its /64s at registrationsPerNetwork', async () => {
    const { sentinel } = harness({ registrationsPerAddress: 1, registrationsPerNetwork: 2 });
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:7:1::1' })).status).toBe(201);
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:7:1::2' })).status).toBe(429);
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:7:2::1' })).status).toBe(201);
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:7:3::1' })).status).toBe(429);
    expect((await postRegistration(sentinel, BODY, { ip: '2001:db8:8:1::1' })).status).toBe(201);
  });

  it('gives one slot each to a concurrent burst: exactly the limit is registered', async () => {
    const { sentinel, registered } = harness({ registrationsPerAddress: 4 });
    const before = await registered();
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () => postRegistration(sentinel, BODY, { ip: '198.51.100.40' }).then((response) => response.status)),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(4);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8);
    expect(await registered()).toBe(before + 4);
  });

  it('fails closed when the store cannot count: 500 server_error, reported, nothing saved', async () => {
    const inner = new MemoryStore();
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => inner.delete(key),
      increment: (key, ttl) =>
        key.startsWith('throttle-registered:') ? Promise.reject(new Error('store down')) : inner.increment(key, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const { sentinel, errors, registered } = harness({}, { store });
    const before = await registered();
    const response = await postRegistration(sentinel, BODY, { ip: '198.51.100.50' });
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    expect(await registered()).toBe(before);
  });

  it('keeps its counters as security state, in an area of their own: never evicted', async () => {
    const store = new MemoryStore({ max: 2 });
    const { sentinel } = harness({ registrationsPerAddress: 1 }, { store });
    for (let host = 1; host <= 5; host += 1) {
      expect((await postRegistration(sentinel, BODY, { ip: `192.0.2.${host}` })).status).toBe(201);
    }
    await expect(store.get('throttle-registered:ip:192.0.2.1')).resolves.toBe('1');
    expect((await postRegistration(sentinel, BODY, { ip: '192.0.2.1' })).status).toBe(429);
  });

  it('is an option, 100 an hour by default and ten times that per /48, refused when not a positive integer', () => {
    const { registration } = contextOf(harness().sentinel).config;
    expect(registration).toMatchObject({ registrationsPerAddress: 100, registrationsPerNetwork: 1000 });
    expect(contextOf(harness({ registrationsPerAddress: 7 }).sentinel).config.registration).toMatchObject({
      registrationsPerNetwork: 70,
    });
    for (const bad of [0, -1, 1.5, '10']) {
      expect(() => harness({ registrationsPerAddress: bad })).toThrow(ConfigurationError);
      expect(() => harness({ registrationsPerNetwork: bad })).toThrow(ConfigurationError);
    }
  });
});

await describeOnSharedRedis('registration-bound', 'successful registrations on RedisStore (two instances)', (newStore) => {
  it('share one count per address across instances', async () => {
    const one = harness({ registrationsPerAddress: 2 }, { store: newStore() });
    const two = harness({ registrationsPerAddress: 2 }, { store: newStore() });
    expect((await postRegistration(one.sentinel, BODY, { ip: '198.51.100.60' })).status).toBe(201);
    expect((await postRegistration(two.sentinel, BODY, { ip: '198.51.100.60' })).status).toBe(201);
    expect((await postRegistration(one.sentinel, BODY, { ip: '198.51.100.60' })).status).toBe(429);
    expect((await postRegistration(two.sentinel, BODY, { ip: '198.51.100.60' })).status).toBe(429);
  });

  it("share one count of a client's changes to its registration across instances", async () => {
    const appStore = new MemoryAppStore();
    const one = harness({}, { store: newStore(), apps: [], appStore });
    const two = harness({}, { store: newStore(), apps: [], appStore });
    const info = await registerClient(one.sentinel, { redirect_uris: ['https://app.example.com/cb'] });
    const body = (index: number) => ({
      client_id: info.client_id,
      redirect_uris: ['https://app.example.com/cb'],
      client_name: `N${index}`,
    });
    for (let index = 0; index < CHANGES_PER_CLIENT; index += 1) {
      const instance = index % 2 === 0 ? one : two;
      expect((await manageClient(instance.sentinel, 'PUT', info, { body: body(index) })).status).toBe(200);
    }
    expect((await manageClient(one.sentinel, 'PUT', info, { body: body(-1) })).status).toBe(429);
    expect((await manageClient(two.sentinel, 'POST', info, { suffix: '/secret' })).status).toBe(429);
  });
});
