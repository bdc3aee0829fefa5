/**
 * The per-address bound on public clients' device authorization requests (RFC 8628 §3.1). A public client is known
 * by its client_id alone, so anyone could create device records and user-code pointers, kept 2 × expiresIn, without
 * any credential: only the entry of user codes was throttled. Now every valid request of a public client counts
 * against its client address (`deviceFlow.publicAuthorizationsPerAddress` per 2 × expiresIn, in the Store),
 * confidential clients are not slowed, and a store that fails fails the request closed.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MemoryStore, type SentinelEvent, type SentinelOptions, type Store } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { movableClock } from './helpers/clock.js';
import {
  DEVICE_AUTHORIZATION_PATH,
  DEVICE_CLIENT_ID,
  DEVICE_CLIENT_SECRET,
  DEVICE_SECRET_CLIENT_ID,
  deviceApps,
} from './helpers/device-drive.js';
import { jsonOf, postForm, recordingStore, type StoreWrite } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';

function sentinelWith(limit: number, extra: Partial<SentinelOptions> = {}) {
  return makeSentinel({ apps: deviceApps(), deviceFlow: { publicAuthorizationsPerAddress: limit }, ...extra });
}

type Device = ReturnType<typeof makeSentinel>;

/** A valid device authorization request of the public device app (no credential) from `ip`. */
function publicRequest(sentinel: Device, ip: string, headers: Record<string, string> = {}) {
  const form = new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'openid' });
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString(), { ip, headers });
}

function confidentialRequest(sentinel: Device, ip: string) {
  const form = new URLSearchParams({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET });
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString(), { ip });
}

/** The writes of device records and user-code pointers. */
function recordWrites(writes: StoreWrite[]): StoreWrite[] {
  return writes.filter((write) => write.key.startsWith('device:') || write.key.startsWith('device-user:'));
}

async function statuses(responses: Promise<{ status: number }>[]): Promise<number[]> {
  return (await Promise.all(responses)).map((response) => response.status);
}

describe('device authorization requests of public clients, per client address', () => {
  it('at most the limit per window, then 429 temporarily_unavailable with Retry-After, nothing stored', async () => {
    const store = recordingStore(new MemoryStore());
    const events: SentinelEvent[] = [];
    const sentinel = sentinelWith(3, { store, onEvent: (event) => events.push(event) });
    for (let index = 0; index < 3; index += 1) expect((await publicRequest(sentinel, '198.51.100.9')).status).toBe(200);
    store.reset();
    events.length = 0;
    const refused = await publicRequest(sentinel, '198.51.100.9');
    expect(refused.status).toBe(429);
    expect(jsonOf(refused)).toMatchObject({ error: 'temporarily_unavailable' });
    expect(jsonOf(refused).device_code).toBeUndefined();
    // The window is the time a device record is kept: 2 × expiresIn (600 s by default).
    expect(refused.headers['retry-after']).toBe('1200');
    expect(refused.headers['cache-control']).toBe('no-store');
    // Over the limit already: refused after a read, so the flood writes nothing, not even its counter.
    expect(store.writes).toEqual([]);
    expect(events.filter((event) => event.type === 'device.authorized')).toEqual([]);
    expect((await publicRequest(sentinel, '198.51.100.10')).status).toBe(200);
  });

  it('does not slow confidential clients, even from an address over the limit', async () => {
    const sentinel = sentinelWith(1);
    expect((await publicRequest(sentinel, '198.51.100.20')).status).toBe(200);
    expect((await publicRequest(sentinel, '198.51.100.20')).status).toBe(429);
    for (let index = 0; index < 5; index += 1) expect((await confidentialRequest(sentinel, '198.51.100.20')).status).toBe(200);
  });

  it('counts IPv6 per /64', async () => {
    const sentinel = sentinelWith(2);
    expect((await publicRequest(sentinel, '2001:db8:1:2::1')).status).toBe(200);
    expect((await publicRequest(sentinel, '2001:db8:1:2:ffff::9')).status).toBe(200);
    expect((await publicRequest(sentinel, '2001:0db8:0001:0002:abcd::1')).status).toBe(429);
    expect((await publicRequest(sentinel, '2001:db8:1:3::1')).status).toBe(200);
  });

  it('believes X-Forwarded-For only from a trusted proxy (trustProxy)', async () => {
    const direct = sentinelWith(1);
    expect((await publicRequest(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(200);
    // A made-up header does not buy a fresh budget: the socket address is counted.
    expect((await publicRequest(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(429);
    const proxied = sentinelWith(1, { trustProxy: 1 });
    expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(200);
    expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(200);
    expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(429);
  });

  it('gives one slot each to a concurrent burst: exactly the limit of records is stored', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(4, { store });
    const results = await statuses(Array.from({ length: 12 }, () => publicRequest(sentinel, '198.51.100.40')));
    expect(results.filter((status) => status === 200)).toHaveLength(4);
    expect(results.filter((status) => status === 429)).toHaveLength(8);
    expect(store.writes.filter((write) => write.key.startsWith('device:'))).toHaveLength(4);
    expect(store.writes.filter((write) => write.key.startsWith('device-user:'))).toHaveLength(4);
  });

  it('counts only valid requests, and opens a new window after 2 × expiresIn', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(1, { store, deviceFlow: { publicAuthorizationsPerAddress: 1, expiresIn: 60 } });
    const bad = new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'a"b' });
    for (let index = 0; index < 3; index += 1) {
      const response = await postForm(sentinel, DEVICE_AUTHORIZATION_PATH, bad.toString(), { ip: '198.51.100.50' });
      expect(jsonOf(response).error).toBe('invalid_scope');
    }
    expect(store.writes).toEqual([]);
    expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(200);
    const refused = await publicRequest(sentinel, '198.51.100.50');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('120');
    const clock = movableClock();
    try {
      // Past expiresIn, the device record is still kept (late polls hear expired_token): so is the address's slot.
      await clock.advance(100_000);
      expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(429);
      await clock.advance(20_100);
      expect((await publicRequest(sentinel, '198.51.100.50')).status).toBe(200);
    } finally {
      clock.restore();
    }
  });

  it('fails closed when the store fails: 500 server_error, reported, nothing stored', async () => {
    const inner = new MemoryStore();
    const errors: unknown[] = [];
    const failing: Store = {
      get: (key) => (key.startsWith('throttle-device:') ? Promise.reject(new Error('store down')) : inner.get(key)),
      set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
      take: (key) => inner.take(key),
      delete: (key) => inner.delete(key),
      increment: (key, ttlMs) => inner.increment(key, ttlMs),
      swap: (entries) => inner.swap(entries),
    };
    const store = recordingStore(failing);
    const sentinel = sentinelWith(10, { store, onError: (error) => errors.push(error) });
    const response = await publicRequest(sentinel, '198.51.100.60');
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    expect(store.writes).toEqual([]);
    // A confidential client is not counted, so the failing counter does not touch its requests.
    expect((await confidentialRequest(sentinel, '198.51.100.60')).status).toBe(200);
    expect(recordWrites(store.writes)).toHaveLength(2);
  });

  it('a full counter area refuses public requests with 429, and leaves the other throttle areas alone', async () => {
    const store = new MemoryStore({ securityMaxBytes: entryBytes('throttle-device:ip:192.0.2.100', '1') * 3 });
    const errors: unknown[] = [];
    const sentinel = sentinelWith(1000, { store, onError: (error) => errors.push(error) });
    const results: number[] = [];
    for (let index = 0; index < 8; index += 1) results.push((await publicRequest(sentinel, `192.0.2.${100 + index}`)).status);
    expect(results.slice(0, 3)).toEqual([200, 200, 200]);
    expect(results.slice(-2)).toEqual([429, 429]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'SecurityStateFullError', prefix: 'throttle-device' });
    await expect(store.increment('throttle:ip:203.0.113.7', 60_000)).resolves.toBe(1);
    await expect(store.increment('throttle-par:ip:203.0.113.7', 60_000)).resolves.toBe(1);
  });

  it('keeps the counters as security state even under a securityPrefixes list written before them', async () => {
    const key = 'throttle-device:ip:192.0.2.100';
    const store = new MemoryStore({ securityPrefixes: ['throttle'], securityMaxBytes: entryBytes(key, '1') });
    await store.increment(key, 60_000);
    await expect(store.increment('throttle-device:ip:192.0.2.101', 60_000)).rejects.toMatchObject({ name: 'SecurityStateFullError' });
  });

  it('is an option with a default of 1000, refused when not a positive integer', async () => {
    const options = (deviceFlow: unknown) => ({ apps: deviceApps(), deviceFlow }) as Partial<SentinelOptions>;
    expect(() => makeSentinel(options({ publicAuthorizationsPerAddress: 0 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ publicAuthorizationsPerAddress: 1.5 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ authorizationsPerAddress: 5 }))).toThrow(ConfigurationError);
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ apps: deviceApps(), store });
    expect((await publicRequest(sentinel, '198.51.100.70')).status).toBe(200);
    expect(await store.get('throttle-device:ip:198.51.100.70')).toBe('1');
  });
});

describe('device authorization requests of public clients, per IPv6 /48 (deviceFlow.publicAuthorizationsPerNetwork)', () => {
  /** The `index`-th /64 of the /48 2001:db8:9::/48. */
  const slash64 = (index: number) => `2001:db8:9:${index.toString(16)}::1`;

  it('bounds 70 distinct /64s of one /48 at ten times the per-address limit, while another /48 still gets through', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith(5, { store });
    const results: number[] = [];
    for (let index = 0; index < 70; index += 1) results.push((await publicRequest(sentinel, slash64(index))).status);
    expect(results.slice(0, 50).every((status) => status === 200)).toBe(true);
    expect(results.slice(50).every((status) => status === 429)).toBe(true);
    expect(recordWrites(store.writes).filter((write) => write.key.startsWith('device:'))).toHaveLength(50);
    const counters = new Set(store.writes.filter((write) => write.key.startsWith('throttle-device:ip:2001:db8:9:')).map((w) => w.key));
    expect(counters.size).toBe(50);
    store.reset();
    const refused = await publicRequest(sentinel, slash64(70));
    expect(refused.status).toBe(429);
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    expect(refused.headers['retry-after']).toBe('1200');
    // Over already: refused after a read, no counter of its /64 created.
    expect(store.writes).toEqual([]);
    expect((await publicRequest(sentinel, '2001:db8:a:1::1')).status).toBe(200);
    expect((await publicRequest(sentinel, '198.51.100.90')).status).toBe(200);
  });

  it('is an option, by default ten times publicAuthorizationsPerAddress; IPv4 is not counted per network', async () => {
    const options = (deviceFlow: unknown) => ({ apps: deviceApps(), deviceFlow }) as Partial<SentinelOptions>;
    expect(() => makeSentinel(options({ publicAuthorizationsPerNetwork: 0 }))).toThrow(ConfigurationError);
    expect(() => makeSentinel(options({ publicAuthorizationsPerNetwork: 2.5 }))).toThrow(ConfigurationError);
    expect(contextOf(makeSentinel(options({}))).config.deviceFlow.publicAuthorizationsPerNetwork).toBe(10_000);
    expect(contextOf(makeSentinel(options({ publicAuthorizationsPerAddress: 4 }))).config.deviceFlow.publicAuthorizationsPerNetwork).toBe(
      40,
    );
    const sentinel = makeSentinel(options({ publicAuthorizationsPerAddress: 1, publicAuthorizationsPerNetwork: 2 }));
    expect((await publicRequest(sentinel, slash64(1))).status).toBe(200);
    expect((await publicRequest(sentinel, slash64(2))).status).toBe(200);
    expect((await publicRequest(sentinel, slash64(3))).status).toBe(429);
    for (let index = 0; index < 4; index += 1) expect((await publicRequest(sentinel, `198.51.100.${130 + index}`)).status).toBe(200);
  });
});
