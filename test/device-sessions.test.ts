/**
 * A device-flow grant has an entry of its own in its user's session index: the device is listed among the user's
 * sessions and its app among the connected apps, its ID tokens carry that entry's sid, and "sign out everywhere",
 * "end this session" and "disconnect this app" end it, also between the approval and the device's poll. Signing out
 * in the browser that approved it does not. A failed index write approves or issues nothing, and a poll's is undone.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type Store } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import {
  type Browser,
  DEVICE_CLIENT_ID,
  decide,
  deviceApps,
  enterCode,
  jsonBody,
  openConfirmation,
  openConfirmationFor,
  personDecides,
  poll,
  pollError,
  refreshDevice,
  requestCodes,
} from './helpers/device-drive.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';
import { failingSwaps } from './helpers/failing-swaps.js';

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

/**
 * A MemoryStore whose writes of session indexes fail while `failIndex(true)`: before they reach the store, or with
 * `landed` after they were applied (a reply lost to a timeout or a dropped connection, as RedisStore meets it).
 */
function failingIndexStore(landed = false): { store: Store; failIndex: (on: boolean) => void } {
  const memory = new MemoryStore();
  let failing = false;
  const swap = async (entries: Parameters<Store['swap']>[0]) => {
    if (!failing || !entries.some((entry) => entry.key.startsWith('user-sessions:'))) return memory.swap(entries);
    if (landed) await memory.swap(entries);
    throw new Error('index write failed');
  };
  const store = new Proxy(memory, {
    get: (target, name) => {
      if (name === 'swap') return swap;
      const value: unknown = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    store,
    failIndex: (on) => {
      failing = on;
    },
  };
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

  it('voids an approval not yet polled when the user signs out everywhere or disconnects the app', async () => {
    for (const [how, end] of [
      ['endUserSessions', (sentinel: Sentinel) => sentinel.endUserSessions(USER)],
      ['revokeUserGrants', (sentinel: Sentinel) => sentinel.revokeUserGrants({ ...USER, clientId: DEVICE_CLIENT_ID })],
    ] as const) {
      const sentinel = makeSentinel({ apps: deviceApps() });
      const codes = await requestCodes(sentinel, { scope: 'openid offline_access' });
      expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
      // Approved: the device is listed with its app, which holds no grant before the poll.
      expect((await sentinel.listSessions(USER)).map((session) => session.clientIds)).toEqual([[], [DEVICE_CLIENT_ID]]);
      expect(await sentinel.listUserGrants(USER)).toEqual([]);
      await end(sentinel);
      const answer = await poll(sentinel, codes.device_code);
      expect([answer.status, jsonBody(answer).error], how).toEqual([400, 'access_denied']);
      expect(await sentinel.listUserGrants(USER), how).toEqual([]);
      expect(
        (await sentinel.listSessions(USER)).map((session) => session.clientIds),
        how,
      ).toEqual(how === 'endUserSessions' ? [] : [[]]);
    }
  });

  it('ends the grant when the user signs out everywhere while the poll that created it joins the index', async () => {
    // Two instances over one store: the poll's, which opens the window in its read of the index, and the one that
    // signs the user out everywhere in that window.
    const memory = new MemoryStore();
    const racing = racingStore(memory, (key) => key.startsWith('user-sessions:'));
    const device = makeSentinel({ apps: deviceApps(), store: racing });
    const account = makeSentinel({ apps: deviceApps(), store: memory });
    const codes = await requestCodes(device, { scope: 'openid offline_access' });
    expect((await personDecides(account, codes.user_code, 'approve')).status).toBe(200);
    let ended: number | undefined;
    racing.arm(async () => {
      ended = await account.endUserSessions(USER);
    });
    const answer = await poll(device, codes.device_code);
    expect(ended).toBeDefined();
    expect([answer.status, jsonBody(answer).error]).toEqual([400, 'access_denied']);
    expect(await account.listUserGrants(USER)).toEqual([]);
    expect(await account.listSessions(USER)).toEqual([]);
  });

  it('approves nothing when the approving browser signs out while its Allow is on the way', async () => {
    for (const how of ['its logout', 'endUserSessions'] as const) {
      // Two instances over one store: the Allow's, which opens the window in its read of the index, and the one
      // where the same browser's session ends (its logout in another tab, or "sign out everywhere") in that window.
      const memory = new MemoryStore();
      const racing = racingStore(memory, (key) => key.startsWith('user-sessions:'));
      const events: SentinelEvent[] = [];
      const approving = makeSentinel({ apps: deviceApps(), store: racing, onEvent: (event) => events.push(event) });
      const account = makeSentinel({ apps: deviceApps(), store: memory });
      const codes = await requestCodes(approving, { scope: 'openid offline_access' });
      const browser: Browser = {};
      const opened = await openConfirmationFor(approving, browser, codes.user_code);
      const [browserSession] = await account.listSessions(USER);
      let ended: unknown;
      racing.arm(async () => {
        ended =
          how === 'its logout'
            ? await account.endSession({ accountId: ACCOUNT, sid: browserSession?.sid as string })
            : await account.endUserSessions(USER);
      });
      const answer = await decide(approving, browser, opened, 'approve');
      expect(ended, how).toBeTruthy();
      // The session that would have approved ended first: nothing approved, the device waits, nothing is listed.
      expect(answer.status, how).toBe(400);
      expect(await pollError(account, codes.device_code), how).toBe('authorization_pending');
      expect(await account.listSessions(USER), how).toEqual([]);
      // And no audit record says it was approved.
      const types = events.map((event) => event.type);
      expect(types, how).not.toContain('device.approved');
    }
  });

  it('takes back the entry of an approval that came after a denial', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const codes = await requestCodes(sentinel);
    const approving: Browser = {};
    const opened = await openConfirmationFor(sentinel, approving, codes.user_code);
    expect((await personDecides(sentinel, codes.user_code, 'deny')).status).toBe(200);
    expect((await decide(sentinel, approving, opened, 'approve')).status).toBe(400);
    // The two browsers that signed in, and no device.
    expect((await sentinel.listSessions(USER)).map((session) => session.clientIds)).toEqual([[], []]);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });

  it('counts towards maxSessionsPerUser: approving one more device ends the oldest, never the approving browser', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ apps: deviceApps(), session: { maxSessionsPerUser: 3 }, onEvent: (event) => events.push(event) });
    const browser: Browser = {};
    const oldest = await connectDevice(sentinel, browser);
    // The browser is signed in now: each further code goes straight to the confirmation, no password asked.
    for (let i = 0; i < 4; i += 1) {
      const codes = await requestCodes(sentinel);
      const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
      expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    }
    const sessions = await sentinel.listSessions(USER);
    expect(sessions.map((session) => session.clientIds)).toEqual([[], [DEVICE_CLIENT_ID], [DEVICE_CLIENT_ID]]);
    expect(events.filter((event) => event.type === 'session.ended')).toHaveLength(3);
    // The oldest device's grant ended with its session, as a logout ends it.
    expect(await live(sentinel, oldest.access_token)).toBe(false);
    expect(await refreshes(sentinel, oldest.refresh_token)).toBe(false);
  });

  it('approves once the oldest session has ended, though onEvent throws on that ending (told to onError)', async () => {
    const errors: unknown[] = [];
    const onEvent = (event: SentinelEvent): void => {
      if (event.type === 'session.ended') throw new Error('audit sink down');
    };
    const options = {
      apps: deviceApps(),
      session: { maxSessionsPerUser: 2 },
      onEvent,
      onError: (error: unknown) => void errors.push(error),
    };
    const sentinel = makeSentinel(options);
    const browser: Browser = {};
    const oldest = await connectDevice(sentinel, browser);
    const codes = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    expect(await live(sentinel, oldest.access_token)).toBe(false);
    expect(errors).toHaveLength(1);
  });

  it('keeps an approval that stood when ending the sessions past the bound fails, and reports the cause', async () => {
    const { store, failIndex } = failingIndexStore();
    const errors: unknown[] = [];
    // The index fails from the moment the second approval is announced: its write stood, the ending of the oldest not.
    let armed = false;
    const onEvent = (event: SentinelEvent): void => {
      if (armed && event.type === 'device.approved') failIndex(true);
    };
    const options = { apps: deviceApps(), store, session: { maxSessionsPerUser: 2 }, onEvent };
    const sentinel = makeSentinel({ ...options, onError: (error) => errors.push(error) });
    const browser: Browser = {};
    await connectDevice(sentinel, browser);
    armed = true;
    const codes = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    const answer = await decide(sentinel, browser, opened, 'approve');
    failIndex(false);
    // The device is connected, so the page says so; the cause goes to onError.
    expect(answer.status, String(answer.body)).toBe(200);
    expect(errors).toEqual([expect.objectContaining({ message: 'index write failed' })]);
    advanceClock(6);
    expect((await poll(sentinel, codes.device_code)).status).toBe(200);
  });

  it('outlives the sign-out of the browser that approved it', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const tokens = await connectDevice(sentinel);
    const [browserSession] = await sentinel.listSessions(USER);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: browserSession?.sid as string })).toBe(true);
    expect(await live(sentinel, tokens.access_token)).toBe(true);
    expect(await refreshes(sentinel, tokens.refresh_token)).toBe(true);
  });

  it('approves nothing when the index cannot be written at the approval, and reports the cause', async () => {
    const { store, failIndex } = failingIndexStore();
    const errors: unknown[] = [];
    const events: SentinelEvent[] = [];
    const options = { apps: deviceApps(), store, onEvent: (event: SentinelEvent) => void events.push(event) };
    const sentinel = makeSentinel({ ...options, onError: (error) => errors.push(error) });
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    failIndex(true);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(500);
    expect(errors).toContainEqual(expect.objectContaining({ message: 'index write failed' }));
    failIndex(false);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    expect(events.map((event) => event.type)).not.toContain('device.approved');
  });

  it('leaves no entry behind when the store fails at the write of the approval itself', async () => {
    const { store, fail } = failingSwaps(new MemoryStore());
    const sentinel = makeSentinel({ apps: deviceApps(), store, onError: () => undefined });
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    const before = await sentinel.listSessions(USER);
    // The index takes the approval's entry; the device record's write after it fails.
    fail((entries) => entries.some((entry) => entry.key.startsWith('device:')));
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(500);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    // Nothing was approved, so no device is listed among the user's sessions.
    expect(await sentinel.listSessions(USER)).toEqual(before);
  });

  it('takes the entry back and ends no session past the bound when onEvent vetoes device.approved', async () => {
    let veto = false;
    const events: SentinelEvent[] = [];
    const onEvent = (event: SentinelEvent): void => {
      if (veto && event.type === 'device.approved') throw new Error('device.approved vetoed');
      events.push(event);
    };
    const sentinel = makeSentinel({ apps: deviceApps(), session: { maxSessionsPerUser: 2 }, onEvent, onError: () => undefined });
    const browser: Browser = {};
    const oldest = await connectDevice(sentinel, browser);
    const before = await sentinel.listSessions(USER);
    const codes = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    veto = true;
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(500);
    // Nothing approved: the device waits, the index is as it was, and the oldest device still has its session.
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    expect(await sentinel.listSessions(USER)).toEqual(before);
    expect(await live(sentinel, oldest.access_token)).toBe(true);
    expect(events.filter((event) => event.type === 'session.ended')).toEqual([]);
  });

  // Not written: the commit is taken back (the grant deleted, the approval restored), and the next poll gets the tokens.
  // Written with its reply lost: taken back all the same, and the index lists the grant where the approval's stand-in
  // was; the next poll's grant has the same id and takes that place (read as a withdrawn approval, the user's Allow
  // was lost: access_denied).
  it.each([
    ['cannot be written', false],
    ['was written but its reply was lost', true],
  ] as const)('issues nothing when the index %s, reports the cause, and the next poll gets the tokens', async (_case, landed) => {
    const { store, failIndex } = failingIndexStore(landed);
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ apps: deviceApps(), store, onError: (error) => errors.push(error) });
    const codes = await requestCodes(sentinel, { scope: 'openid offline_access' });
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    advanceClock(6);
    failIndex(true);
    const failed = await poll(sentinel, codes.device_code);
    expect([failed.status, jsonBody(failed).error]).toEqual([500, 'server_error']);
    expect(errors).toContainEqual(expect.objectContaining({ message: 'index write failed' }));
    failIndex(false);
    expect(await sentinel.listUserGrants(USER)).toEqual([]);
    advanceClock(12);
    const retried = await poll(sentinel, codes.device_code);
    expect(retried.status, String(retried.body)).toBe(200);
    const tokens = jsonBody(retried) as { access_token: string; refresh_token: string };
    expect(await live(sentinel, tokens.access_token)).toBe(true);
    expect(await sentinel.listUserGrants(USER)).toMatchObject([{ clientId: DEVICE_CLIENT_ID, grants: 1 }]);
    expect(errors).toHaveLength(1);
    // Listed in the index as any device grant: signing out everywhere ends it.
    await sentinel.endUserSessions(USER);
    expect(await refreshes(sentinel, tokens.refresh_token)).toBe(false);
  });
});
