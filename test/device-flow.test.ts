/**
 * The device authorization grant (RFC 8628) through `sentinel.handle()`: the device authorization endpoint, the poll's
 * answers, the verification pages and what each refusal leaves unchanged.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEVICE_CODE_GRANT, MemoryStore, type Sentinel, type SentinelEvent, type SentinelResponse } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import { call, postForm, TOKEN_PATH } from './helpers/direct-flow.js';
import {
  DEVICE_AUTHORIZATION_PATH,
  DEVICE_CLIENT_ID,
  DEVICE_CLIENT_SECRET,
  DEVICE_PATH,
  DEVICE_SECRET_CLIENT_ID,
  type Browser,
  type DeviceCodes,
  decide,
  deviceApps,
  enterCode,
  entryCookieOf,
  jsonBody,
  openEntry,
  openConfirmation,
  openConfirmationFor,
  personDecides,
  poll,
  pollError,
  refreshDevice,
  requestCodes,
  signInForDevice,
} from './helpers/device-drive.js';
import {
  ACCOUNT,
  baseOptions,
  CLIENT_ID,
  CLIENT_SECRET,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  PASSWORD,
  PUBLIC_CLIENT_ID,
  USER_ID,
  USERNAME,
} from './helpers/fixtures.js';
import { decodeJwt } from 'jose';
import { contextOf } from '../src/http/context.js';
import { generate } from 'otplib';
import { createSentinel } from '../src/index.js';
import { stepUpFixture } from './helpers/stepup-fixtures.js';
import { failingSwaps } from './helpers/failing-swaps.js';
import { BOT, BOT_CLIENT_ID, botApp, TOKEN_EXCHANGE, TYPE } from './helpers/exchange.js';
import { csrfOf, recordingStore, setCookies, stepCookie } from './helpers/direct-flow.js';

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

function deviceSentinel(overrides: Parameters<typeof makeSentinel>[0] = {}) {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ apps: deviceApps(), onEvent: (event) => events.push(event), ...overrides });
  return { sentinel, events };
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Signs the fixture user in at `accountId` through its authorize endpoint and login page; returns the session cookie. */
async function signInAt(sentinel: Sentinel, accountId: string, clientId: string, redirectUri: string): Promise<string> {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st' });
  const authorize = await call(sentinel, { path: `/sentinel/api/account/${accountId}/authorize`, query });
  expect(authorize.status).toBe(302);
  const [path, interaction] = String(authorize.headers.location).split('?') as [string, string];
  const page = await call(sentinel, { path, query: interaction });
  const form = new URLSearchParams({ csrf_token: csrfOf(String(page.body)), username: USERNAME, password: PASSWORD });
  const response = await postForm(sentinel, path, form.toString(), { query: interaction });
  expect(response.status).toBe(303);
  const session = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  expect(session, 'a session cookie').toBeDefined();
  return (session as string).split(';')[0] as string;
}

describe('device authorization endpoint', () => {
  it('hands out a device code, a user code and where to enter it', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel, { scope: 'openid profile' });
    expect(codes.user_code).toMatch(USER_CODE);
    expect(codes.device_code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codes.verification_uri).toBe(`http://localhost${DEVICE_PATH}`);
    expect(codes.verification_uri_complete).toBe(`${codes.verification_uri}?user_code=${codes.user_code}`);
    expect(codes.expires_in).toBe(600);
    expect(codes.interval).toBe(5);
    expect(events).toContainEqual(expect.objectContaining({ type: 'device.authorized', clientId: DEVICE_CLIENT_ID, outcome: 'success' }));
  });

  it('takes its lifetimes from the deviceFlow option', async () => {
    const { sentinel } = deviceSentinel({ deviceFlow: { expiresIn: 120, interval: 2 } });
    const codes = await requestCodes(sentinel);
    expect([codes.expires_in, codes.interval]).toEqual([120, 2]);
  });

  it('is listed in the metadata with its grant type', async () => {
    const { sentinel } = deviceSentinel();
    const response = await call(sentinel, { path: `/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration` });
    const metadata = jsonBody(response);
    expect(metadata.device_authorization_endpoint).toBe(`http://localhost${DEVICE_AUTHORIZATION_PATH}`);
    expect(metadata.grant_types_supported).toContain(DEVICE_CODE_GRANT);
  });

  it('refuses an app not registered for the grant, a wrong secret and a scope the app may not have', async () => {
    const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, scope: 'profile' } : app));
    const { sentinel } = deviceSentinel({ apps });
    const ask = (form: Record<string, string>) => postForm(sentinel, DEVICE_AUTHORIZATION_PATH, new URLSearchParams(form).toString());
    const unregistered = await ask({ client_id: PUBLIC_CLIENT_ID });
    expect([unregistered.status, jsonBody(unregistered).error]).toEqual([400, 'unauthorized_client']);
    const confidential = await ask({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(jsonBody(confidential).error).toBe('unauthorized_client');
    const wrongSecret = await ask({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: 'not-the-secret' });
    expect([wrongSecret.status, jsonBody(wrongSecret).error]).toEqual([400, 'invalid_client']);
    const kiosk = await ask({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET });
    expect(kiosk.status).toBe(200);
    const scope = await ask({ client_id: DEVICE_CLIENT_ID, scope: 'profile email' });
    expect(jsonBody(scope).error).toBe('invalid_scope');
  });
});

describe('a scope too long for the sign-in', () => {
  it('is refused at device authorization, storing nothing; the longest taken signs in from any verification page', async () => {
    // With defaultMaxAge the sign-in carries max_age too: the verification page's largest additions all at once.
    const apps = deviceApps().map((app) => (app.clientId === DEVICE_SECRET_CLIENT_ID ? { ...app, defaultMaxAge: 600 } : app));
    const store = new MemoryStore();
    const set = vi.spyOn(store, 'set');
    const swap = vi.spyOn(store, 'swap');
    const { sentinel } = deviceSentinel({ apps, store });
    const ask = (scope: string) =>
      postForm(
        sentinel,
        DEVICE_AUTHORIZATION_PATH,
        new URLSearchParams({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET, scope }).toString(),
      );
    // The longest one-token scope taken, by bisection: refusals are invalid_scope, and only they.
    let [taken, refused] = [1, 4096];
    while (refused - taken > 1) {
      const length = Math.floor((taken + refused) / 2);
      const answer = await ask('s'.repeat(length));
      if (answer.status === 200) taken = length;
      else {
        expect([answer.status, jsonBody(answer).error]).toEqual([400, 'invalid_scope']);
        refused = length;
      }
    }
    // A real bound, not one that refuses any long scope.
    expect(taken).toBeGreaterThan(2000);
    set.mockClear();
    swap.mockClear();
    expect((await ask('s'.repeat(refused))).status).toBe(400);
    const written = [...set.mock.calls.map(([key]) => key), ...swap.mock.calls.flatMap(([entries]) => entries.map((entry) => entry.key))];
    expect(written.filter((key) => key.startsWith('device'))).toEqual([]);
    // The longest taken, entered on a page with the most ui_locales the pages keep, by a browser holding a session.
    const codes = jsonBody(await ask('s'.repeat(taken))) as unknown as DeviceCodes;
    const tags = Array.from({ length: 20 }, (_, index) => `${String.fromCharCode(97 + index).repeat(2)}-aaaaaaaa-bbbbbbbb-cccccccc-ddddd`);
    expect(tags.every((tag) => tag.length === 35)).toBe(true);
    const query = new URLSearchParams({ ui_locales: tags.join(' ') }).toString();
    const browser: Browser = { cookie: `sentinel_session=${'A'.repeat(43)}` };
    const entry = await openEntry(sentinel, browser, query);
    const entered = await postForm(
      sentinel,
      DEVICE_PATH,
      new URLSearchParams({ csrf_token: entry.csrf, user_code: codes.user_code }).toString(),
      { query, headers: { 'sec-fetch-site': 'same-origin', cookie: `${browser.cookie}; ${entry.cookie}` } },
    );
    expect(entered.status, String(entered.body)).toBe(303);
    // The sign-in was kept, and its end leads to the confirmation.
    const signedIn = await signInForDevice(sentinel, browser, entered);
    expect(signedIn.status, String(signedIn.body)).toBe(303);
    expect(String(signedIn.headers.location)).toContain('/device/confirm?confirmation=');
  });
});

describe('polling', () => {
  it('names the device grant in a token a bot is delegated from a device token (RFC 8693)', async () => {
    const { sentinel } = deviceSentinel({ apps: [...deviceApps(), botApp()] });
    const codes = await requestCodes(sentinel, { scope: 'read' });
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    advanceClock(6);
    const device = jsonBody(await poll(sentinel, codes.device_code));
    const form = { grant_type: TOKEN_EXCHANGE, subject_token: String(device.access_token), subject_token_type: TYPE.accessToken, ...BOT };
    const exchanged = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
    expect(exchanged.status, String(exchanged.body)).toBe(200);
    const delegated = decodeJwt(jsonBody(exchanged).access_token as string);
    expect(delegated).toMatchObject({ sub: USER_ID, gty: DEVICE_CODE_GRANT, act: { sub: BOT_CLIENT_ID } });
  });

  it('answers authorization_pending, then the tokens once approved, and only once', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel, { scope: 'openid profile' });
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    const done = await personDecides(sentinel, codes.user_code, 'approve');
    expect(done.status).toBe(200);
    expect(String(done.body)).toContain('Device connected');
    advanceClock(6);
    const tokens = await poll(sentinel, codes.device_code);
    expect(tokens.status, String(tokens.body)).toBe(200);
    const body = jsonBody(tokens);
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'openid profile' });
    expect(typeof body.refresh_token).toBe('string');
    const access = decodeJwt(body.access_token as string);
    // As a code carries them: how the person signed in on the verification page (password here).
    expect(access).toMatchObject({
      sub: USER_ID,
      client_id: DEVICE_CLIENT_ID,
      gty: DEVICE_CODE_GRANT,
      acr: 'urn:sentinel:acr:password',
      amr: ['pwd'],
    });
    expect(decodeJwt(body.id_token as string)).toMatchObject({ sub: USER_ID, aud: DEVICE_CLIENT_ID });
    // UserInfo takes the device's token as a user's.
    const userinfo = await call(sentinel, {
      path: `/sentinel/api/account/${ACCOUNT}/userinfo`,
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    // The refresh token works as one of the code flow.
    const refreshed = await refreshDevice(sentinel, body.refresh_token as string);
    expect(refreshed.status, String(refreshed.body)).toBe(200);
    // A refreshed token names the grant it continues: the device code, not an authorization code it never had.
    const again = jsonBody(refreshed);
    expect(decodeJwt(again.access_token as string)).toMatchObject({ sub: USER_ID, gty: DEVICE_CODE_GRANT });
    const twice = jsonBody(await refreshDevice(sentinel, again.refresh_token as string));
    expect(decodeJwt(twice.access_token as string).gty).toBe(DEVICE_CODE_GRANT);
    advanceClock(12);
    expect(await pollError(sentinel, codes.device_code)).toBe('invalid_grant');
    expect(events).toContainEqual(expect.objectContaining({ type: 'device.approved', userId: USER_ID, clientId: DEVICE_CLIENT_ID }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'token.issued', grantType: DEVICE_CODE_GRANT, userId: USER_ID }));
  });

  it('issues only the scope the app may still have, once an operator narrowed it while the device polled', async () => {
    const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, scope: 'openid profile email' } : app));
    const { sentinel } = deviceSentinel({ apps });
    const codes = await requestCodes(sentinel, { scope: 'openid profile email' });
    expect((await personDecides(sentinel, codes.user_code, 'approve')).status).toBe(200);
    const registry = contextOf(sentinel).apps;
    const app = await registry.findApp(ACCOUNT, DEVICE_CLIENT_ID);
    await registry.updateApp?.({ ...(app as NonNullable<typeof app>), scope: 'profile' });
    advanceClock(6);
    const tokens = await poll(sentinel, codes.device_code);
    expect(tokens.status, String(tokens.body)).toBe(200);
    expect(jsonBody(tokens).scope).toBe('openid profile');
    expect(decodeJwt(jsonBody(tokens).access_token as string).scope).toBe('openid profile');
  });

  it('refuses the tokens of a user the claims hook says is gone (idTokenClaims), and spends the device code', async () => {
    let gone = false;
    const { sentinel, events } = deviceSentinel({
      idTokenClaims: true,
      users: { authenticate: baseOptions().users!.authenticate, claims: async () => (gone ? null : { email: 'alice@example.com' }) },
    });
    const codes = await requestCodes(sentinel, { scope: 'openid email' });
    await personDecides(sentinel, codes.user_code, 'approve');
    gone = true;
    advanceClock(6);
    const refused = await poll(sentinel, codes.device_code);
    expect(refused.status).toBe(400);
    expect(jsonBody(refused)).toMatchObject({ error: 'invalid_grant', error_description: 'the user no longer exists' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'grant.ended', clientId: DEVICE_CLIENT_ID, reason: 'user-gone' }));
    // Spent: not even a user the hook knows again gets tokens for it.
    gone = false;
    advanceClock(6);
    expect(await pollError(sentinel, codes.device_code)).toBe('invalid_grant');
    expect(events.some((event) => event.type === 'token.issued')).toBe(false);
  });

  it('answers slow_down to a poll within the interval, and keeps the longer interval', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    expect(await pollError(sentinel, codes.device_code)).toBe('slow_down');
    // The interval is now 10 s: 6 s later is still too soon, and raises it to 15 s.
    advanceClock(6);
    expect(await pollError(sentinel, codes.device_code)).toBe('slow_down');
    advanceClock(6 + 16);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
  });

  it('answers access_denied once the person denies', async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const page = await personDecides(sentinel, codes.user_code, 'deny');
    expect(String(page.body)).toContain('Access denied');
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
    expect(events).toContainEqual(expect.objectContaining({ type: 'device.denied', outcome: 'failure' }));
  });

  it('changes nothing when onEvent vetoes the approval or the denial: the device keeps polling', async () => {
    for (const [choice, vetoed] of [
      ['approve', 'device.approved'],
      ['deny', 'device.denied'],
    ] as const) {
      const errors: unknown[] = [];
      const { sentinel } = deviceSentinel({
        onEvent: (event) => {
          if (event.type === vetoed) throw new Error(`${vetoed} vetoed`);
        },
        onError: (error) => errors.push(error),
      });
      const codes = await requestCodes(sentinel);
      expect((await personDecides(sentinel, codes.user_code, choice)).status, choice).toBe(500);
      expect(errors).toContainEqual(expect.objectContaining({ message: `${vetoed} vetoed` }));
      expect(await pollError(sentinel, codes.device_code), choice).toBe('authorization_pending');
    }
  });

  it('keeps the confirmation when an Allow or a Deny failed (store, veto): the same choice posted again decides', async () => {
    // advanceClock counts from the real clock: each move goes further than the one before.
    let moved = 0;
    const later = (): void => {
      moved += 6;
      advanceClock(moved);
    };
    for (const choice of ['approve', 'deny'] as const) {
      const { store, fail } = failingSwaps(new MemoryStore());
      let veto = false;
      const { sentinel } = deviceSentinel({
        store,
        onEvent: (event) => {
          if (veto && (event.type === 'device.approved' || event.type === 'device.denied')) throw new Error('decision vetoed');
        },
        onError: () => undefined,
      });
      const codes = await requestCodes(sentinel);
      const browser: Browser = {};
      const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
      // The write of the device record fails: nothing is decided, and the page the person has open still decides.
      fail((entries) => entries.some((entry) => entry.key.startsWith('device:')));
      expect((await decide(sentinel, browser, opened, choice)).status, choice).toBe(500);
      expect(await pollError(sentinel, codes.device_code), choice).toBe('authorization_pending');
      veto = true;
      expect((await decide(sentinel, browser, opened, choice)).status, choice).toBe(500);
      veto = false;
      later();
      expect(await pollError(sentinel, codes.device_code), choice).toBe('authorization_pending');
      const decided = await decide(sentinel, browser, opened, choice);
      expect(decided.status, `${choice}: ${String(decided.body)}`).toBe(200);
      later();
      if (choice === 'deny') expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
      else expect((await poll(sentinel, codes.device_code)).status).toBe(200);
      // Single use all the same: once it decided, the confirmation is gone.
      expect((await decide(sentinel, browser, opened, choice)).status, choice).toBe(400);
    }
  });

  // The write of the device record landed, but its answer was lost (a Redis timeout after Redis ran it): the 500 must
  // leave nothing decided, as a write that never landed does. Left approved, with the approval's session index entry
  // withdrawn, the record made the poll answer access_denied and the repost "already used": the Allow was lost.
  it('decides again after an Allow whose record write landed but whose answer was lost', async () => {
    const { store, fail } = failingSwaps(new MemoryStore());
    const { sentinel } = deviceSentinel({ store, onError: () => undefined });
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    fail((entries) => entries.some((entry) => entry.key.startsWith('device:') && entry.value?.includes('"approved"') === true), 1, true);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(500);
    advanceClock(6);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    const decided = await decide(sentinel, browser, opened, 'approve');
    expect(decided.status, String(decided.body)).toBe(200);
    advanceClock(12);
    const polled = await poll(sentinel, codes.device_code);
    expect(polled.status, String(polled.body)).toBe(200);
  });

  it('keeps neither the device record nor its user code when onEvent vetoes device.authorized', async () => {
    const memory = new MemoryStore();
    const set = vi.spyOn(memory, 'set');
    const swap = vi.spyOn(memory, 'swap');
    const { sentinel } = deviceSentinel({
      store: memory,
      onEvent: (event) => {
        if (event.type === 'device.authorized') throw new Error('device.authorized vetoed');
      },
      onError: () => undefined,
    });
    const answer = await postForm(sentinel, DEVICE_AUTHORIZATION_PATH, new URLSearchParams({ client_id: DEVICE_CLIENT_ID }).toString());
    expect(answer.status).toBe(500);
    // Written before the event, and gone again: no code the answer never gave out stays claimed.
    const written = [...set.mock.calls.map(([key]) => key), ...swap.mock.calls.flatMap(([entries]) => entries.map((entry) => entry.key))];
    const device = written.filter((key) => key.startsWith('device:') || key.startsWith('device-user:'));
    expect(device).toHaveLength(2);
    for (const key of device) expect(await memory.get(key), key).toBeNull();
  });

  it('changes nothing when onEvent vetoes the denial of a sign-in cancelled on the login page', async () => {
    const { sentinel } = deviceSentinel({
      onEvent: (event) => {
        if (event.type === 'device.denied') throw new Error('device.denied vetoed');
      },
      onError: () => undefined,
    });
    const codes = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, {}, codes.user_code);
    const [path, query] = String(entered.headers.location).split('?') as [string, string];
    const page = await call(sentinel, { path, query });
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(String(page.body))?.[1] ?? '';
    const cancelled = await postForm(sentinel, path, new URLSearchParams({ csrf_token: csrf, cancel: '1' }).toString(), { query });
    expect(cancelled.status).toBe(500);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
  });

  it('announces a device sign-in only once its confirmation is written, and a veto deletes the confirmation', async () => {
    // The confirmation's write fails: the sign-in answers 500, its session is taken back and never announced.
    const memory = new MemoryStore();
    let failConfirmations = true;
    const real = memory.set.bind(memory);
    const set = vi.spyOn(memory, 'set');
    set.mockImplementation((key, value, ttlMs) =>
      failConfirmations && key.startsWith('device-confirm:') ? Promise.reject(new Error('store down')) : real(key, value, ttlMs),
    );
    const errors: unknown[] = [];
    const { sentinel, events } = deviceSentinel({ store: memory, onError: (error) => errors.push(error) });
    const codes = await requestCodes(sentinel);
    const failed = await signInForDevice(sentinel, {}, await enterCode(sentinel, {}, codes.user_code));
    expect(failed.status).toBe(500);
    expect(errors).toEqual([expect.objectContaining({ message: 'store down' })]);
    expect(events.map((event) => event.type)).not.toContain('session.created');
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);

    // An onEvent that vetoes session.created: the confirmation written for it goes again.
    failConfirmations = false;
    const vetoing = deviceSentinel({
      store: memory,
      onEvent: (event) => {
        if (event.type === 'session.created') throw new Error('session.created vetoed');
      },
      onError: () => undefined,
    });
    set.mockClear();
    const vetoed = await signInForDevice(vetoing.sentinel, {}, await enterCode(vetoing.sentinel, {}, codes.user_code));
    expect(vetoed.status).toBe(500);
    const confirmations = set.mock.calls.map(([key]) => key).filter((key) => key.startsWith('device-confirm:'));
    expect(confirmations).toHaveLength(1);
    expect(await memory.get(confirmations[0] as string)).toBeNull();
  });

  it('answers expired_token after expires_in, and the page refuses the code', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    advanceClock(601);
    expect(await pollError(sentinel, codes.device_code)).toBe('expired_token');
    const entered = await enterCode(sentinel, {}, codes.user_code);
    expect(entered.status).toBe(400);
    expect(String(entered.body)).toContain('not valid or has expired');
  });

  it('refuses a device code of another client, and leaves it to its own client', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    await personDecides(sentinel, codes.user_code, 'approve');
    const other = await poll(sentinel, codes.device_code, { client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET });
    expect([other.status, jsonBody(other).error]).toEqual([400, 'invalid_grant']);
    // Answered as a made-up code: another client (anyone who knows a public client's id) learns nothing of this one.
    const madeUp = await poll(sentinel, 'x'.repeat(43), { client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET });
    expect(other.body).toEqual(madeUp.body);
    const own = await poll(sentinel, codes.device_code);
    expect(own.status).toBe(200);
  });

  it('refuses an unknown device code and a missing one', async () => {
    const { sentinel } = deviceSentinel();
    expect(await pollError(sentinel, 'x'.repeat(43))).toBe('invalid_grant');
    const missing = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({ grant_type: DEVICE_CODE_GRANT, client_id: DEVICE_CLIENT_ID }).toString(),
    );
    expect(jsonBody(missing).error).toBe('invalid_request');
  });
});

describe('verification page', () => {
  it('takes the code with or without the dash, in any case, in full width and with any dash', async () => {
    const { sentinel } = deviceSentinel();
    for (const shape of [
      (code: string) => code.toLowerCase(),
      (code: string) => code.replace('-', ''),
      (code: string) => ` ${code.replace('-', ' ')} `,
      // A Japanese input method in full-width mode: full-width letters, dash (U+FF0D) and space (U+3000).
      (code: string) => `${code.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).replace('-', '\uff0d')}\u3000`,
      // A phone's keyboard or a copied code: an en dash, a non-breaking hyphen, a minus sign.
      (code: string) => code.replace('-', '\u2013'),
      (code: string) => code.replace('-', '\u2011'),
      (code: string) => code.replace('-', '\u2212'),
    ]) {
      const codes = await requestCodes(sentinel);
      const entered = await enterCode(sentinel, {}, shape(codes.user_code));
      expect(entered.status, shape(codes.user_code)).toBe(303);
    }
  });

  it('prefills the code of verification_uri_complete and has the page headers of the login page', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const page = await call(sentinel, { path: DEVICE_PATH, query: `user_code=${codes.user_code.toLowerCase().replace('-', '')}` });
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain(`value="${codes.user_code}"`);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('says in the person’s language that a code is wrong or already used', async () => {
    const { sentinel } = deviceSentinel();
    const wrong = await enterCode(sentinel, { language: 'de' }, 'BCDF-GHJK');
    expect(wrong.status).toBe(400);
    expect(String(wrong.body)).toContain('Dieser Code ist ungültig oder abgelaufen');
    const codes = await requestCodes(sentinel);
    await personDecides(sentinel, codes.user_code, 'approve');
    const used = await enterCode(sentinel, { language: 'fr' }, codes.user_code);
    expect(used.status).toBe(400);
    expect(String(used.body)).toContain('Ce code a déjà été utilisé');
  });

  it('keeps the ui_locales it was opened with through the code entry, the sign-in, the confirmation and the outcome', async () => {
    const { sentinel } = deviceSentinel({ throttle: { maxFailures: 2 } });
    const codes = await requestCodes(sentinel);
    const fr = { 'accept-language': 'en', 'sec-fetch-site': 'same-origin' };
    const lang = (response: SentinelResponse) => /<html lang="([^"]+)"/.exec(String(response.body))?.[1];
    const formAction = (response: SentinelResponse) => {
      const action = /<form method="post" action="([^"]+)"/.exec(String(response.body))?.[1]?.replaceAll('&amp;', '&') ?? '';
      return action.split('?') as [string, string | undefined];
    };
    const entry = await call(sentinel, { path: DEVICE_PATH, query: 'ui_locales=fr', headers: fr });
    expect(lang(entry)).toBe('fr');
    const [entryPath, entryQuery] = formAction(entry);
    const post = (path: string, query: string | undefined, form: Record<string, string>, cookie?: string) =>
      postForm(sentinel, path, new URLSearchParams(form).toString(), {
        query,
        headers: { ...fr, ...(cookie === undefined ? {} : { cookie }) },
      });
    const entryForm = { csrf_token: csrfOf(entry.body as string) };
    const entryCookie = entryCookieOf(entry);
    const wrong = await post(entryPath, entryQuery, { ...entryForm, user_code: 'BCDF-GHJK' }, entryCookie);
    expect([wrong.status, lang(wrong)]).toEqual([400, 'fr']);

    const entered = await post(entryPath, entryQuery, { ...entryForm, user_code: codes.user_code }, entryCookie);
    expect(entered.status).toBe(303);
    const [loginPath, loginQuery] = String(entered.headers.location).split('?') as [string, string];
    const login = await call(sentinel, { path: loginPath, query: loginQuery, headers: fr });
    expect(lang(login)).toBe('fr');
    const signedIn = await post(loginPath, loginQuery, { csrf_token: csrfOf(login.body), username: USERNAME, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    const cookie = setCookies(signedIn)
      .find((line) => line.startsWith('sentinel_session='))
      ?.split(';')[0];
    const [confirmPath, confirmQuery] = String(signedIn.headers.location).split('?') as [string, string];
    const confirm = await call(sentinel, { path: confirmPath, query: confirmQuery, headers: { ...fr, cookie: cookie ?? '' } });
    expect(lang(confirm)).toBe('fr');
    const [decidePath, decideQuery] = formAction(confirm);
    const confirmation = new URLSearchParams(confirmQuery).get('confirmation') ?? '';
    const outcome = await post(decidePath, decideQuery, { confirmation, csrf_token: csrfOf(confirm.body), approve: '1' }, cookie);
    expect([outcome.status, lang(outcome)]).toEqual([200, 'fr']);

    // The 429 of code entry too: it is an error page of the same request.
    await post(entryPath, entryQuery, { ...entryForm, user_code: 'BCDF-GHJK' }, entryCookie);
    const throttled = await post(entryPath, entryQuery, { ...entryForm, user_code: 'BCDF-GHJK' }, entryCookie);
    expect([throttled.status, lang(throttled)]).toEqual([429, 'fr']);
  });

  it('throttles wrong codes on the password limits with a 429 page', async () => {
    const { sentinel, events } = deviceSentinel({ throttle: { maxFailures: 3 } });
    for (let i = 0; i < 3; i += 1) expect((await enterCode(sentinel, {}, 'BCDF-GHJK')).status).toBe(400);
    const codes = await requestCodes(sentinel);
    const throttled = await enterCode(sentinel, {}, codes.user_code);
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('900');
    expect(String(throttled.body)).toContain('Too many wrong codes');
    expect(events).toContainEqual(expect.objectContaining({ type: 'login.throttled', outcome: 'failure' }));
    // Another address is not held back by this one's guesses.
    expect((await enterCode(sentinel, {}, codes.user_code, '198.51.100.9')).status).toBe(303);
  });

  it('counts wrong codes from one IPv6 /64 together, whichever of its addresses they come from', async () => {
    // maxFailuresPerIp high: the code entry's own per-address counter (on maxFailures) is the one under test.
    const { sentinel } = deviceSentinel({ throttle: { maxFailures: 3, maxFailuresPerIp: 1000 } });
    for (let i = 0; i < 3; i += 1) expect((await enterCode(sentinel, {}, 'BCDF-GHJK', `2001:db8:7:1::${i + 1}`)).status).toBe(400);
    const codes = await requestCodes(sentinel);
    expect((await enterCode(sentinel, {}, codes.user_code, '2001:db8:7:1:abcd::9')).status).toBe(429);
    expect((await enterCode(sentinel, {}, codes.user_code, '2001:db8:7:2::1')).status).toBe(303);
  });

  it('counts wrong codes from one IPv6 /48 together, across its /64s, on maxFailuresPerNetwork', async () => {
    // Each /64 of a /48 has maxFailures of its own: without the /48's counter, one network would guess 65 536 times
    // as many codes as one address.
    const { sentinel, events } = deviceSentinel({ throttle: { maxFailures: 5, maxFailuresPerIp: 1000, maxFailuresPerNetwork: 4 } });
    for (let i = 0; i < 4; i += 1) expect((await enterCode(sentinel, {}, 'BCDF-GHJK', `2001:db8:7:${i + 1}::1`)).status).toBe(400);
    const codes = await requestCodes(sentinel);
    expect((await enterCode(sentinel, {}, codes.user_code, '2001:db8:7:99::1')).status).toBe(429);
    expect(events).toContainEqual(expect.objectContaining({ type: 'login.throttled', scope: 'ip' }));
    // Another /48 is not held back by this one's guesses.
    expect((await enterCode(sentinel, {}, codes.user_code, '2001:db8:8:1::1')).status).toBe(303);
  });

  it('throttles concurrent guesses to the limit', async () => {
    const { sentinel } = deviceSentinel({ throttle: { maxFailures: 5 } });
    const answers = await Promise.all(Array.from({ length: 30 }, () => enterCode(sentinel, {}, 'BCDF-GHJK')));
    expect(answers.filter((answer) => answer.status === 400).length).toBe(5);
    expect(answers.filter((answer) => answer.status === 429).length).toBe(25);
  });

  it('keeps counting wrong codes across right ones on a store without decrement', async () => {
    // Anyone can mint a right code of the public device app: on a store that cannot give a slot back, it must not
    // clear the guesses around it.
    const store = recordingStore(new MemoryStore());
    expect('decrement' in store).toBe(false);
    const { sentinel } = deviceSentinel({ store, throttle: { maxFailures: 5, maxFailuresPerIp: 1000 } });
    const statuses: number[] = [];
    for (let round = 0; round < 4; round += 1) {
      for (let i = 0; i < 2; i += 1) statuses.push((await enterCode(sentinel, {}, 'BCDF-GHJK', '198.51.100.9')).status);
      statuses.push((await enterCode(sentinel, {}, (await requestCodes(sentinel)).user_code, '198.51.100.9')).status);
    }
    // Two wrong and one right per round: the fifth slot goes in the second round's right code, then only 429s.
    expect(statuses).toEqual([400, 400, 303, 400, 400, 429, 429, 429, 429, 429, 429, 429]);
  });

  it('refuses a code entry posted from another site', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const response = await postForm(sentinel, DEVICE_PATH, new URLSearchParams({ user_code: codes.user_code }).toString(), {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(response.status).toBe(403);
  });

  it('refuses a code entry without the CSRF token of its page: 403, no throttle slot spent, nothing changed', async () => {
    const { sentinel, events } = deviceSentinel({ throttle: { maxFailures: 3 } });
    const codes = await requestCodes(sentinel);
    const entry = await openEntry(sentinel, {});
    const tie = setCookies(entry.page).find((line) => line.startsWith('sentinel_session_device=')) ?? '';
    expect(tie).toMatch(/; Path=\/sentinel\/api\/account\/[^/;]+\/device;/);
    expect(tie).toContain('HttpOnly');
    expect(tie).toContain('SameSite=Lax');
    expect(tie).toContain('Max-Age=600');
    const other = await openEntry(sentinel, {});
    expect(other.csrf).not.toBe(entry.csrf);
    const attempt = (userCode: string, csrf: string | undefined, cookie: string | undefined) =>
      postForm(
        sentinel,
        DEVICE_PATH,
        new URLSearchParams({ user_code: userCode, ...(csrf === undefined ? {} : { csrf_token: csrf }) }).toString(),
        {
          headers: { 'sec-fetch-site': 'same-origin', ...(cookie === undefined ? {} : { cookie }) },
        },
      );
    // Same-site by every header (a browser without Sec-Fetch-Site, or a sibling page), but no pair of one page.
    for (const [csrf, cookie] of [
      [undefined, undefined],
      [entry.csrf, undefined],
      [undefined, entry.cookie],
      [other.csrf, entry.cookie],
      [entry.cookie.split('=')[1], entry.cookie],
      ['', entry.cookie],
    ] as const) {
      for (const userCode of ['BCDF-GHJK', codes.user_code]) {
        const refused = await attempt(userCode, csrf, cookie);
        expect(refused.status, `${csrf} ${cookie} ${userCode}`).toBe(403);
        expect(refused.headers.location).toBeUndefined();
      }
    }
    // No failure heard, the device still waits, and no slot was spent: of the three, two wrong codes are answered 400
    // and the right one goes on to the sign-in (each page's own pair, the first after a wrong code).
    expect(events.filter((event) => event.type === 'login.failed' || event.type === 'login.throttled')).toEqual([]);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    expect((await attempt('BCDF-GHJK', entry.csrf, entry.cookie)).status).toBe(400);
    expect((await attempt('BCDF-GHJK', other.csrf, other.cookie)).status).toBe(400);
    expect((await attempt(codes.user_code, entry.csrf, entry.cookie)).status).toBe(303);
  });

  it('keeps the code entry form’s cookie across its pages: a wrong code shows the form again with the same pair', async () => {
    const { sentinel } = deviceSentinel();
    const entry = await openEntry(sentinel, {});
    const wrong = await postForm(
      sentinel,
      DEVICE_PATH,
      new URLSearchParams({ csrf_token: entry.csrf, user_code: 'BCDF-GHJK' }).toString(),
      {
        headers: { 'sec-fetch-site': 'same-origin', cookie: entry.cookie },
      },
    );
    expect(wrong.status).toBe(400);
    expect(csrfOf(wrong.body as string)).toBe(entry.csrf);
    expect(entryCookieOf(wrong)).toBe(entry.cookie);
    // A cookie the service did not make is replaced, never echoed into the form.
    const planted = await call(sentinel, { path: DEVICE_PATH, headers: { cookie: 'sentinel_session_device=planted' } });
    expect(entryCookieOf(planted)).not.toBe('sentinel_session_device=planted');
    expect(String(planted.body)).not.toContain('planted');
  });

  it('approves nothing on a forged or replayed confirmation, or from another browser', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    expect(String(opened.page.body)).toContain('Acme TV');
    expect(String(opened.page.body)).toContain(codes.user_code);
    const forged = await decide(sentinel, browser, { ...opened, csrf: 'x'.repeat(43) }, 'approve');
    expect(forged.status).toBe(403);
    const crossSite = await postForm(
      sentinel,
      `${DEVICE_PATH}/confirm`,
      new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, approve: '1' }).toString(),
      { headers: { 'sec-fetch-site': 'cross-site', cookie: browser.cookie ?? '' } },
    );
    expect(crossSite.status).toBe(403);
    const elsewhere = await decide(sentinel, {}, opened, 'approve');
    expect(elsewhere.status).toBe(400);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(400);
  });

  it("approves nothing on another account's confirmation page, even for a user of the same id signed in there", async () => {
    const { sentinel, events } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    // User ids are the host's, per account: alice of the other account has the same id as alice of this one. A
    // browser signed in there replays this account's confirmation on that account's confirmation page.
    const elsewhere: Browser = { cookie: await signInAt(sentinel, OTHER_ACCOUNT, OTHER_CLIENT_ID, 'https://other.example.com/cb') };
    const otherConfirm = `/sentinel/api/account/${OTHER_ACCOUNT}/device/confirm`;
    const headers = { 'sec-fetch-site': 'same-origin', cookie: elsewhere.cookie ?? '' };
    const page = await call(sentinel, { path: otherConfirm, query: new URLSearchParams({ confirmation: opened.confirmation }), headers });
    expect(page.status).toBe(400);
    expect(String(page.body)).not.toContain(codes.user_code);
    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, approve: '1' });
    expect((await postForm(sentinel, otherConfirm, form.toString(), { headers })).status).toBe(400);
    expect(events.filter((event) => event.type === 'device.approved')).toEqual([]);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    // The confirmation is still its own account's to decide, by the browser that signed in there.
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    expect(events.filter((event) => event.type === 'device.approved')).toMatchObject([{ accountId: ACCOUNT, userId: USER_ID }]);
  });

  it('goes straight to the confirmation when the browser is signed in already', async () => {
    const { sentinel } = deviceSentinel();
    const browser: Browser = {};
    const first = await requestCodes(sentinel);
    await personDecides(sentinel, first.user_code, 'approve', browser);
    const second = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, browser, second.user_code);
    const opened = await openConfirmation(sentinel, browser, entered);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    advanceClock(6);
    expect((await poll(sentinel, second.device_code)).status).toBe(200);
  });

  it('denies the device when the person cancels on the login page', async () => {
    const { sentinel } = deviceSentinel();
    const codes = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, {}, codes.user_code);
    const [path, query] = String(entered.headers.location).split('?') as [string, string];
    const page = await call(sentinel, { path, query });
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(String(page.body))?.[1] ?? '';
    const cancelled = await postForm(sentinel, path, new URLSearchParams({ csrf_token: csrf, cancel: '1' }).toString(), { query });
    expect(cancelled.status).toBe(200);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });

  it('asks the TOTP step of a user who has one, as the login page does, and the tokens say so', async () => {
    const { options, secret } = stepUpFixture({ totp: 'always' }, { apps: deviceApps() });
    const sentinel = createSentinel(options);
    const codes = await requestCodes(sentinel);
    const browser: Browser = {};
    const afterPassword = await signInForDevice(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    const step = String(afterPassword.headers.location);
    expect(step).toMatch(/\/login\/totp\?interaction=/);
    expect(browser.cookie, 'no session before the second factor').toBeUndefined();
    const cookie = stepCookie(afterPassword);
    const [path, query] = step.split('?') as [string, string];
    const page = await call(sentinel, { path, query, headers: { cookie } });
    const answered = await postForm(
      sentinel,
      path,
      new URLSearchParams({ csrf_token: csrfOf(page.body as string), code: await generate({ secret }) }).toString(),
      { query, headers: { cookie } },
    );
    browser.cookie = setCookies(answered)
      .find((line) => line.startsWith('sentinel_session='))
      ?.split(';')[0];
    const opened = await openConfirmation(sentinel, browser, answered);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    const tokens = jsonBody(await poll(sentinel, codes.device_code));
    expect(decodeJwt(tokens.access_token as string)).toMatchObject({ acr: 'urn:sentinel:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
  });
});
