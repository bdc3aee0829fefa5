/**
 * A right user code stores a record for whoever posts it — the sign-in it starts (`interaction:`), or for a browser
 * already signed in its confirmation (`device-confirm:`) — and gives back its throttle slot, so without a bound one
 * address could post a code it minted itself (a public device app hands them out) again and again and fill the store.
 * Each such entry counts on `interactionsPerAddress`, as /authorize's sign-ins do: past it the page answers 429 with
 * Retry-After and stores nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { recordingStore } from './helpers/direct-flow.js';
import { type Browser, deviceApps, enterCode, openConfirmationFor, requestCodes } from './helpers/device-drive.js';
import { makeSentinel } from './helpers/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const IP = '198.51.100.23';

function setUp() {
  const store = recordingStore(new MemoryStore());
  const sentinel = makeSentinel({ apps: deviceApps(), store, interactionsPerAddress: 3 });
  return { store, sentinel };
}

const writesUnder = (writes: { key: string }[], prefix: string) => writes.filter((write) => write.key.startsWith(prefix)).length;

describe('right user codes per client address', () => {
  it('start at most interactionsPerAddress sign-ins, then 429 with Retry-After and nothing stored', async () => {
    const { store, sentinel } = setUp();
    const codes = await requestCodes(sentinel);
    for (let index = 0; index < 3; index += 1) {
      const entered = await enterCode(sentinel, {}, codes.user_code, IP);
      expect(entered.status).toBe(303);
      expect(String(entered.headers.location)).toMatch(/\/login\?interaction=/);
    }
    expect(writesUnder(store.writes, 'interaction:')).toBe(3);
    const refused = await enterCode(sentinel, {}, codes.user_code, IP);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(writesUnder(store.writes, 'interaction:')).toBe(3);
    // Another address is not held back by this one.
    expect((await enterCode(sentinel, {}, codes.user_code, '198.51.100.24')).status).toBe(303);
  });

  it('park at most interactionsPerAddress confirmations for a signed-in browser, then 429', async () => {
    const { store, sentinel } = setUp();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    // The browser signs in once (one sign-in, from the test's default address), then enters the code from IP.
    await openConfirmationFor(sentinel, browser, codes.user_code);
    store.reset();
    for (let index = 0; index < 3; index += 1) {
      const entered = await enterCode(sentinel, browser, codes.user_code, IP);
      expect(entered.status).toBe(303);
      expect(String(entered.headers.location)).toMatch(/\/device\/confirm\?confirmation=/);
    }
    expect(writesUnder(store.writes, 'device-confirm:')).toBe(3);
    expect((await enterCode(sentinel, browser, codes.user_code, IP)).status).toBe(429);
    expect(writesUnder(store.writes, 'device-confirm:')).toBe(3);
  });

  it('counts no wrong code: those are the code throttle’s', async () => {
    const { store, sentinel } = setUp();
    await requestCodes(sentinel);
    for (let index = 0; index < 4; index += 1) expect((await enterCode(sentinel, {}, 'BCDF-GHJK', IP)).status).toBe(400);
    expect(writesUnder(store.writes, 'throttle-interaction:')).toBe(0);
  });
});
