/**
 * The device flow's state changes under concurrency (RFC 8628): two decisions on one device authorization, many polls
 * of an approved one, and polls racing the approval, on two instances sharing one store. Every change is a swap on
 * the device record, so exactly one decision applies and exactly one poll gets tokens. MemoryStore, and two instances
 * over a real Redis.
 */
import { describe, expect, it } from 'vitest';
import { createSentinel, MemoryStore, type Sentinel, type Store } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import { type Browser, decide, deviceApps, jsonBody, openConfirmationFor, poll, requestCodes } from './helpers/device-drive.js';
import { baseOptions } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const ROUNDS = 10;

function instances(store: Store): [Sentinel, Sentinel] {
  const options = baseOptions({ apps: deviceApps(), store, deviceFlow: { interval: 1 } });
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
  });
}

cases('MemoryStore (two instances)', () => new MemoryStore());

await describeOnSharedRedis('device-race', 'RedisStore (two instances)', (newStore) => cases('RedisStore', newStore));
