/**
 * A device record is security state: only a record that says `approved` may be turned into tokens. One whose status
 * is none of the four this version writes (store corruption, or a record another version wrote during a rolling
 * upgrade) is unreadable: the poll fails with `500 server_error` and the cause goes to `onError`, nothing is issued,
 * and the verification page neither approves nor denies it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { deviceGrantId, deviceKey } from '../src/device/device-records.js';
import { advanceClock } from './helpers/clock.js';
import { deviceApps, enterCode, jsonBody, personDecides, poll, requestCodes } from './helpers/device-drive.js';
import { makeSentinel, USER_ID } from './helpers/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a device record of unknown status', () => {
  it('issues nothing and fails the poll and the code entry with a 500, reported to onError', async () => {
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({
      apps: deviceApps(),
      store,
      onError: (error) => errors.push(error),
      onEvent: (event) => void events.push(event),
    });
    const codes = await requestCodes(sentinel);
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    const key = deviceKey(deviceGrantId(codes.device_code));
    const stored = JSON.parse((await store.get(key)) as string) as Record<string, unknown>;
    expect(stored).toMatchObject({ status: 'approved', userId: USER_ID });
    // Still names the user and the sign-in of the approval, but no longer says approved.
    await store.set(key, JSON.stringify({ ...stored, status: 'withdrawn' }), 60_000);
    advanceClock(6);
    const answer = await poll(sentinel, codes.device_code);
    expect([answer.status, jsonBody(answer).error]).toEqual([500, 'server_error']);
    expect(events.map((event) => event.type)).not.toContain('token.issued');
    expect(errors).toHaveLength(1);
    expect(JSON.parse((await store.get(key)) as string)).toMatchObject({ status: 'withdrawn' });
    expect((await enterCode(sentinel, {}, codes.user_code)).status).toBe(500);
    expect(errors).toHaveLength(2);
  });
});
