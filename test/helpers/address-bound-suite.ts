/**
 * The cases of the per-address bound on public clients' unauthenticated requests (`src/http/address-bound.ts`) that
 * every endpoint counting under it must pass: the pushes of PAR and the device authorization requests. Each test file
 * calls {@link addressBoundSuite} with its endpoint's requests and what its accepted requests store; the cases that
 * differ per endpoint (the window's length, what counts as valid, the options) stay in that file.
 */
import { describe, expect, it } from 'vitest';
import {
  MemoryStore,
  type Sentinel,
  type SentinelEvent,
  type SentinelOptions,
  type SentinelResponse,
  type Store,
} from '../../src/index.js';
import { entryBytes } from '../../src/stores/memory-size.js';
import { jsonOf, recordingStore } from './direct-flow.js';

/** The bound's limits for one sentinel: per address, and per IPv6 /48 when given (else the endpoint's default). */
export interface BoundLimits {
  address: number;
  network?: number;
}

/** One endpoint counted under the bound. */
export interface AddressBoundEndpoint {
  /** What the requests are, for the describe blocks ("pushes", "device authorization requests"). */
  name: string;
  /** The option that sets the network limit, for the /48 describe block ("par.publicPushesPerNetwork"). */
  networkOption: string;
  /** The status of an accepted request. */
  accepted: 200 | 201;
  /** A sentinel whose bound has `limits`, with `extra` options. */
  sentinelWith(limits: BoundLimits, extra?: Partial<SentinelOptions>): Sentinel;
  /** A valid request of a public client (no credential) from `ip`. */
  publicRequest(sentinel: Sentinel, ip: string, headers?: Record<string, string>): Promise<SentinelResponse>;
  /** A valid request of a confidential client from `ip`. */
  confidentialRequest(sentinel: Sentinel, ip: string): Promise<SentinelResponse>;
  /** The key prefixes (with their colon) of what one accepted request stores: one write under each. */
  recordPrefixes: string[];
  /** The counters' prefix, without the colon ("throttle-par"). */
  counterPrefix: string;
  /** The other throttle areas, without the colon, a full area of this bound must leave alone. */
  otherAreas: string[];
  /** The field of an accepted answer a refused one must not carry ("request_uri"). */
  acceptedField: string;
  /** The default window in seconds, as Retry-After says it. */
  retryAfter: string;
  /** The event an accepted request emits, none of which a refused one may, when the endpoint has one. */
  acceptedEvent?: SentinelEvent['type'];
}

async function statuses(responses: Promise<{ status: number }>[]): Promise<number[]> {
  return (await Promise.all(responses)).map((response) => response.status);
}

/** `inner`, except that reading a key under `prefix` fails. */
export function failingReadsOf(inner: Store, prefix: string): Store {
  return {
    get: (key) => (key.startsWith(prefix) ? Promise.reject(new Error('store down')) : inner.get(key)),
    set: (key, value, ttlMs) => inner.set(key, value, ttlMs),
    take: (key) => inner.take(key),
    delete: (key) => inner.delete(key),
    increment: (key, ttlMs) => inner.increment(key, ttlMs),
    swap: (entries) => inner.swap(entries),
  };
}

/** Registers the shared cases of the bound for `endpoint`. */
export function addressBoundSuite(endpoint: AddressBoundEndpoint): void {
  const { accepted, sentinelWith, publicRequest, confidentialRequest, recordPrefixes, counterPrefix } = endpoint;
  const writesUnder = (writes: { key: string }[], prefix: string) => writes.filter((write) => write.key.startsWith(prefix));

  describe(`${endpoint.name} of public clients, per client address`, () => {
    it('at most the limit per window, then 429 temporarily_unavailable with Retry-After, nothing stored', async () => {
      const store = recordingStore(new MemoryStore());
      const events: SentinelEvent[] = [];
      const sentinel = sentinelWith({ address: 3 }, { store, onEvent: (event) => events.push(event) });
      for (let index = 0; index < 3; index += 1) expect((await publicRequest(sentinel, '198.51.100.9')).status).toBe(accepted);
      store.reset();
      events.length = 0;
      const refused = await publicRequest(sentinel, '198.51.100.9');
      expect(refused.status).toBe(429);
      expect(jsonOf(refused).error).toBe('temporarily_unavailable');
      expect(jsonOf(refused)[endpoint.acceptedField]).toBeUndefined();
      // The window is the time the stored records are kept.
      expect(refused.headers['retry-after']).toBe(endpoint.retryAfter);
      expect(refused.headers['cache-control']).toBe('no-store');
      // Over the limit already: refused after a read, so the flood writes nothing, not even its counter.
      expect(store.writes).toEqual([]);
      if (endpoint.acceptedEvent !== undefined) expect(events.filter((event) => event.type === endpoint.acceptedEvent)).toEqual([]);
      // Audited once, as every refusal of these endpoints is (the route's denied event): token.denied naming the rate.
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'token.denied',
        error: 'temporarily_unavailable',
        reason: expect.stringContaining('from this address'),
        ip: '198.51.100.9',
        outcome: 'failure',
      });
      expect((await publicRequest(sentinel, '198.51.100.10')).status).toBe(accepted);
    });

    it('does not slow confidential clients, even from an address over the limit', async () => {
      const sentinel = sentinelWith({ address: 1 });
      expect((await publicRequest(sentinel, '198.51.100.20')).status).toBe(accepted);
      expect((await publicRequest(sentinel, '198.51.100.20')).status).toBe(429);
      for (let index = 0; index < 5; index += 1) expect((await confidentialRequest(sentinel, '198.51.100.20')).status).toBe(accepted);
    });

    it('counts IPv6 per /64', async () => {
      const sentinel = sentinelWith({ address: 2 });
      expect((await publicRequest(sentinel, '2001:db8:1:2::1')).status).toBe(accepted);
      expect((await publicRequest(sentinel, '2001:db8:1:2:ffff::9')).status).toBe(accepted);
      expect((await publicRequest(sentinel, '2001:0db8:0001:0002:abcd::1')).status).toBe(429);
      expect((await publicRequest(sentinel, '2001:db8:1:3::1')).status).toBe(accepted);
    });

    it('believes X-Forwarded-For only from a trusted proxy (trustProxy)', async () => {
      const direct = sentinelWith({ address: 1 });
      expect((await publicRequest(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(accepted);
      // A made-up header does not buy a fresh budget: the socket address is counted.
      expect((await publicRequest(direct, '198.51.100.30', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(429);
      const proxied = sentinelWith({ address: 1 }, { trustProxy: 1 });
      expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(accepted);
      expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.2' })).status).toBe(accepted);
      expect((await publicRequest(proxied, '10.0.0.1', { 'x-forwarded-for': '192.0.2.1' })).status).toBe(429);
    });

    it('gives one slot each to a concurrent burst: exactly the limit of records is stored', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ address: 4 }, { store });
      const results = await statuses(Array.from({ length: 12 }, () => publicRequest(sentinel, '198.51.100.40')));
      expect(results.filter((status) => status === accepted)).toHaveLength(4);
      expect(results.filter((status) => status === 429)).toHaveLength(8);
      for (const prefix of recordPrefixes) expect(writesUnder(store.writes, prefix)).toHaveLength(4);
    });

    it('fails closed when the store fails: 500 server_error, reported, nothing stored', async () => {
      const errors: unknown[] = [];
      const store = recordingStore(failingReadsOf(new MemoryStore(), `${counterPrefix}:`));
      const sentinel = sentinelWith({ address: 10 }, { store, onError: (error) => errors.push(error) });
      const response = await publicRequest(sentinel, '198.51.100.60');
      expect(response.status).toBe(500);
      expect(jsonOf(response).error).toBe('server_error');
      expect(errors).toHaveLength(1);
      expect(store.writes).toEqual([]);
      // A confidential client is not counted, so the failing counter does not touch its requests.
      expect((await confidentialRequest(sentinel, '198.51.100.60')).status).toBe(accepted);
      for (const prefix of recordPrefixes) expect(writesUnder(store.writes, prefix)).toHaveLength(1);
    });

    it('a full counter area refuses public requests with 429, and leaves the other throttle areas alone', async () => {
      const store = new MemoryStore({ securityMaxBytes: entryBytes(`${counterPrefix}:ip:192.0.2.100`, '1') * 3 });
      const errors: unknown[] = [];
      const sentinel = sentinelWith({ address: 1000 }, { store, onError: (error) => errors.push(error) });
      const results: number[] = [];
      for (let index = 0; index < 8; index += 1) results.push((await publicRequest(sentinel, `192.0.2.${100 + index}`)).status);
      expect(results.slice(0, 3)).toEqual([accepted, accepted, accepted]);
      expect(results.slice(-2)).toEqual([429, 429]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ name: 'SecurityStateFullError', prefix: counterPrefix });
      for (const area of endpoint.otherAreas) await expect(store.increment(`${area}:ip:203.0.113.7`, 60_000)).resolves.toBe(1);
    });

    it('keeps the counters as security state even under a securityPrefixes list written before them', async () => {
      const key = `${counterPrefix}:ip:192.0.2.100`;
      const store = new MemoryStore({ securityPrefixes: ['throttle'], securityMaxBytes: entryBytes(key, '1') });
      await store.increment(key, 60_000);
      await expect(store.increment(`${counterPrefix}:ip:192.0.2.101`, 60_000)).rejects.toMatchObject({ name: 'SecurityStateFullError' });
    });
  });

  describe(`${endpoint.name} of public clients, per IPv6 /48 (${endpoint.networkOption})`, () => {
    /** The `index`-th /64 of the /48 2001:db8:7::/48. */
    const slash64 = (index: number) => `2001:db8:7:${index.toString(16)}::1`;

    it('bounds 70 distinct /64s of one /48 at ten times the per-address limit, while another /48 still gets through', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ address: 5 }, { store });
      const results: number[] = [];
      for (let index = 0; index < 70; index += 1) results.push((await publicRequest(sentinel, slash64(index))).status);
      expect(results.slice(0, 50).every((status) => status === accepted)).toBe(true);
      expect(results.slice(50).every((status) => status === 429)).toBe(true);
      for (const prefix of recordPrefixes) expect(writesUnder(store.writes, prefix)).toHaveLength(50);
      // At most the network's limit of /64 counters: the ones refused by their network created none.
      const slash64Counters = new Set(writesUnder(store.writes, `${counterPrefix}:ip:2001:db8:7:`).map((write) => write.key));
      expect(slash64Counters.size).toBe(50);
      expect(await store.get(`${counterPrefix}:net:2001:db8:7`)).toBe('50');
      store.reset();
      const refused = await publicRequest(sentinel, slash64(70));
      expect(refused.status).toBe(429);
      expect(jsonOf(refused).error).toBe('temporarily_unavailable');
      expect(jsonOf(refused).error_description).toContain('network');
      expect(refused.headers['retry-after']).toBe(endpoint.retryAfter);
      // Over already: refused after a read, no counter of its /64 created.
      expect(store.writes).toEqual([]);
      expect((await publicRequest(sentinel, '2001:db8:8:1::1')).status).toBe(accepted);
      expect((await publicRequest(sentinel, '198.51.100.90')).status).toBe(accepted);
    });

    it('refuses a /48 already over after a read: nothing written, not even a /64 counter', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ address: 1, network: 3 }, { store });
      for (let index = 0; index < 3; index += 1) expect((await publicRequest(sentinel, slash64(index))).status).toBe(accepted);
      store.reset();
      for (let index = 3; index < 8; index += 1) expect((await publicRequest(sentinel, slash64(index))).status).toBe(429);
      expect(store.writes).toEqual([]);
    });

    it('gives one slot each to a concurrent burst from many /64s: exactly the network limit is stored', async () => {
      const store = recordingStore(new MemoryStore());
      const sentinel = sentinelWith({ address: 1, network: 6 }, { store });
      const results = await statuses(Array.from({ length: 24 }, (_, index) => publicRequest(sentinel, slash64(index))));
      expect(results.filter((status) => status === accepted)).toHaveLength(6);
      for (const prefix of recordPrefixes) expect(writesUnder(store.writes, prefix)).toHaveLength(6);
      expect(writesUnder(store.writes, `${counterPrefix}:ip:`)).toHaveLength(6);
    });

    it('gives the network its slot back when the /64 refuses a request: one /64 burst does not spend the /48 share', async () => {
      const store = new MemoryStore();
      const sentinel = sentinelWith({ address: 2, network: 4 }, { store });
      const results = await statuses(Array.from({ length: 8 }, () => publicRequest(sentinel, slash64(1))));
      expect(results.filter((status) => status === accepted)).toHaveLength(2);
      expect(await store.get(`${counterPrefix}:net:2001:db8:7`)).toBe('2');
      expect((await publicRequest(sentinel, slash64(2))).status).toBe(accepted);
      expect((await publicRequest(sentinel, slash64(3))).status).toBe(accepted);
      expect((await publicRequest(sentinel, slash64(4))).status).toBe(429);
    });

    it('does not count IPv4 per network: an address is its own', async () => {
      const sentinel = sentinelWith({ address: 1, network: 2 });
      for (let index = 0; index < 6; index += 1) expect((await publicRequest(sentinel, `198.51.100.${110 + index}`)).status).toBe(accepted);
    });

    it('fails closed when the network counter cannot be read: 500 server_error, reported, nothing stored', async () => {
      const errors: unknown[] = [];
      const store = recordingStore(failingReadsOf(new MemoryStore(), `${counterPrefix}:net:`));
      const sentinel = sentinelWith({ address: 10 }, { store, onError: (error) => errors.push(error) });
      const response = await publicRequest(sentinel, slash64(1));
      expect(response.status).toBe(500);
      expect(jsonOf(response).error).toBe('server_error');
      expect(errors).toHaveLength(1);
      expect(store.writes).toEqual([]);
      // IPv4 has no network counter, so its requests are not touched.
      expect((await publicRequest(sentinel, '198.51.100.120')).status).toBe(accepted);
    });
  });
}
