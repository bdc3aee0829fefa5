/**
 * A person's Allow whose every compare-and-set on the device authorization loses to the device's own polls (each
 * notes its time in the record) is contention, not a failure: the browser hears a retryable 503 with Retry-After,
 * not a 500 reported to onError; the approval's index entry is taken back, and the same confirmation decides again.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { decide, deviceApps, jsonBody, openConfirmationFor, poll, requestCodes, type Browser } from './helpers/device-drive.js';
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
});
