/**
 * One process-wide bound on the DNS lookups of outbound requests (src/client-assertion/outbound-lookups.ts). A lookup
 * (`getaddrinfo`, on libuv's thread pool of 4 threads by default) cannot be cancelled: a made-up host whose name
 * server never answers holds a thread for the resolver's whole timeout, after the request's own deadline has answered.
 * Key-set fetches and logout deliveries had no bound on them, and the features' own limits (32 each) are far above
 * the pool. Here `node:dns/promises` never answers names under blackhole.example until the test says so; good.example
 * and localhost answer 127.0.0.1, where this test's own servers listen.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';

const dns = vi.hoisted(() => ({ calls: [] as string[], settle: [] as (() => void)[] }));

vi.mock('node:dns/promises', async (importOriginal) =>
  (await import('./helpers/blackhole-dns.js')).blackholeDns(await importOriginal(), dns, {
    'good.example': '127.0.0.1',
    localhost: '127.0.0.1',
  }),
);

const { OUTBOUND_LOOKUP_SLOTS } = await import('../src/client-assertion/outbound-lookups.js');
const { fetchKeySet } = await import('../src/client-assertion/jwks-fetch.js');
const { clientJwksOptionsSchema } = await import('../src/client-assertion/options.js');
const { postLogoutToken } = await import('../src/logout/post-logout-token.js');
const { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } = await import('./helpers/fixtures.js');
const { signInWithSession } = await import('./helpers/logout-flow.js');
const { startReceiver } = await import('./helpers/logout-receiver.js');
const { settleAllLookups } = await import('./helpers/blackhole-dns.js');

const cleanup: (() => Promise<void>)[] = [];

const settleAll = (): Promise<void> => settleAllLookups(dns);

/** Lets the oldest blackhole lookup fail, and the waiter it frees a slot for start. */
async function settleOne(): Promise<void> {
  dns.settle.shift()?.();
  await new Promise((resolve) => setImmediate(resolve));
}

afterEach(async () => {
  await settleAll();
  for (const step of cleanup.splice(0).reverse()) await step();
  dns.calls.length = 0;
});

function jwksOptions(timeoutMs: number, allowPrivateAddresses = false) {
  return clientJwksOptionsSchema.parse({ timeoutMs, allowPrivateAddresses });
}

/** An http server on loopback answering a key set; its port. */
async function keySetServer(): Promise<number> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

const blackholes = (prefix: string, count: number) => Array.from({ length: count }, (_, n) => `${prefix}${n}.blackhole.example`);

describe('the process-wide bound on outbound DNS lookups', () => {
  it('is half the default libuv pool', () => {
    expect(process.env.UV_THREADPOOL_SIZE).toBeUndefined();
    expect(OUTBOUND_LOOKUP_SLOTS).toBe(2);
  });

  it('keeps key-set fetches and logout deliveries of blackhole hosts to the bound, each failing as a timeout', async () => {
    const started = performance.now();
    const fetches = blackholes('keys', 3).map((host) => fetchKeySet(`https://${host}/jwks.json`, jwksOptions(150)));
    const deliveries = blackholes('logout', 3).map((host) =>
      postLogoutToken(`https://${host}/logout`, 'eyJ.logout.token', { allowPrivateAddresses: false, timeoutMs: 150 }),
    );
    for (const fetch of fetches) fetch.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Six requests, two lookups: the others wait for a slot.
    expect(dns.calls).toHaveLength(OUTBOUND_LOOKUP_SLOTS);
    for (const fetch of fetches)
      await expect(fetch).rejects.toMatchObject({ name: 'JwksFetchError', message: 'the jwks_uri did not answer in time' });
    // Each delivery is one to retry, never one refused for good, and marked starved: its lookup never ran, so the app
    // was not asked (the worker puts it back uncounted).
    expect(await Promise.all(deliveries)).toEqual(
      Array(3).fill({ kind: 'retry', reason: 'no DNS lookup slot came free in time', starved: true }),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    // Answered at their deadlines, the two lookups still hold their threads; the waiting ones never started.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(dns.calls).toHaveLength(OUTBOUND_LOOKUP_SLOTS);
    expect(dns.settle).toHaveLength(OUTBOUND_LOOKUP_SLOTS);
    // Another request while both still hold them: no lookup of its own either.
    await expect(fetchKeySet('https://late.blackhole.example/jwks.json', jwksOptions(100))).rejects.toThrow('did not answer in time');
    expect(dns.calls).toHaveLength(OUTBOUND_LOOKUP_SLOTS);
  });

  it('gives a freed slot to a good host, each feature in turn, so a flood of one does not starve another', async () => {
    const port = await keySetServer();
    // Two key sets hold the slots, three more wait for one; a delivery to a good host waits behind them.
    const fetches = blackholes('keys', 5).map((host) => fetchKeySet(`https://${host}/jwks.json`, jwksOptions(10_000)));
    for (const fetch of fetches) fetch.catch(() => {});
    const delivery = postLogoutToken(`http://localhost:${port}/logout`, 'eyJ.logout.token', {
      allowPrivateAddresses: true,
      timeoutMs: 10_000,
    });
    const good = fetchKeySet(`http://good.example:${port}/jwks.json`, jwksOptions(10_000, true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(dns.calls).toEqual(['keys0.blackhole.example', 'keys1.blackhole.example']);
    // A slot frees: the oldest waiting key set takes it. The next goes to the delivery, ahead of the key sets that
    // waited before it; its lookup answers at once, and the slot goes back to the key sets.
    await settleOne();
    expect(dns.calls.slice(2)).toEqual(['keys2.blackhole.example']);
    await settleOne();
    expect(dns.calls.slice(3)).toEqual(['localhost', 'keys3.blackhole.example']);
    // The key-set server answers the delivery's POST with 200 (any path): the lookup went through and so did the POST.
    expect(await delivery).toEqual({ kind: 'delivered', status: 200 });
    // The good key set waits its turn among the key sets, and is fetched once a slot frees for it.
    await settleOne();
    expect(dns.calls.slice(5)).toEqual(['keys4.blackhole.example']);
    await settleOne();
    expect(await good).toEqual({ keys: [] });
    expect(dns.calls.slice(6)).toEqual(['good.example']);
    await settleAll();
    for (const fetch of fetches) await expect(fetch).rejects.toThrow('does not resolve');
  });
});

describe('a logout delivery starved of a lookup slot', () => {
  it('is put back uncounted, and delivered once a slot is free', { timeout: 20_000 }, async () => {
    const events: { type: string; attempts?: number }[] = [];
    let sentinel: ReturnType<typeof makeSentinel> | undefined;
    const receiver = await startReceiver({
      issuer: `http://localhost/sentinel/api/account/${ACCOUNT}`,
      clientId: CLIENT_ID,
      jwks: () => (sentinel as ReturnType<typeof makeSentinel>).jwks(),
    });
    cleanup.push(() => receiver.close());
    // A host name, so that the delivery looks it up (an address written out needs no lookup).
    const uri = receiver.uri.replace('127.0.0.1', 'localhost');
    const base = baseOptions();
    sentinel = makeSentinel({
      apps: (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: uri } : app)),
      clientJwks: { allowPrivateAddresses: true },
      onEvent: (event) => events.push(event as never),
    });
    cleanup.push(() => (sentinel as ReturnType<typeof makeSentinel>).close());
    const { tokens } = await signInWithSession(sentinel);
    // Key sets of blackhole hosts hold every slot while the session ends.
    for (const host of blackholes('keys', OUTBOUND_LOOKUP_SLOTS))
      fetchKeySet(`https://${host}/jwks.json`, jwksOptions(100)).catch(() => {});
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
    // The attempt's 5 s pass without a slot: nothing sent, nothing given up, nothing counted.
    await new Promise((resolve) => setTimeout(resolve, 5600));
    expect(dns.calls).not.toContain('localhost');
    expect(receiver.received).toEqual([]);
    expect(events.filter((event) => event.type.startsWith('logout.'))).toEqual([]);
    // The name servers answer at last; the delivery, put back for 2 s, gets a slot and delivers.
    await settleAll();
    await receiver.waitFor(1, 8000);
    expect(receiver.problems).toEqual([]);
    expect(receiver.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    const until = Date.now() + 2000;
    while (!events.some((event) => event.type === 'logout.delivered') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(events.filter((event) => event.type.startsWith('logout.'))).toEqual([
      expect.objectContaining({ type: 'logout.delivered', attempts: 1 }),
    ]);
  });
});
