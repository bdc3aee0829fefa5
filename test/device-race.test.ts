/**
 * The device flow's state changes under concurrency (RFC 8628): two decisions on one device authorization, many polls
 * of an approved one, polls racing the approval, and a burst of polls of a pending one, on two instances sharing one
 * store. Every change is a swap on the device record, so exactly one decision applies, exactly one poll gets tokens,
 * and every poll of a burst but the first is too soon and grows the interval. MemoryStore, and two instances over a
 * real Redis.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, MemoryStore, type Sentinel, type Store } from '../src/index.js';
import { deviceGrantId, deviceKey } from '../src/device/device-records.js';
import { advanceClock } from './helpers/clock.js';
import { type Browser, decide, deviceApps, jsonBody, openConfirmationFor, poll, requestCodes } from './helpers/device-drive.js';
import { baseOptions } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const ROUNDS = 10;

// Each case moves the clock from where the real one is, not from where the case before it left it.
afterEach(() => {
  vi.restoreAllMocks();
});

function instances(store: Store, interval = 1): [Sentinel, Sentinel] {
  const options = baseOptions({ apps: deviceApps(), store, deviceFlow: { interval } });
  return [createSentinel(options), createSentinel(options)];
}

/** A browser signed in for a user code, on its confirmation page. */
async function confirmationFor(
  sentinel: Sentinel,
  userCode: string,
): Promise<{ browser: Browser; opened: { confirmation: string; csrf: string } }> {
  const browser: Browser = {};
  const opened = await openConfirmationFor(sentinel, browser, userCode);
  return { browser, opened };
}

function cases(label: string, newStore: () => Store): void {
  describe(label, () => {
    it('of an approval and a denial posted at once on two instances, exactly one applies', async () => {
      const [a, b] = instances(newStore());
      for (let round = 0; round < ROUNDS; round += 1) {
        const codes = await requestCodes(a);
        const first = await confirmationFor(a, codes.user_code);
        const second = await confirmationFor(b, codes.user_code);
        const [approved, denied] = await Promise.all([
          decide(a, first.browser, first.opened, 'approve'),
          decide(b, second.browser, second.opened, 'deny'),
        ]);
        expect([approved.status, denied.status].sort()).toEqual([200, 400]);
        advanceClock(2 * (round + 1));
        const answer = await poll(a, codes.device_code);
        if (approved.status === 200) expect(answer.status).toBe(200);
        else expect(jsonBody(answer).error).toBe('access_denied');
      }
    });

    it('of many polls of an approved authorization on two instances, exactly one gets tokens', async () => {
      const [a, b] = instances(newStore());
      for (let round = 0; round < ROUNDS; round += 1) {
        const codes = await requestCodes(a);
        const { browser, opened } = await confirmationFor(b, codes.user_code);
        expect((await decide(b, browser, opened, 'approve')).status).toBe(200);
        const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => poll(index % 2 === 0 ? a : b, codes.device_code)));
        expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
        for (const answer of answers.filter((one) => one.status !== 200)) expect(jsonBody(answer).error).toBe('invalid_grant');
      }
    });

    it('an approval lands however many polls race it, and the polls are slowed down, never lost', async () => {
      const [a, b] = instances(newStore());
      for (let round = 0; round < ROUNDS; round += 1) {
        const codes = await requestCodes(a);
        const { browser, opened } = await confirmationFor(b, codes.user_code);
        const [decided, ...answers] = await Promise.all([
          decide(b, browser, opened, 'approve'),
          ...Array.from({ length: 6 }, (_, index) => poll(index % 2 === 0 ? a : b, codes.device_code)),
        ]);
        expect(decided.status).toBe(200);
        for (const answer of answers) {
          if (answer.status !== 200) expect(['authorization_pending', 'slow_down', 'invalid_grant']).toContain(jsonBody(answer).error);
        }
        // Whether a racing poll already took them or not, the tokens are issued exactly once in all.
        const issuedDuringRace = answers.filter((answer) => answer.status === 200).length;
        advanceClock(30 * (round + 1));
        const after = await poll(a, codes.device_code);
        expect(issuedDuringRace + (after.status === 200 ? 1 : 0)).toBe(1);
      }
    });

    it('grows the interval for every slow_down of polls sent together, burst after burst', async () => {
      const store = newStore();
      // 5 s, so that a burst on a loaded machine still falls well within the interval of its first poll.
      const [a, b] = instances(store, 5);
      const codes = await requestCodes(a);
      let interval = 5;
      let at = 0;
      for (let burst = 0; burst < 3; burst += 1) {
        const answers = await Promise.all(Array.from({ length: BURST }, (_, index) => poll(index % 2 === 0 ? a : b, codes.device_code)));
        const errors = answers.map((answer) => jsonBody(answer).error);
        expect(
          errors.filter((error) => error === 'authorization_pending'),
          `burst ${burst}`,
        ).toHaveLength(1);
        expect(
          errors.filter((error) => error === 'slow_down'),
          `burst ${burst}`,
        ).toHaveLength(BURST - 1);
        // RFC 8628 §3.5: each slow_down adds 5 s, for this and every later request.
        interval += 5 * (BURST - 1);
        expect(await storedInterval(store, codes.device_code), `burst ${burst}`).toBe(interval);
        // The next burst once the grown interval has passed: its first poll is on time again.
        at += interval + 1;
        advanceClock(at);
      }
    });
  });
}

const BURST = 6;

async function storedInterval(store: Store, deviceCode: string): Promise<number> {
  const stored = await store.get(deviceKey(deviceGrantId(deviceCode)));
  return (JSON.parse(stored ?? 'null') as { interval: number }).interval;
}

describe('a poll that keeps losing its note', () => {
  it('gives up after a bounded number of tries and answers slow_down', async () => {
    const inner = new MemoryStore();
    let deviceSwaps = 0;
    let jammed = false;
    // Every note of the poll loses, as if another poll always wrote first.
    const store: Store = new Proxy(inner, {
      get(target, property) {
        if (property === 'swap') {
          return async (entries: Parameters<Store['swap']>[0]) => {
            if (!jammed || !entries.some((entry) => entry.key.startsWith('device:'))) return target.swap(entries);
            deviceSwaps += 1;
            return false;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const [a] = instances(store, 5);
    const codes = await requestCodes(a);
    jammed = true;
    expect(jsonBody(await poll(a, codes.device_code)).error).toBe('slow_down');
    expect(deviceSwaps).toBeGreaterThan(1);
    expect(deviceSwaps).toBeLessThanOrEqual(8);
    jammed = false;
    expect(await storedInterval(store, codes.device_code)).toBe(5);
  });
});

cases('MemoryStore (two instances)', () => new MemoryStore());

await describeOnSharedRedis('device-race', 'RedisStore (two instances)', (newStore) => cases('RedisStore', newStore));
