/**
 * A device-flow grant has an entry of its own in its user's session index: the device is listed among the user's
 * sessions and its app among the connected apps, its ID tokens carry that entry's sid, and "sign out everywhere",
 * "end this session" and "disconnect this app" end it. Signing out in the browser that approved it does not. A
 * failed index write issues nothing usable.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type Store } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import {
  type Browser,
  DEVICE_CLIENT_ID,
  deviceApps,
  jsonBody,
  personDecides,
  poll,
  refreshDevice,
  requestCodes,
} from './helpers/device-drive.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';

const USER = { accountId: ACCOUNT, userId: USER_ID };

afterEach(() => {
  vi.restoreAllMocks();
});

/** A device approved by the person in `browser`, and the tokens of its first poll. */
async function connectDevice(sentinel: Sentinel, browser: Browser = {}) {
  const codes = await requestCodes(sentinel, { scope: 'openid profile offline_access' });
  expect((await personDecides(sentinel, codes.user_code, 'approve', browser)).status).toBe(200);
  advanceClock(6);
  const response = await poll(sentinel, codes.device_code);
  expect(response.status, String(response.body)).toBe(200);
  return jsonBody(response) as { access_token: string; refresh_token: string; id_token: string };
}

const live = (sentinel: Sentinel, token: string) =>
  sentinel.verifyAccessToken(token).then(
    () => true,
    () => false,
  );

async function refreshes(sentinel: Sentinel, refreshToken: string): Promise<boolean> {
  return (await refreshDevice(sentinel, refreshToken)).status === 200;
}

describe('device grants in the session index', () => {
  it('lists the device as a session of its own, its sid in the ID tokens, and its app as connected', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const browser: Browser = {};
    const tokens = await connectDevice(sentinel, browser);
    const sid = decodeJwt(tokens.id_token).sid;
    const sessions = await sentinel.listSessions(USER);
    // The browser that approved, with no app, and the device with its app.
    expect(sessions.map((session) => session.clientIds)).toEqual([[], [DEVICE_CLIENT_ID]]);
    expect(sessions[1]?.sid).toBe(sid);
    expect(await sentinel.listUserGrants(USER)).toMatchObject([{ clientId: DEVICE_CLIENT_ID, grants: 1, sids: [sid] }]);
    const refreshed = jsonBody(await refreshDevice(sentinel, tokens.refresh_token));
    expect(decodeJwt(refreshed.id_token as string).sid).toBe(sid);
  });

  it('is ended by signing out everywhere, by ending its session and by disconnecting its app', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const everywhere = await connectDevice(sentinel);
    expect(await sentinel.endUserSessions(USER)).toBe(2);
    expect(await live(sentinel, everywhere.access_token)).toBe(false);
    expect(await refreshes(sentinel, everywhere.refresh_token)).toBe(false);

    const ended = await connectDevice(sentinel);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: decodeJwt(ended.id_token).sid as string })).toBe(true);
    expect(await refreshes(sentinel, ended.refresh_token)).toBe(false);

    const disconnected = await connectDevice(sentinel);
    expect(await sentinel.revokeUserGrants({ ...USER, clientId: DEVICE_CLIENT_ID })).toBe(1);
    expect(await live(sentinel, disconnected.access_token)).toBe(false);
    expect(await refreshes(sentinel, disconnected.refresh_token)).toBe(false);
  });

  it('outlives the sign-out of the browser that approved it', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const tokens = await connectDevice(sentinel);
    const [browserSession] = await sentinel.listSessions(USER);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: browserSession?.sid as string })).toBe(true);
    expect(await live(sentinel, tokens.access_token)).toBe(true);
    expect(await refreshes(sentinel, tokens.refresh_token)).toBe(true);
  });

  it('issues nothing usable when the index cannot be written, and reports the cause', async () => {
    const memory = new MemoryStore();
    let failIndex = false;
    const swap = (entries: Parameters<Store['swap']>[0]) =>
      failIndex && entries.some((entry) => entry.key.startsWith('user-sessions:'))
        ? Promise.reject(new Error('index write failed'))
        : memory.swap(entries);
    const store = new Proxy(memory, {
      get: (target, name) => {
        if (name === 'swap') return swap;
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ apps: deviceApps(), store, onError: (error) => errors.push(error) });
    const codes = await requestCodes(sentinel, { scope: 'openid offline_access' });
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    advanceClock(6);
    failIndex = true;
    const failed = await poll(sentinel, codes.device_code);
    expect([failed.status, jsonBody(failed).error]).toEqual([500, 'server_error']);
    expect(errors).toContainEqual(expect.objectContaining({ message: 'index write failed' }));
    failIndex = false;
    expect(await sentinel.listUserGrants(USER)).toEqual([]);
    // The device authorization was spent with the grant it created, and that grant is gone: no second try.
    advanceClock(12);
    expect(jsonBody(await poll(sentinel, codes.device_code)).error).toBe('invalid_grant');
  });
});
