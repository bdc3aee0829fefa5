/**
 * The per-address bound on public clients' pushed authorization requests (RFC 9126 §2.3 `429`). A public client is
 * known by its client_id alone, so anyone could push records of up to 8 KiB that live 60 s without any credential;
 * only pushes carrying DPoP were counted. Now every push of a public client counts against its client address
 * (`par.publicPushesPerAddress` per 60 s, in the Store), confidential clients' pushes are not slowed, and a store
 * that fails fails the push closed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MemoryStore, type SentinelOptions, type Store } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { jsonOf, postForm, recordingStore } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { PAR_PATH } from './helpers/security-state-flow.js';
import { movableClock } from './helpers/clock.js';
import { pkcePair } from './helpers/pkce.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function sentinelWith(limit: number, extra: Partial<SentinelOptions> = {}) {
  return makeSentinel({ par: { publicPushesPerAddress: limit }, ...extra });
}

type Pusher = ReturnType<typeof makeSentinel>;

/** A valid push of the public client (no credential, no DPoP) from `ip`. */
function publicPush(sentinel: Pusher, ip: string, headers: Record<string, string> = {}) {
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: PUBLIC_CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'x'.repeat(4000),
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { ip, headers });
}

function confidentialPush(sentinel: Pusher, ip: string) {
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { ip });
}

async function statuses(responses: Promise<{ status: number }>[]): Promise<number[]> {
  return (await Promise.all(responses)).map((response) => response.status);
}

describe('pushes of public clients, per client address', () => {
  it('at most publicPushesPerAddress per window, then 429 temporarily_unavailable with Retry-After, nothing stored', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(3, { store });
    for (let index = 0; index < 3; index += 1) expect((await publicPush(sentinel, '198.51.100.9')).status).toBe(201);
    store.reset();
    const refused = await publicPush(sentinel, '198.51.100.9');
    expect(refused.status).toBe(429);
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    expect(jsonOf(refused).request_uri).toBeUndefined();
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['cache-control']).toBe('no-store');
    // Over the limit already: refused after a read, so the flood writes nothing, not even its counter.
    expect(store.writes).toEqual([]);
    expect((await publicPush(sentinel, '198.51.100.10')).status).toBe(201);
  });

  it('does not slow confidential clients, even from an address over the limit', async () => {
    const sentinel = sentinelWith(1);
    expect((await publicPush(sentinel, '198.51.100.20')).status).toBe(201);
    expect((await publicPush(sentinel, '198.51.100.20')).status).toBe(429);
    for (let index = 0; index < 5; index += 1) expect((await confidentialPush(sentinel, '198.51.100.20')).status).toBe(201);
  });

  it('counts IPv6 per /64', async () => {
    const sentinel = sentinelWith(2);
    expect((await publicPush(sentinel, '2001:db8:1:2::1')).status).toBe(201);
    expect((await publicPush(sentinel, '2001:db8:1:2:ffff::9')).status).toBe(201);
    expect((await publicPush(sentinel, '2001:0db8:0001:0002:abcd::1')).status).toBe(429);
    expect((await publicPush(sentinel, '2001:db8:1:3::1')).status).toBe(201);
  });

  it('believes X-Forwarded-For only from a trusted proxy (trustProxy)', async () => {
    const direct = sentinelWith(1);
    expect((await publicPush(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(201);
    // A made-up header does not buy a fresh budget: the socket address is counted.
    expect((await publicPush(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(429);
    const proxied = sentinelWith(1, { trustProxy: 1 });
    expect((await publicPush(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(201);
    expect((await publicPush(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(201);
    expect((await publicPush(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(429);
  });

  it('gives one slot each to a concurrent burst: exactly the limit is stored', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(4, { store });
    const results = await statuses(Array.from({ length: 12 }, () => publicPush(sentinel, '198.51.100.40')));
    expect(results.filter((status) => status === 201)).toHaveLength(4);
    expect(results.filter((status) => status === 429)).toHaveLength(8);
    expect(store.writes.filter((write) => write.key.startsWith('par:'))).toHaveLength(4);
  });

  it('counts only valid pushes, and opens a new window after 60 s', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store });
    const bad = new URLSearchParams({ response_type: 'code', client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI });
    for (let index = 0; index < 3; index += 1) {
      expect((await postForm(sentinel, PAR_PATH, bad.toString(), { ip: '198.51.100.50' })).status).toBe(400);
    }
    expect(store.writes).toEqual([]);
    expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(201);
    expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(429);
    const clock = movableClock();
    try {
      await clock.advance(60_100);
      expect((await publicPush(sentinel, '198.51.100.50')).status).toBe(201);
    } finally {
      clock.restore();
    }
  });

  it('fails closed when the store fails: 500 server_error, reported, nothing stored', async () => {
    const inner = new MemoryStore();
    const errors: unknown[] = [];
    const failing: Store = {
      get: (key) => (key.startsWith('throttle-par:') ? Promise.reject(new Error('store down')) : inner.get(key)),
      set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
      take: (key) => inner.take(key),
      delete: (key) => inner.delete(key),
      increment: (key, ttlMs) => inner.increment(key, ttlMs),
      swap: (entries) => inner.swap(entries),
    };
    const store = recordingStore(failing);
    const sentinel = sentinelWith(10, { store, onError: (error) => errors.push(error) });
    const response = await publicPush(sentinel, '198.51.100.60');
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    expect(store.writes).toEqual([]);
    // A confidential client is not counted, so the failing counter does not touch its pushes.
    expect((await confidentialPush(sentinel, '198.51.100.60')).status).toBe(201);
  });

  it('a full counter area refuses public pushes with 429, and leaves the login throttle area alone', async () => {
    const store = new MemoryStore({ securityMaxBytes: entryBytes('throttle-par:ip:192.0.2.100', '1') * 3 });
    const errors: unknown[] = [];
    const sentinel = sentinelWith(1000, { store, onError: (error) => errors.push(error) });
    const results: number[] = [];
    for (let index = 0; index < 8; index += 1) results.push((await publicPush(sentinel, `192.0.2.${100 + index}`)).status);
    expect(results.slice(0, 3)).toEqual([201, 201, 201]);
    expect(results.slice(-2)).toEqual([429, 429]);
    expect(errors).toHaveLength(1);
    await expect(store.increment('throttle:ip:203.0.113.7', 60_000)).resolves.toBe(1);
  });

  it('keeps the counters as security state even under a securityPrefixes list written before them', async () => {
    const store = new MemoryStore({ securityPrefixes: ['throttle'], securityMaxBytes: entryBytes('throttle-par:ip:192.0.2.100', '1') });
    await store.increment('throttle-par:ip:192.0.2.100', 60_000);
    await expect(store.increment('throttle-par:ip:192.0.2.101', 60_000)).rejects.toMatchObject({ name: 'SecurityStateFullError' });
  });

  it('is an option with a default of 1000, refused when not a positive integer', async () => {
    expect(() => makeSentinel({ par: { publicPushesPerAddress: 0 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { publicPushesPerAddress: 1.5 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { pushesPerAddress: 5 } } as unknown as Partial<SentinelOptions>)).toThrow(ConfigurationError);
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    expect((await publicPush(sentinel, '198.51.100.70')).status).toBe(201);
    expect(await store.get('throttle-par:ip:198.51.100.70')).toBe('1');
  });
});

describe('pushes of public clients, per IPv6 /48 (par.publicPushesPerNetwork)', () => {
  /** The `index`-th /64 of the /48 2001:db8:7::/48. */
  const slash64 = (index: number) => `2001:db8:7:${index.toString(16)}::1`;

  it('bounds 70 distinct /64s of one /48 at ten times the per-address limit, while another /48 still gets through', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(5, { store });
    const results: number[] = [];
    for (let index = 0; index < 70; index += 1) results.push((await publicPush(sentinel, slash64(index))).status);
    expect(results.slice(0, 50).every((status) => status === 201)).toBe(true);
    expect(results.slice(50).every((status) => status === 429)).toBe(true);
    // At most the network's limit of /64 counters: the ones refused by their network created none.
    const slash64Counters = new Set(store.writes.filter((write) => write.key.startsWith('throttle-par:ip:2001:db8:7:')).map((w) => w.key));
    expect(slash64Counters.size).toBe(50);
    expect(await store.get('throttle-par:net:2001:db8:7')).toBe('50');
    const refused = await publicPush(sentinel, slash64(70));
    expect(refused.status).toBe(429);
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    expect(jsonOf(refused).error_description).toContain('network');
    expect(refused.headers['retry-after']).toBe('60');
    expect((await publicPush(sentinel, '2001:db8:8:1::1')).status).toBe(201);
    expect((await publicPush(sentinel, '198.51.100.90')).status).toBe(201);
  });

  it('refuses a /48 already over after a read: nothing written, not even a /64 counter', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store, par: { publicPushesPerAddress: 1, publicPushesPerNetwork: 3 } });
    for (let index = 0; index < 3; index += 1) expect((await publicPush(sentinel, slash64(index))).status).toBe(201);
    store.reset();
    for (let index = 3; index < 8; index += 1) expect((await publicPush(sentinel, slash64(index))).status).toBe(429);
    expect(store.writes).toEqual([]);
  });

  it('gives one slot each to a concurrent burst from many /64s: exactly the network limit is stored', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store, par: { publicPushesPerAddress: 1, publicPushesPerNetwork: 6 } });
    const results = await statuses(Array.from({ length: 24 }, (_, index) => publicPush(sentinel, slash64(index))));
    expect(results.filter((status) => status === 201)).toHaveLength(6);
    expect(store.writes.filter((write) => write.key.startsWith('par:'))).toHaveLength(6);
    expect(store.writes.filter((write) => write.key.startsWith('throttle-par:ip:'))).toHaveLength(6);
  });

  it('gives the network its slot back when the /64 refuses a push: one /64 burst does not spend the /48 share', async () => {
    const store = new MemoryStore();
    const sentinel = sentinelWith(1, { store, par: { publicPushesPerAddress: 2, publicPushesPerNetwork: 4 } });
    const results = await statuses(Array.from({ length: 8 }, () => publicPush(sentinel, slash64(1))));
    expect(results.filter((status) => status === 201)).toHaveLength(2);
    expect(await store.get('throttle-par:net:2001:db8:7')).toBe('2');
    expect((await publicPush(sentinel, slash64(2))).status).toBe(201);
    expect((await publicPush(sentinel, slash64(3))).status).toBe(201);
    expect((await publicPush(sentinel, slash64(4))).status).toBe(429);
  });

  it('does not count IPv4 per network: an address is its own', async () => {
    const sentinel = sentinelWith(1, { par: { publicPushesPerAddress: 1, publicPushesPerNetwork: 2 } });
    for (let index = 0; index < 6; index += 1) expect((await publicPush(sentinel, `198.51.100.${110 + index}`)).status).toBe(201);
  });

  it('fails closed when the network counter cannot be read: 500 server_error, reported, nothing stored', async () => {
    const inner = new MemoryStore();
    const errors: unknown[] = [];
    const failing: Store = {
      get: (key) => (key.startsWith('throttle-par:net:') ? Promise.reject(new Error('store down')) : inner.get(key)),
      set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
      take: (key) => inner.take(key),
      delete: (key) => inner.delete(key),
      increment: (key, ttlMs) => inner.increment(key, ttlMs),
      swap: (entries) => inner.swap(entries),
    };
    const store = recordingStore(failing);
    const sentinel = sentinelWith(10, { store, onError: (error) => errors.push(error) });
    const response = await publicPush(sentinel, slash64(1));
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    expect(store.writes).toEqual([]);
    // IPv4 has no network counter, so its pushes are not touched.
    expect((await publicPush(sentinel, '198.51.100.120')).status).toBe(201);
  });

  it('is an option, by default ten times publicPushesPerAddress, refused when not a positive integer', () => {
    expect(() => makeSentinel({ par: { publicPushesPerNetwork: 0 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ par: { publicPushesPerNetwork: 2.5 } })).toThrow(ConfigurationError);
    const par = (options: Partial<SentinelOptions>) => contextOf(makeSentinel(options)).config.par;
    expect(par({})).toEqual({ publicPushesPerAddress: 1000, publicPushesPerNetwork: 10_000 });
    expect(par({ par: { publicPushesPerAddress: 7 } }).publicPushesPerNetwork).toBe(70);
    expect(par({ par: { publicPushesPerNetwork: 3 } })).toEqual({ publicPushesPerAddress: 1000, publicPushesPerNetwork: 3 });
  });
});
