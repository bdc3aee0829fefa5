/**
 * A logout delivery starved of a DNS lookup slot (src/client-assertion/outbound-lookups.ts): anyone can fill the
 * process's two slots, e.g. with made-up https `client_id` hosts whose name servers never answer. A delivery whose
 * lookup got no slot before its 5 s deadline never reached the app, so it goes back to the queue uncounted, a little
 * later, and is delivered once a slot frees, however long the flood lasted; one whose own host is the blackhole (its
 * lookup ran and never answered) still counts its attempts and is given up as before. Here `node:dns/promises` never
 * answers names under blackhole.example until the test says so, and answers localhost with 127.0.0.1, where the
 * test's receiver listens. Each delivery is queued as its last attempt (five made): the schedule's minute of
 * retries without waiting it out, since any starved attempt counted would be the one that gives it up.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const dns = vi.hoisted(() => ({ calls: [] as string[], settle: [] as (() => void)[] }));

vi.mock('node:dns/promises', async (importOriginal) =>
  (await import('./helpers/blackhole-dns.js')).blackholeDns(await importOriginal(), dns, { localhost: '127.0.0.1' }),
);

const { OUTBOUND_LOOKUP_SLOTS } = await import('../src/client-assertion/outbound-lookups.js');
const { fetchKeySet } = await import('../src/client-assertion/jwks-fetch.js');
const { clientJwksOptionsSchema } = await import('../src/client-assertion/options.js');
const { MAX_ATTEMPTS } = await import('../src/logout/delivery-worker.js');
const { LOGOUT_POST_TIMEOUT_MS } = await import('../src/logout/post-logout-token.js');
const { encodeLogoutJob, LOGOUT_QUEUE } = await import('../src/logout/logout-queue.js');
const { MemoryStore } = await import('../src/index.js');
const { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } = await import('./helpers/fixtures.js');
const { startReceiver } = await import('./helpers/logout-receiver.js');
const { settleAllLookups } = await import('./helpers/blackhole-dns.js');

const SID = 'starved-session-0001';
/** The least wait before a starved delivery is tried again (LOOKUP_BUSY_DELAY_MS is 2 s): the bound on its rate. */
const LEAST_WAIT_MS = 1000;

const cleanup: (() => Promise<void>)[] = [];

const settleAll = (): Promise<void> => settleAllLookups(dns);

afterEach(async () => {
  await settleAll();
  for (const step of cleanup.splice(0).reverse()) await step();
  dns.calls.length = 0;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * A service whose app takes logout tokens at `target(receiver's URI)` (a receiver on loopback), with one delivery
 * queued as its last attempt; the events, the receiver, and every time the job was settled (given up, rescheduled or
 * delivered).
 */
async function withLastAttemptQueued(target: (uri: string) => string) {
  const events: { type: string; attempts?: number; reason?: string }[] = [];
  const settled: { attempts: number | null; inMs: number }[] = [];
  let sentinel: ReturnType<typeof makeSentinel> | undefined;
  const receiver = await startReceiver({
    issuer: `http://localhost/sentinel/api/account/${ACCOUNT}`,
    clientId: CLIENT_ID,
    jwks: () => (sentinel as ReturnType<typeof makeSentinel>).jwks(),
  });
  cleanup.push(() => receiver.close());
  const store = new MemoryStore();
  const settleJob = store.settleJob.bind(store);
  store.settleJob = (queue, id, lease, next) => {
    const attempts = next === null ? null : ((JSON.parse(next.payload) as unknown[])[4] as number);
    settled.push({ attempts, inMs: next === null ? 0 : next.dueAt - Date.now() });
    return settleJob(queue, id, lease, next);
  };
  const uri = target(receiver.uri);
  const base = baseOptions();
  sentinel = makeSentinel({
    store,
    apps: (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: uri } : app)),
    clientJwks: { allowPrivateAddresses: true },
    onEvent: (event) => events.push(event as never),
  });
  cleanup.push(() => (sentinel as ReturnType<typeof makeSentinel>).close());
  const job = { accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID, sid: SID, attempts: MAX_ATTEMPTS - 1 };
  await store.enqueueJobs(LOGOUT_QUEUE, [{ id: 'starved-delivery', payload: encodeLogoutJob(job), dueAt: Date.now() }]);
  return { events, settled, receiver };
}

/** Key sets of blackhole hosts, holding every lookup slot until the name servers answer (settleAll). */
function holdEverySlot(): void {
  const options = clientJwksOptionsSchema.parse({ timeoutMs: 100 });
  for (let n = 0; n < OUTBOUND_LOOKUP_SLOTS; n++) fetchKeySet(`https://flood${n}.blackhole.example/jwks.json`, options).catch(() => {});
  expect(dns.calls).toHaveLength(OUTBOUND_LOOKUP_SLOTS);
}

const logoutEvents = (events: { type: string }[]) => events.filter((event) => event.type.startsWith('logout.'));

describe('a logout delivery whose lookups get no slot', () => {
  it('goes back uncounted, at a bounded rate, and is delivered once a slot frees', { timeout: 30_000 }, async () => {
    holdEverySlot();
    const { events, settled, receiver } = await withLastAttemptQueued((uri) => uri.replace('127.0.0.1', 'localhost'));
    // Two deadlines and more without a slot: counted, the first would have given the logout up.
    await sleep(2 * LOGOUT_POST_TIMEOUT_MS + 2500);
    expect(dns.calls).not.toContain('localhost');
    expect(receiver.received).toEqual([]);
    expect(logoutEvents(events)).toEqual([]);
    // Put back uncounted, each time a little later: once per deadline and wait, never a hot loop.
    expect(settled.length).toBeGreaterThanOrEqual(1);
    expect(settled.length).toBeLessThanOrEqual(2);
    for (const entry of settled) {
      expect(entry.attempts).toBe(MAX_ATTEMPTS - 1);
      expect(entry.inMs).toBeGreaterThan(LEAST_WAIT_MS);
    }
    // The name servers answer at last: the delivery gets a slot and the app its token.
    await settleAll();
    await receiver.waitFor(1, LOGOUT_POST_TIMEOUT_MS + 5000);
    expect(receiver.problems).toEqual([]);
    expect(receiver.received).toEqual([{ sid: SID, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    await until(() => logoutEvents(events).length > 0, 'the delivered event', 2000);
    expect(logoutEvents(events)).toEqual([expect.objectContaining({ type: 'logout.delivered', attempts: MAX_ATTEMPTS })]);
  });

  it('whose own host never answers (its lookup had a slot) counts the attempt and is given up', { timeout: 20_000 }, async () => {
    const { events, settled, receiver } = await withLastAttemptQueued(() => 'https://app.blackhole.example/logout');
    await until(() => logoutEvents(events).length > 0, 'the failed event', LOGOUT_POST_TIMEOUT_MS + 3000);
    expect(dns.calls).toEqual(['app.blackhole.example']);
    expect(logoutEvents(events)).toEqual([
      expect.objectContaining({ type: 'logout.failed', attempts: MAX_ATTEMPTS, reason: 'the app did not answer in time' }),
    ]);
    expect(settled).toEqual([{ attempts: null, inMs: 0 }]);
    expect(receiver.received).toEqual([]);
  });
});
