/**
 * A person's Allow whose every compare-and-set on the device authorization loses to the device's own polls (each
 * notes its time in the record) is contention, not a failure: the browser hears a retryable 503 with Retry-After,
 * not a 500 reported to onError; the approval's index entry is taken back, and the same confirmation decides again.
 * A decision that loses to another browser's is neither applied nor announced.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { decide, deviceApps, jsonBody, openConfirmationFor, poll, pollError, requestCodes, type Browser } from './helpers/device-drive.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';

describe('device decision under contention', () => {
  it('answers 503 temporarily_unavailable when every write loses to polls; the confirmation still decides', async () => {
    const store = racingStore(new MemoryStore(), (key) => key.startsWith('device:'));
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, apps: deviceApps(), onError: (error) => errors.push(error) });
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    const listedBefore = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    // Each read of the record lets one of the device's polls land before the person's write.
    let polls = 12;
    const polled: Promise<unknown>[] = [];
    const pollOnce = async (): Promise<void> => {
      const sent = poll(sentinel, codes.device_code);
      polled.push(sent);
      await sent;
      if (--polls > 0) store.arm(pollOnce);
    };
    store.arm(pollOnce);
    const busy = await decide(sentinel, browser, opened, 'approve');
    polls = 0;
    const answers = await Promise.all(polled);
    expect(answers.map((answer) => jsonBody(answer as never).error)).not.toContain('access_denied');
    expect(busy.status, String(busy.body)).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    expect(errors).toEqual([]);
    // The approval that did not apply leaves no session entry behind for the device.
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual(listedBefore);
    // The device is still waiting, and the person's same choice, posted again, decides.
    const again = await decide(sentinel, browser, opened, 'approve');
    expect(again.status, String(again.body)).toBe(200);
  });

  it('announces only the decision that stood when two browsers decide one code at once', async () => {
    for (const [late, first] of [
      ['approve', 'deny'],
      ['deny', 'approve'],
    ] as const) {
      // The late decision has read the record as pending when the first one lands: an approval in the index write
      // that comes before its own swap, a denial in its read of the record.
      const prefix = late === 'approve' ? 'user-sessions:' : 'device:';
      const store = racingStore(new MemoryStore(), (key) => key.startsWith(prefix));
      const events: SentinelEvent[] = [];
      const sentinel = makeSentinel({ store, apps: deviceApps(), onEvent: (event) => events.push(event) });
      const codes = await requestCodes(sentinel);
      const lateBrowser: Browser = {};
      const firstBrowser: Browser = {};
      const lateOpened = await openConfirmationFor(sentinel, lateBrowser, codes.user_code);
      const firstOpened = await openConfirmationFor(sentinel, firstBrowser, codes.user_code);
      let firstAnswer: number | undefined;
      store.arm(async () => {
        firstAnswer = (await decide(sentinel, firstBrowser, firstOpened, first)).status;
      });
      const lateAnswer = await decide(sentinel, lateBrowser, lateOpened, late);
      expect([firstAnswer, lateAnswer.status], late).toEqual([200, 400]);
      const decisions = events.filter((event) => event.type === 'device.approved' || event.type === 'device.denied');
      expect(
        decisions.map((event) => event.type),
        late,
      ).toEqual([first === 'approve' ? 'device.approved' : 'device.denied']);
      if (first === 'deny') expect(await pollError(sentinel, codes.device_code), late).toBe('access_denied');
      else expect((await poll(sentinel, codes.device_code)).status, late).toBe(200);
    }
  });

  it('keeps an approval a poll took the tokens of before a veto could take it back, and tells onError', async () => {
    const memory = new MemoryStore();
    let beforeTakeBack: (() => Promise<void>) | undefined;
    // The veto's take-back is the swap that expects the approved record: a poll on another instance lands first.
    const store = new Proxy(memory, {
      get: (target, name) => {
        if (name === 'swap') {
          return async (entries: Parameters<MemoryStore['swap']>[0]) => {
            const action = beforeTakeBack;
            if (action !== undefined && entries[0]?.expect?.includes('"status":"approved"') === true) {
              beforeTakeBack = undefined;
              await action();
            }
            return memory.swap(entries);
          };
        }
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const errors: unknown[] = [];
    let veto = false;
    const sentinel = makeSentinel({
      store,
      apps: deviceApps(),
      onEvent: (event) => {
        if (veto && event.type === 'device.approved') throw new Error('device.approved vetoed');
      },
      onError: (error) => errors.push(error),
    });
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    let polled: number | undefined;
    beforeTakeBack = async () => {
      polled = (await poll(sentinel, codes.device_code)).status;
    };
    veto = true;
    const answer = await decide(sentinel, browser, opened, 'approve');
    // The device holds its tokens: the approval stood, so the page says so and the veto goes to onError.
    expect(polled).toBe(200);
    expect(answer.status, String(answer.body)).toBe(200);
    expect(errors).toEqual([expect.objectContaining({ message: 'device.approved vetoed' })]);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).flatMap((session) => session.clientIds)).toHaveLength(1);
  });
});
