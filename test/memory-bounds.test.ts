/**
 * MemoryStore's memory bounds: each ordinary prefix is bounded in bytes (so long records cannot push a process
 * toward gigabytes), one pending interaction is capped, and security state (replay markers, throttle counters) is
 * never evicted: when it cannot be kept, the write fails and the request fails closed, reported to onError.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelOptions, type SentinelResponse } from '../src/index.js';
import { MAX_INTERACTION_CHARS } from '../src/authorize/state/interaction.js';
import { DEFAULT_MAX_BYTES } from '../src/stores/memory.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { SecurityStateFullError } from '../src/stores/security-state.js';
import {
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  csrfOf,
  openLogin,
  postLogin,
  recordingStore,
  signIn,
  startInteraction,
} from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './helpers/fixtures.js';
import { MAIN_APP, signInWithSession, tokenStanding } from './helpers/logout-flow.js';
import { DEVICE_PATH, deviceApps, entryCookieOf, requestCodes } from './helpers/device-drive.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('MemoryStore byte budget', () => {
  it('keeps each ordinary prefix within maxBytes, evicting the least recently used, without touching other prefixes', async () => {
    const store = new MemoryStore({ maxBytes: 1024 * 1024 });
    for (let index = 0; index < 20; index += 1) await store.set(`session:${index}`, `s${index}`, 60_000);
    const big = 'x'.repeat(8_000);
    for (let index = 0; index < 2_000; index += 1) await store.set(`interaction:${index}`, big, 60_000);
    expect(store.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    await expect(store.get('interaction:1999')).resolves.toBe(big);
    await expect(store.get('interaction:0')).resolves.toBeNull();
    for (let index = 0; index < 20; index += 1) await expect(store.get(`session:${index}`)).resolves.toBe(`s${index}`);
  });

  it('has a default budget per prefix that 2,000 abandoned long interactions cannot exceed', async () => {
    const store = new MemoryStore();
    const big = 'x'.repeat(MAX_INTERACTION_CHARS);
    for (let index = 0; index < 5_000; index += 1) await store.set(`interaction:${index}`, big, 60_000);
    expect(store.bytes).toBeLessThanOrEqual(DEFAULT_MAX_BYTES);
    expect(store.bytes).toBeGreaterThan(DEFAULT_MAX_BYTES / 2);
  });

  it('refuses a maxBytes or securityMaxBytes that is not a positive integer', () => {
    for (const value of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryStore({ maxBytes: value })).toThrow(TypeError);
      expect(() => new MemoryStore({ securityMaxBytes: value })).toThrow(TypeError);
    }
  });
});

describe('one pending interaction is capped', () => {
  it(`a request whose interaction would exceed ${MAX_INTERACTION_CHARS} characters goes back to the app as invalid_request, storing nothing`, async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ state: 'x'.repeat(7_000) }) });
    expect(response.status).toBe(302);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.has('state')).toBe(false);
    expect(store.writes).toEqual([]);
  });

  it('a short state beside an oversized nonce or scope is echoed (RFC 6749 §4.1.2.1)', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    for (const extra of [{ nonce: 'n'.repeat(5_000) }, { scope: `openid ${'s'.repeat(5_000)}` }] as Record<string, string>[]) {
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ state: 'st-1', ...extra }) });
      const location = new URL(String(response.headers.location));
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('state')).toBe('st-1');
    }
    expect(store.writes).toEqual([]);
  });

  it('the same request with a nonce that tips it over is refused too; one just under is parked', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const over = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: authorizeQuery({ state: 's'.repeat(2_000), nonce: 'n'.repeat(2_500) }),
    });
    expect(new URL(String(over.headers.location)).searchParams.get('error')).toBe('invalid_request');
    expect(store.writes).toEqual([]);
    const under = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: authorizeQuery({ state: 's'.repeat(1_500), nonce: 'n'.repeat(1_500) }),
    });
    expect(String(under.headers.location)).toContain('/login?interaction=');
    // The address's counter of interactions started (interactionsPerAddress), then the interaction; the refused one
    // above was not counted.
    expect(store.writes.map((write) => write.op)).toEqual(['increment', 'set']);
  });
});

describe('an interaction too long to keep outside /authorize', () => {
  // No app to send the refusal to: it is the error page, never a 302 without a Location.
  it('a device sign-in whose interaction is too long (a verification page under a long mount path) is a 400 page', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore(), apps: deviceApps() });
    // A scope too long for the sign-in is refused at device authorization (invalid_scope); a mount path of the
    // verification page far longer than the device's is what can still make the interaction too long.
    const codes = await requestCodes(sentinel);
    const mountPath = `/${'t'.repeat(MAX_INTERACTION_CHARS)}`;
    const headers = { 'sec-fetch-site': 'same-origin' };
    const send = (method: 'GET' | 'POST', body?: string, cookie?: string) =>
      sentinel.handle({
        method,
        path: DEVICE_PATH,
        query: new URLSearchParams(),
        headers: method === 'GET' ? headers : { ...headers, 'content-type': 'application/x-www-form-urlencoded', cookie: cookie ?? '' },
        body,
        ip: '203.0.113.7',
        mountPath,
      });
    const page = await send('GET');
    expect(page?.status).toBe(200);
    const form = new URLSearchParams({ csrf_token: csrfOf(String(page?.body)), user_code: codes.user_code }).toString();
    const response = (await send('POST', form, entryCookieOf(page as SentinelResponse))) as SentinelResponse;
    expect(response.status).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('too long to keep while the user signs in');
    expect(response.body).toContain('<code>invalid_request</code>');
  });

  it('an account page visit under a mount path that makes it too long is a 400 page', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore(), account: { enabled: true } });
    const response = await sentinel.handle({
      method: 'GET',
      path: `/sentinel/api/account/${ACCOUNT}/account`,
      query: new URLSearchParams(),
      headers: {},
      ip: '203.0.113.7',
      mountPath: `/${'t'.repeat(MAX_INTERACTION_CHARS)}`,
    });
    expect(response?.status).toBe(400);
    expect(response?.headers.location).toBeUndefined();
  });
});

describe('security state is never evicted', () => {
  it('DPoP replay markers survive any number of other markers, even with max: 2', async () => {
    const store = new MemoryStore({ max: 2 });
    await store.set('dpop-jti:first', '1', 60_000);
    for (let index = 0; index < 1_000; index += 1) await store.set(`dpop-jti:other-${index}`, '1', 60_000);
    await expect(store.get('dpop-jti:first')).resolves.toBe('1');
  });

  it('a locked username stays locked however many other counters are created, even with max: 2', async () => {
    const store = new MemoryStore({ max: 2 });
    for (let index = 0; index < 5; index += 1) await store.increment('throttle-user:alice', 60_000);
    for (let index = 0; index < 1_000; index += 1) await store.increment(`throttle-user:other-${index}`, 60_000);
    await expect(store.get('throttle-user:alice')).resolves.toBe('5');
  });

  it('when the budget is full, a new entry is refused with SecurityStateFullError and the old ones are kept', async () => {
    const budget = entryBytes('dpop-jti:aaaa', '1') * 3 + 8;
    const store = new MemoryStore({ securityMaxBytes: budget });
    for (const id of ['aaaa', 'bbbb', 'cccc']) await store.set(`dpop-jti:${id}`, '1', 60_000);
    await expect(store.set('dpop-jti:dddd', '1', 60_000)).rejects.toBeInstanceOf(SecurityStateFullError);
    // Each security prefix has a budget of its own: a full `dpop-jti:` area blocks no throttle counter.
    await expect(store.increment('throttle:ip:1', 60_000)).resolves.toBe(1);
    for (const id of ['aaaa', 'bbbb', 'cccc']) await expect(store.get(`dpop-jti:${id}`)).resolves.toBe('1');
    // Room comes back when an entry goes.
    await store.delete('dpop-jti:cccc');
    await store.set('dpop-jti:dddd', '1', 60_000);
    await expect(store.get('dpop-jti:dddd')).resolves.toBe('1');
  });

  it('expired entries make room again', async () => {
    const budget = entryBytes('dpop-jti:aaaa', '1') * 2;
    const store = new MemoryStore({ securityMaxBytes: budget });
    await store.set('dpop-jti:aaaa', '1', 50);
    await store.set('dpop-jti:bbbb', '1', 60_000);
    await expect(store.set('dpop-jti:cccc', '1', 60_000)).rejects.toBeInstanceOf(SecurityStateFullError);
    await sleep(120);
    await store.set('dpop-jti:cccc', '1', 60_000);
    await expect(store.get('dpop-jti:cccc')).resolves.toBe('1');
    await expect(store.get('dpop-jti:bbbb')).resolves.toBe('1');
  });

  it('TOTP replay markers (totp-used:, totp-last:) are security state by default: an LRU cap never drops them', async () => {
    const store = new MemoryStore({ max: 1 });
    for (let index = 0; index < 10; index += 1) {
      await store.increment(`totp-used:u${index}:123`, 60_000);
      await store.set(`totp-last:u${index}`, '123', 60_000);
    }
    for (let index = 0; index < 10; index += 1) {
      await expect(store.increment(`totp-used:u${index}:123`, 60_000)).resolves.toBe(2);
      await expect(store.get(`totp-last:u${index}`)).resolves.toBe('123');
    }
    // An ordinary prefix under the same cap keeps one entry: the cap is in force.
    for (let index = 0; index < 10; index += 1) await store.set(`pending-sign-in:${index}`, '{}', 60_000);
    await expect(store.get('pending-sign-in:0')).resolves.toBeNull();
  });

  it('securityPrefixes makes another prefix security state', async () => {
    const store = new MemoryStore({ max: 1, securityPrefixes: ['revoked', 'throttle', 'code-used'] });
    for (let index = 0; index < 10; index += 1) await store.set(`code-used:${index}`, 'g', 60_000);
    for (let index = 0; index < 10; index += 1) await expect(store.get(`code-used:${index}`)).resolves.toBe('g');
  });

  it('a login whose address counter cannot be kept fails closed: 429, the user store is not asked, onError hears why', async () => {
    const store = new MemoryStore({ securityMaxBytes: 2_000 });
    const authenticate = vi.fn(baseOptions().users!.authenticate);
    const errors: unknown[] = [];
    const sentinel: Sentinel = makeSentinel({ store, users: { authenticate }, onError: (error) => errors.push(error) });
    // A first sign-in stores the username digests' key (`throttle:digest-key`) before the area fills.
    await signIn(sentinel);
    authenticate.mockClear();
    let filler = 0;
    for (;;) {
      try {
        await store.set(`throttle:filler:${filler}`, '1', 60_000);
        filler += 1;
      } catch {
        break;
      }
    }
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }, '203.0.113.5');
    // Refused as a throttled attempt (src/authorize/state/throttle.ts), never let through uncounted.
    expect(response.status).toBe(429);
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect(response.headers.location).toBeUndefined();
    expect(authenticate).not.toHaveBeenCalled();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SecurityStateFullError);
    expect((errors[0] as SecurityStateFullError).prefix).toBe('throttle');
  });
});

describe("the session index is security state: ending a user's sessions always finds them", () => {
  /** Signs `alice` in as `u-alice` and everyone else as `user-<name>`. */
  const users: SentinelOptions['users'] = {
    authenticate: async ({ username, password }) =>
      password === PASSWORD ? { id: username === USERNAME ? USER_ID : `user-${username}` } : null,
  };

  it("other users' sign-ins never evict a user's index, even with max: 20: signing her out still ends her grants", async () => {
    const sentinel = makeSentinel({ store: new MemoryStore({ max: 20 }), users });
    const { tokens } = await signInWithSession(sentinel);
    for (let index = 0; index < 20; index += 1) await signIn(sentinel, { username: `other-${index}`, password: PASSWORD });
    // Her session record may be evicted (that only ends it early); the grants issued through it are found by the index.
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(1);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual({ guard: false, introspection: false, refresh: false });
  });

  it('a sign-in whose index cannot be kept fails closed: 500, no session cookie, onError hears why', async () => {
    const store = new MemoryStore({ sessionIndexMaxBytes: 1_800 });
    const errors: unknown[] = [];
    const sentinel: Sentinel = makeSentinel({ store, users, onError: (error) => errors.push(error) });
    // Each user's first sign-in adds an index of about 380 bytes: four fit, the fifth does not.
    for (let index = 0; index < 4; index += 1) await signIn(sentinel, { username: `other-${index}`, password: PASSWORD });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: 'other-4', password: PASSWORD });
    expect(response.status).toBe(500);
    expect(response.headers.location).toBeUndefined();
    expect(String(response.headers['set-cookie'] ?? '')).not.toContain('sentinel_session=');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SecurityStateFullError);
    expect((errors[0] as SecurityStateFullError).prefix).toBe('user-sessions');
    // The indexes already kept are all still there.
    for (let index = 0; index < 4; index += 1) {
      expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: `user-other-${index}` })).toHaveLength(1);
    }
  });
});

describe('decrement (the throttle refund)', () => {
  it('never starts a counter, never goes below zero, keeps the window', async () => {
    // lru-cache times TTLs by performance.now(): a clock of the test's own, so a loaded host cannot stretch the
    // first pause past the 200 ms window (a real sleep did, and the decrement found the counter gone).
    let now = 1_000;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const store = new MemoryStore();
      await expect(store.decrement('throttle:ip:x')).resolves.toBe(0);
      await expect(store.get('throttle:ip:x')).resolves.toBeNull();
      await store.increment('throttle:ip:x', 200);
      await store.increment('throttle:ip:x', 200);
      now += 120;
      await expect(store.decrement('throttle:ip:x')).resolves.toBe(1);
      await expect(store.decrement('throttle:ip:x')).resolves.toBe(0);
      await expect(store.decrement('throttle:ip:x')).resolves.toBe(0);
      // The decrements kept the window: it still ends 200 ms after the first increment.
      now += 120;
      await expect(store.get('throttle:ip:x')).resolves.toBeNull();
    } finally {
      clock.mockRestore();
    }
  });
});
