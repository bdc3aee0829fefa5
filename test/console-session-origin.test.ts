/**
 * A console session ends with the device session and grant it came from, through `handle()` of the service and the
 * console: the operator signs in to the account page, then to the console through that session; signing out there,
 * another device ending every other session or disconnecting "Operator console", and the console's own "End all
 * sessions" for the operator, the device session's absolute end and another user's sign-in in the same browser each
 * leave the console sending its pages to sign in (303) and refusing its changes.
 * Another app disconnected, or the console's grant past the index's listing of it, leaves the console on. A new
 * sign-in in the browser ends the console session it had.
 * A store that cannot say whether the origin stands fails the request closed (500, onError told).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONSOLE_CLIENT_ID, createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import { MemoryStore, type SentinelRequest, type SentinelResponse, type Store } from '../src/index.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  csrfOf,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  recordingStore,
  setCookies,
} from './helpers/direct-flow.js';
import { ACCOUNT, BOB, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME, withBob } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';
import { type MovableClock, movableClock } from './helpers/clock.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };
const FORM = 'application/x-www-form-urlencoded';

/** A MemoryStore whose reads of the session index fail while `failing` is set. */
function indexFailingStore(): { store: Store; fail: (on: boolean) => void } {
  const inner = new MemoryStore();
  let failing = false;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (name !== 'get' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (key: string) => (failing && key.startsWith('user-sessions:') ? Promise.reject(new Error('index down')) : inner.get(key));
    },
  });
  return { store, fail: (on) => (failing = on) };
}

/** Alice, and Bob, who is no operator: the other person at a shared computer. */

function harness(consoleOptions: { sessionTtl?: number; idleTtl?: number } = {}) {
  const errors: unknown[] = [];
  const { store, fail } = indexFailingStore();
  const sentinel = makeSentinel({
    store,
    account: { enabled: true },
    onError: (error) => errors.push(error),
    users: withBob(),
  });
  // A console session longer than the device session's 8 h, and as long without a request: what ends it below is its
  // origin, not its own lifetime (but in the idle timeout's tests, which pass their own).
  const operatorConsole = createConsole(sentinel, {
    authorize: ({ userId }) => (userId === USER_ID ? 'admin' : null),
    sessionTtl: 86_400,
    idleTtl: 86_400,
    ...consoleOptions,
  });
  const consoleCall = async (request: Partial<SentinelRequest> & { path: string }): Promise<SentinelResponse> => {
    const response = await operatorConsole.handle({ method: 'GET', query: new URLSearchParams(), headers: {}, ...request });
    expect(response).not.toBeNull();
    return response as SentinelResponse;
  };
  return { sentinel, consoleCall, errors, fail, store: contextOf(sentinel).store };
}
type Harness = ReturnType<typeof harness>;

/** A browser signed in to the account page: its session cookie. */
async function accountSession(h: Harness): Promise<string> {
  const start = await call(h.sentinel, { path: PAGE });
  const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  const csrf = await openLogin(h.sentinel, interaction);
  const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(done.headers.location).toBe(PAGE);
  return (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
}

/** The same browser signs in to the console (no password: its session is used): the console cookie and CSRF token. */
async function consoleSignIn(h: Harness, session: string): Promise<{ cookie: string; csrf: string }> {
  const started = await h.consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
  expect(started.status).toBe(303);
  const binding = (setCookies(started)[0] as string).split(';')[0] as string;
  const authorize = new URL(String(started.headers.location));
  const authorized = await call(h.sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
  const callback = new URL(String(authorized.headers.location));
  expect(callback.pathname).toBe('/console/callback');
  const done = await h.consoleCall({ path: callback.pathname, query: callback.searchParams, headers: { cookie: binding } });
  expect(done.status).toBe(303);
  const cookie = (setCookies(done).find((line) => line.startsWith('sentinel_console=')) as string).split(';')[0] as string;
  const apps = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie } });
  expect(apps.status).toBe(200);
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(String(apps.body))?.[1] as string };
}

/** The console's own Sign out, posted with the operator's cookie and CSRF token: its page (200). */
async function consoleSignOut(h: Harness, operator: { cookie: string; csrf: string }): Promise<SentinelResponse> {
  const out = await h.consoleCall({
    method: 'POST',
    path: '/console/sign-out',
    headers: { cookie: operator.cookie, 'content-type': FORM },
    body: new URLSearchParams({ csrf: operator.csrf }).toString(),
  });
  expect(out.status).toBe(200);
  return out;
}

/** Someone signs in to an app in the browser of `session` (`prompt=login`): the login's answer. */
async function signInAgain(h: Harness, session: string, who: { username: string; password: string }): Promise<SentinelResponse> {
  const { challenge } = pkcePair();
  const query = authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256', prompt: 'login' });
  const started = await call(h.sentinel, { path: `${ACCOUNT_PATH}/authorize`, query, headers: { cookie: session } });
  const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(started.headers.location))?.[1] as string;
  const csrf = await openLogin(h.sentinel, interaction);
  return postLogin(h.sentinel, interaction, { csrf_token: csrf, username: who.username, password: who.password }, undefined, session);
}

/** Posts the account page's form with the page's CSRF token. */
async function accountAction(h: Harness, session: string, form: Record<string, string>): Promise<SentinelResponse> {
  const page = await call(h.sentinel, { path: PAGE, headers: { cookie: session } });
  const body = new URLSearchParams({ csrf_token: csrfOf(page.body), ...form }).toString();
  return postForm(h.sentinel, PAGE, body, { headers: { cookie: session, ...SAME_ORIGIN } });
}

/** The console is closed to the cookie: its page sends to sign in, a change is refused and nothing is registered. */
async function expectSignedOut(h: Harness, operator: { cookie: string; csrf: string }): Promise<void> {
  const page = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } });
  expect(page.status).toBe(303);
  expect(page.headers.location).toBe(`/console/sign-in?account=${ACCOUNT}`);
  const form = { csrf: operator.csrf, name: 'after-sign-out', auth: 'none', redirect_uris: 'https://after.example/cb' };
  const change = await h.consoleCall({
    method: 'POST',
    path: `/console/${ACCOUNT}/apps`,
    headers: { cookie: operator.cookie, 'content-type': FORM },
    body: new URLSearchParams(form).toString(),
  });
  expect(change.status).toBe(403);
  const apps = (await contextOf(h.sentinel).apps.listApps?.(ACCOUNT)) ?? [];
  expect(apps.map((app) => app.name)).not.toContain('after-sign-out');
}

describe('console: a session lives only while its origin does', () => {
  it('stays signed in while the device session and its grant stand, and another app disconnected changes nothing', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    const { verifier, challenge } = pkcePair();
    const query = authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' });
    const authorized = await call(h.sentinel, { path: `${ACCOUNT_PATH}/authorize`, query, headers: { cookie: session } });
    const code = new URL(String(authorized.headers.location)).searchParams.get('code') as string;
    expect((await exchangeCode(h.sentinel, code, verifier)).status).toBe(200);
    const disconnected = await accountAction(h, session, { action: 'disconnect', client_id: CLIENT_ID });
    expect(disconnected.headers.location).toBe(`${PAGE}?done=app-disconnected`);
    const again = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } });
    expect(again.status).toBe(200);
  });

  it("outlives the index's listing of its grant (about two access-token lifetimes) while the device session's entry stands", async () => {
    const h = harness();
    const operator = await consoleSignIn(h, await accountSession(h));
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // Past the grant's listing (access token 1 h, listed one more), within the device session's 8 h.
      vi.setSystemTime(Date.now() + 3 * 3600 * 1000);
      const page = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } });
      expect(page.status).toBe(200);
      // Past the device session's absolute end: its entry is gone, and the console session with it.
      vi.setSystemTime(Date.now() + 5.5 * 3600 * 1000);
      const late = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } });
      expect(late.status).toBe(303);
    } finally {
      vi.useRealTimers();
    }
  });

  it("ends at the device session's absolute end even while another app's grant of that session lives on", async () => {
    const h = harness();
    const session = await accountSession(h);
    // An app with a refresh token (30 days) signed in through the same session: the index keeps the session's entry
    // for the grant's sake after the session itself has ended.
    const { verifier, challenge } = pkcePair();
    const query = authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' });
    const authorized = await call(h.sentinel, { path: `${ACCOUNT_PATH}/authorize`, query, headers: { cookie: session } });
    const code = new URL(String(authorized.headers.location)).searchParams.get('code') as string;
    expect(jsonOf(await exchangeCode(h.sentinel, code, verifier)).refresh_token).toEqual(expect.any(String));
    const operator = await consoleSignIn(h, session);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 8.5 * 3600 * 1000);
      await expectSignedOut(h, operator);
    } finally {
      vi.useRealTimers();
    }
  });

  it('ends when another user signs in in the same browser, which ends the device session it came from', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    // Bob, at the same computer, signs in to an app: Alice's session is replaced (session.ended, reason replaced).
    expect((await signInAgain(h, session, BOB)).status).toBe(303);
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: session } })).status).toBe(303);
    // The console cookie is still in the browser: it must not open Alice's console to Bob.
    await expectSignedOut(h, operator);
  });

  it('stays when the operator signs in again in the same browser: the new session carries the earlier one over', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    expect((await signInAgain(h, session, { username: USERNAME, password: PASSWORD })).status).toBe(303);
    expect((await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } })).status).toBe(200);
  });

  it('ends when another user signs in in a browser whose operator had signed in again since (the session carried)', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    // Alice signs in again (prompt=login): the browser's new session carries the one the console came from.
    const again = await signInAgain(h, session, { username: USERNAME, password: PASSWORD });
    expect(again.status).toBe(303);
    const renewed = (setCookies(again).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
    expect((await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } })).status).toBe(200);
    // Then Bob, at the same computer: the browser's session, the earlier sign-in it carries included, is replaced.
    expect((await signInAgain(h, renewed, BOB)).status).toBe(303);
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: renewed } })).status).toBe(303);
    await expectSignedOut(h, operator);
  });

  it("a new sign-in in the browser ends the console session it had: Sign out then leaves none of the browser's", async () => {
    const h = harness();
    const session = await accountSession(h);
    const first = await consoleSignIn(h, session);
    // The same browser signs in again (to the same account, or from the chooser to another), its cookie on the callback.
    const started = await h.consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
    const binding = (setCookies(started)[0] as string).split(';')[0] as string;
    const authorize = new URL(String(started.headers.location));
    const authorized = await call(h.sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
    const callback = new URL(String(authorized.headers.location));
    const done = await h.consoleCall({
      path: callback.pathname,
      query: callback.searchParams,
      headers: { cookie: `${binding}; ${first.cookie}` },
    });
    expect(done.status).toBe(303);
    const cookie = (setCookies(done).find((line) => line.startsWith('sentinel_console=')) as string).split(';')[0] as string;
    expect(cookie).not.toBe(first.cookie);
    // The cookie the browser replaced no longer opens the console, wherever a copy of it went.
    await expectSignedOut(h, first);
    const apps = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie } });
    expect(apps.status).toBe(200);
    await consoleSignOut(h, { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(String(apps.body))?.[1] as string });
    await expectSignedOut(h, { cookie, csrf: '' });
  });

  it('ends when the operator signs out on the account page (the logout endpoint)', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    const out = await postForm(h.sentinel, `${ACCOUNT_PATH}/logout`, '', { headers: { cookie: session, ...SAME_ORIGIN } });
    expect(out.status).toBeLessThan(400);
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: session } })).status).toBe(303);
    await expectSignedOut(h, operator);
  });

  it('its own Sign out says the service session stays, and offers to end it: the next sign-in asks for the password', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    const out = await consoleSignOut(h, operator);
    expect(String(out.body)).toContain('will not ask for your password');
    const action = /<form method="post" action="([^"]+)">/.exec(String(out.body))?.[1] as string;
    expect(action).toBe(`http://localhost${ACCOUNT_PATH}/logout`);
    // The offered form, posted from the page (same origin) with the browser's session cookie.
    const ended = await postForm(h.sentinel, new URL(action).pathname, '', { headers: { cookie: session, ...SAME_ORIGIN } });
    expect(ended.status).toBeLessThan(400);
    const started = await h.consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
    const authorize = new URL(String(started.headers.location));
    const authorized = await call(h.sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
    expect(new URL(String(authorized.headers.location), 'http://localhost').pathname).toBe(`${ACCOUNT_PATH}/login`);
  });

  it('ends when another device ends every other session', async () => {
    const h = harness();
    const operator = await consoleSignIn(h, await accountSession(h));
    const phone = await accountSession(h);
    const ended = await accountAction(h, phone, { action: 'end-other-sessions' });
    expect(ended.headers.location).toBe(`${PAGE}?done=others-ended`);
    await expectSignedOut(h, operator);
  });

  it('ends when "Operator console" is disconnected on the account page, the device session left on', async () => {
    const h = harness();
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    const phone = await accountSession(h);
    const disconnected = await accountAction(h, phone, { action: 'disconnect', client_id: CONSOLE_CLIENT_ID });
    expect(disconnected.headers.location).toBe(`${PAGE}?done=app-disconnected`);
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: session } })).status).toBe(200);
    await expectSignedOut(h, operator);
  });

  it("ends when the console's own End all sessions is used for the operator", async () => {
    const h = harness();
    const operator = await consoleSignIn(h, await accountSession(h));
    const ended = await h.consoleCall({
      method: 'POST',
      path: `/console/${ACCOUNT}/sessions/end-all`,
      headers: { cookie: operator.cookie, 'content-type': FORM },
      body: new URLSearchParams({ csrf: operator.csrf, user: USER_ID }).toString(),
    });
    expect(ended.status).toBe(303);
    await expectSignedOut(h, operator);
  });

  it('fails closed when the session index cannot be read: 500, onError told, no page', async () => {
    const h = harness();
    const operator = await consoleSignIn(h, await accountSession(h));
    h.fail(true);
    const page = await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } });
    expect(page.status).toBe(500);
    expect(h.errors.map(String)).toEqual(['Error: index down']);
    h.fail(false);
    expect((await h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie: operator.cookie } })).status).toBe(200);
  });
});

describe('console: a signed-in user who is no operator', () => {
  it('gets the 403 page and no console session: nothing is stored for them, nothing evicts an operator', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store, account: { enabled: true } });
    const operatorConsole = createConsole(sentinel, { authorize: () => null });
    const consoleCall = async (request: Partial<SentinelRequest> & { path: string }): Promise<SentinelResponse> =>
      (await operatorConsole.handle({ method: 'GET', query: new URLSearchParams(), headers: {}, ...request })) as SentinelResponse;
    const h = { sentinel, consoleCall } as unknown as Harness;
    const session = await accountSession(h);
    const started = await consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
    const binding = (setCookies(started)[0] as string).split(';')[0] as string;
    const authorize = new URL(String(started.headers.location));
    const authorized = await call(sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
    const callback = new URL(String(authorized.headers.location));
    store.reset();
    const done = await consoleCall({ path: callback.pathname, query: callback.searchParams, headers: { cookie: binding } });
    expect(done.status).toBe(403);
    expect(setCookies(done).some((line) => line.startsWith('sentinel_console='))).toBe(false);
    expect(setCookies(done)).toEqual([expect.stringMatching(/^sentinel_console_signin=;/)]);
    expect(store.writes.filter((write) => write.key.startsWith('console-session:'))).toEqual([]);
  });
});

describe('console: a session ends after idleTtl without a request, and at sessionTtl whatever its use', () => {
  // The MemoryStore's TTLs read performance.now(): the idle timeout is the record's TTL, so both clocks move.
  let clock: MovableClock | undefined;
  const minutes = (count: number) => (clock as MovableClock).advance(count * 60_000);
  afterEach(() => clock?.restore());
  const page = (h: Harness, cookie: string) => h.consoleCall({ path: `/console/${ACCOUNT}/apps`, headers: { cookie } });

  it('lives on while used within the default 30 minutes, and ends after 30 minutes without a request', async () => {
    const h = harness({ sessionTtl: 28_800, idleTtl: undefined });
    const operator = await consoleSignIn(h, await accountSession(h));
    clock = movableClock();
    // 20 minutes, then 20 more: 40 minutes after the sign-in, but never 30 without a request.
    await minutes(20);
    expect((await page(h, operator.cookie)).status).toBe(200);
    await minutes(20);
    expect((await page(h, operator.cookie)).status).toBe(200);
    await minutes(31);
    await expectSignedOut(h, operator);
  });

  it('still offers to end the service session when Sign out comes after the idle timeout ended the console session', async () => {
    const h = harness({ sessionTtl: 28_800, idleTtl: undefined });
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    // The Sign out form as the operator's last page shows it.
    const apps = await page(h, operator.cookie);
    const signOut = /<form method="post" action="([^"]+)"><input type="hidden" name="csrf"/.exec(String(apps.body))?.[1] as string;
    expect(signOut).toMatch(/^\/console\/sign-out/);
    clock = movableClock();
    // 31 minutes away: the console session is over, the device session (idle 60 minutes) is not.
    await minutes(31);
    const action = new URL(signOut.replaceAll('&amp;', '&'), 'http://localhost');
    const out = await h.consoleCall({
      method: 'POST',
      path: action.pathname,
      query: action.searchParams,
      headers: { cookie: operator.cookie, 'content-type': FORM },
      body: new URLSearchParams({ csrf: operator.csrf }).toString(),
    });
    expect(out.status).toBe(200);
    expect(String(out.body)).toContain('will not ask for your password');
    const logout = /<form method="post" action="([^"]+)">/.exec(String(out.body))?.[1];
    expect(logout).toBe(`http://localhost${ACCOUNT_PATH}/logout`);
    const ended = await postForm(h.sentinel, new URL(logout as string).pathname, '', { headers: { cookie: session, ...SAME_ORIGIN } });
    expect(ended.status).toBeLessThan(400);
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: session } })).status).toBe(303);
  });

  it('asks for the password again to come back after the idle timeout, though the device session stands', async () => {
    const h = harness({ sessionTtl: 28_800, idleTtl: undefined });
    const session = await accountSession(h);
    const operator = await consoleSignIn(h, session);
    clock = movableClock();
    // Whoever sits at the computer 31 minutes later: the console sends them to sign in, and the device session (idle
    // 60 minutes) would have let them through without a password, the operator's console theirs again.
    await minutes(31);
    const sent = await page(h, operator.cookie);
    expect(sent.status).toBe(303);
    const started = await h.consoleCall({ path: '/console/sign-in', query: new URLSearchParams({ account: ACCOUNT }) });
    const authorize = new URL(String(started.headers.location));
    const authorized = await call(h.sentinel, { path: authorize.pathname, query: authorize.searchParams, headers: { cookie: session } });
    const login = new URL(String(authorized.headers.location), 'http://localhost');
    expect(login.pathname).toBe(`${ACCOUNT_PATH}/login`);
    // The operator, with the password, is back in the console.
    const interaction = login.searchParams.get('interaction') as string;
    const csrf = await openLogin(h.sentinel, interaction);
    const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }, undefined, session);
    const callback = new URL(String(done.headers.location));
    expect(callback.pathname).toBe('/console/callback');
    const binding = (setCookies(started)[0] as string).split(';')[0] as string;
    const back = await h.consoleCall({ path: callback.pathname, query: callback.searchParams, headers: { cookie: binding } });
    const cookie = (setCookies(back).find((line) => line.startsWith('sentinel_console=')) as string).split(';')[0] as string;
    expect((await page(h, cookie)).status).toBe(200);
  });

  it('offers no service sign-out for an address that is no account id', async () => {
    const h = harness();
    for (const account of ['..', 'a/b', '']) {
      const out = await h.consoleCall({ method: 'POST', path: '/console/sign-out', query: new URLSearchParams({ account }) });
      expect(out.status).toBe(200);
      expect(String(out.body)).not.toContain('<form method="post"');
    }
  });

  it('ends at sessionTtl after its sign-in, however often it is used', async () => {
    const h = harness({ sessionTtl: 3600, idleTtl: 1800 });
    const operator = await consoleSignIn(h, await accountSession(h));
    clock = movableClock();
    for (let step = 0; step < 2; step += 1) {
      await minutes(25);
      expect((await page(h, operator.cookie)).status).toBe(200);
    }
    await minutes(11);
    await expectSignedOut(h, operator);
  });

  it('is not brought back by a request that read it before a sign-out ended it', async () => {
    const h = harness();
    const operator = await consoleSignIn(h, await accountSession(h));
    // The console's sign-out lands between this request's read of the session and its extension of the idle timeout.
    const swap = h.store.swap.bind(h.store);
    let signedOut = false;
    h.store.swap = async (entries) => {
      if (!signedOut && entries.some((entry) => entry.key.startsWith('console-session:'))) {
        signedOut = true;
        await consoleSignOut(h, operator);
      }
      return swap(entries);
    };
    const raced = await page(h, operator.cookie);
    expect(signedOut).toBe(true);
    expect(raced.status).toBe(303);
    await expectSignedOut(h, operator);
  });
});
