/**
 * Signing in again as the same user in the same browser (`prompt=login`, `max_age`, an acr step-up) replaces the
 * device session, and the grants issued through the earlier one are kept ("a new sign-in is not a logout"). Signing
 * out of that browser afterwards must end them too: the logout endpoint (the account page's "Sign out" posts there),
 * RP-initiated logout, `sentinel.endSession`. Each app is told with the `sid` of the ID tokens it got. On MemoryStore
 * and on two instances sharing a Redis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelOptions, Store } from '../src/index.js';
import { MemoryStore } from '../src/index.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, call, jsonOf, openLogin, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import {
  APP_B,
  appEntry,
  type AppTokens,
  type FlowApp,
  MAIN_APP,
  pkceQuery,
  redeemCode,
  sessionWorks,
  signedInWith,
  signInAgain,
  signInWithSession,
  tokensOf,
  tokenStanding,
} from './helpers/logout-flow.js';
import { type LogoutReceiver, startReceiver } from './helpers/logout-receiver.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const OTHER_USER = { username: 'bob', password: 'password-of-bob-0123', id: 'u-bob' };
const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;
const LIVE = { guard: true, introspection: true, refresh: true };
const ENDED = { guard: false, introspection: false, refresh: false };

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

interface Setup {
  /** The instance the browser signs in on. */
  sentinel: Sentinel;
  /** The instance the browser signs out on (the same one on MemoryStore). */
  other: Sentinel;
  receivers: Record<'a' | 'b', LogoutReceiver>;
}

/** Apps A (the fixtures' main app) and B, each with a back-channel logout receiver; alice and bob can sign in. */
async function setUp(stores: [Store, Store], overrides: Partial<SentinelOptions> = {}): Promise<Setup> {
  const instances: Sentinel[] = [];
  const jwks = () => (instances[0] as Sentinel).jwks();
  const receivers = {
    a: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, jwks }),
    b: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: APP_B.clientId, jwks }),
  };
  running.push(...Object.values(receivers));
  const base = baseOptions();
  const apps = (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receivers.a.uri } : app));
  const appB = appEntry(APP_B, { backchannelLogoutUri: receivers.b.uri });
  const options = (store: Store): Partial<SentinelOptions> => ({
    store,
    apps: [...apps, appB],
    clientJwks: { allowPrivateAddresses: true },
    ...overrides,
    users: {
      authenticate: async ({ username, password }) => {
        if (username === USERNAME && password === PASSWORD) return { id: USER_ID };
        return username === OTHER_USER.username && password === OTHER_USER.password ? { id: OTHER_USER.id } : null;
      },
    },
  });
  const [first, second] = stores;
  instances.push(makeSentinel(options(first)));
  instances.push(first === second ? (instances[0] as Sentinel) : makeSentinel(options(second)));
  running.push(...new Set(instances));
  return { sentinel: instances[0] as Sentinel, other: instances[1] as Sentinel, receivers };
}

/** A sign-in on the host's own page (`login.url`, `completeLogin()`), in the browser holding `cookie` (if any). */
async function hostSignIn(sentinel: Sentinel, app: FlowApp, cookie?: string, extra: Record<string, string> = {}) {
  const { verifier, query } = pkceQuery(app, extra);
  const headers = cookie === undefined ? {} : { cookie: `sentinel_session=${cookie}` };
  const authorize = await call(sentinel, { path: AUTHORIZE_PATH, query, headers });
  const interaction = new URL(String(authorize.headers.location)).searchParams.get('interaction') as string;
  expect(interaction, String(authorize.headers.location)).toBeTruthy();
  // The host's page has no cookie to hand over: only the interaction and who signed in.
  return signedInWith(sentinel, app, await sentinel.completeLogin(interaction, { userId: USER_ID }), verifier);
}

function logout(sentinel: Sentinel, cookie: string) {
  return call(sentinel, {
    method: 'POST',
    path: `${ACCOUNT_PATH}/logout`,
    headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
  });
}

/** App A signs in, then the same user signs in again in the same browser for app B. */
async function reauthenticated(setup: Setup, extra?: Record<string, string>) {
  const first = await signInWithSession(setup.sentinel);
  const again = await signInAgain(setup.sentinel, APP_B, first.cookie, extra);
  expect(again.tokens.sid, 'the new sign-in is a new session').not.toBe(first.tokens.sid);
  expect(await sessionWorks(setup.sentinel, first.cookie), 'the earlier cookie signs nobody in').toBe(false);
  expect(await tokenStanding(setup.sentinel, first.tokens, MAIN_APP), 'a new sign-in is not a logout').toEqual(LIVE);
  return { a: first.tokens, b: again.tokens, cookie: again.cookie };
}

/** Both apps' tokens ended, on both instances; each app told once, with the sid of the ID tokens it holds. */
async function expectSignedOut(setup: Setup, signedIn: { a: AppTokens; b: AppTokens }): Promise<void> {
  for (const instance of new Set([setup.sentinel, setup.other])) {
    expect(await tokenStanding(instance, signedIn.a, MAIN_APP), 'app A, signed in before the new sign-in').toEqual(ENDED);
    expect(await tokenStanding(instance, signedIn.b, APP_B)).toEqual(ENDED);
  }
  await setup.receivers.a.waitFor(1);
  await setup.receivers.b.waitFor(1);
  expect(setup.receivers.a.received.map((token) => [token.sid, token.sub])).toEqual([[signedIn.a.sid, USER_ID]]);
  expect(setup.receivers.b.received.map((token) => [token.sid, token.sub])).toEqual([[signedIn.b.sid, USER_ID]]);
  expect([...setup.receivers.a.problems, ...setup.receivers.b.problems]).toEqual([]);
  expect(await sessionsOf(setup.other, signedIn)).toEqual([]);
}

/** The sessions `listSessions` shows that name a sid of these tokens (the shared Redis holds other cases' sessions too). */
async function sessionsOf(sentinel: Sentinel, signedIn: { a: AppTokens; b: AppTokens }) {
  const sids = [signedIn.a.sid, signedIn.b.sid];
  return (await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).filter((session) => sids.includes(session.sid));
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: signing out after signing in again in the same browser`, () => {
    it('the logout endpoint (the account page signs out there) ends the grants of the earlier sign-in too', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup);
      // One session of this browser, naming both apps.
      expect(await sessionsOf(setup.other, signedIn)).toEqual([
        { sid: signedIn.b.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID, APP_B.clientId] },
      ]);
      expect((await logout(setup.other, signedIn.cookie)).status).toBe(200);
      await expectSignedOut(setup, signedIn);
    });

    it('a code the earlier sign-in issued just before still redeems after the new one; signing out ends its grant', async () => {
      const setup = await setUp(stores());
      const { verifier, query } = pkceQuery(MAIN_APP);
      const { interaction } = await startInteraction(setup.sentinel, query);
      const csrf = await openLogin(setup.sentinel, interaction);
      const login = await postLogin(setup.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      const line = setCookies(login).find((value) => value.startsWith('sentinel_session=')) as string;
      const code = new URL(String(login.headers.location)).searchParams.get('code') as string;
      // App A's code is still on its way to it when the same user signs in again in this browser, for app B.
      const again = await signInAgain(setup.sentinel, APP_B, line.slice('sentinel_session='.length).split(';')[0] as string);
      const redeemed = await redeemCode(setup.other, MAIN_APP, code, verifier);
      expect(redeemed.status, redeemed.body).toBe(200);
      const signedIn = { a: tokensOf(MAIN_APP, jsonOf(redeemed)), b: again.tokens };
      expect(await tokenStanding(setup.other, signedIn.a, MAIN_APP)).toEqual(LIVE);
      expect(await sessionsOf(setup.other, signedIn)).toEqual([
        { sid: signedIn.b.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID, APP_B.clientId] },
      ]);
      expect((await logout(setup.other, again.cookie)).status).toBe(200);
      await expectSignedOut(setup, signedIn);
    });

    it('RP-initiated logout with an ID token of the new session ends them too', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup, { max_age: '0' });
      const response = await call(setup.other, {
        path: `${ACCOUNT_PATH}/end_session`,
        query: new URLSearchParams({ id_token_hint: signedIn.b.idToken }),
        headers: { cookie: `sentinel_session=${signedIn.cookie}` },
      });
      expect(response.status).toBe(200);
      await expectSignedOut(setup, signedIn);
    });

    it('RP-initiated logout with an ID token of the earlier sign-in names this browser: it ends at once', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup, { max_age: '0' });
      // App A signed in before the re-sign-in: its ID token carries the earlier sid, which this browser's session carries.
      const response = await call(setup.other, {
        path: `${ACCOUNT_PATH}/end_session`,
        query: new URLSearchParams({ id_token_hint: signedIn.a.idToken }),
        headers: { cookie: `sentinel_session=${signedIn.cookie}` },
      });
      expect(response.status).toBe(200);
      expect(String(response.body), 'no confirmation asked').not.toContain('name="confirmation"');
      await expectSignedOut(setup, signedIn);
    });

    it('RP-initiated logout with an ID token of the same user in another browser still asks to confirm', async () => {
      const setup = await setUp(stores());
      const elsewhere = await signInWithSession(setup.sentinel);
      const signedIn = await reauthenticated(setup);
      const response = await call(setup.other, {
        path: `${ACCOUNT_PATH}/end_session`,
        query: new URLSearchParams({ id_token_hint: elsewhere.tokens.idToken }),
        headers: { cookie: `sentinel_session=${signedIn.cookie}` },
      });
      expect(response.status).toBe(200);
      expect(String(response.body)).toContain('name="confirmation"');
      expect(await sessionWorks(setup.other, signedIn.cookie)).toBe(true);
      expect(await tokenStanding(setup.other, signedIn.a, MAIN_APP)).toEqual(LIVE);
    });

    it('sentinel.endSession with the sid of the new session ends them too', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup);
      expect(await setup.other.endSession({ accountId: ACCOUNT, sid: signedIn.b.sid })).toBe(true);
      expect(await sessionWorks(setup.other, signedIn.cookie)).toBe(false);
      await expectSignedOut(setup, signedIn);
    });

    it('sentinel.endSession with the sid of the earlier sign-in ends the browser session as a whole, as RP logout does', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup);
      // App A holds only the earlier sid: the browser session that carries it is what it names.
      expect(await setup.other.endSession({ accountId: ACCOUNT, sid: signedIn.a.sid })).toBe(true);
      expect(await sessionWorks(setup.other, signedIn.cookie)).toBe(false);
      await expectSignedOut(setup, signedIn);
    });

    it('three sign-ins in one browser: signing out ends the grants of all of them', async () => {
      const setup = await setUp(stores());
      const signedIn = await reauthenticated(setup);
      const third = await signInAgain(setup.sentinel, MAIN_APP, signedIn.cookie);
      expect((await logout(setup.other, third.cookie)).status).toBe(200);
      for (const tokens of [signedIn.a, third.tokens]) expect(await tokenStanding(setup.other, tokens, MAIN_APP)).toEqual(ENDED);
      expect(await tokenStanding(setup.other, signedIn.b, APP_B)).toEqual(ENDED);
      await setup.receivers.a.waitFor(2);
      await setup.receivers.b.waitFor(1);
      expect(setup.receivers.a.received.map((token) => token.sid).sort()).toEqual([signedIn.a.sid, third.tokens.sid].sort());
      expect(setup.receivers.b.received.map((token) => token.sid)).toEqual([signedIn.b.sid]);
      expect(await sessionsOf(setup.other, { a: signedIn.a, b: third.tokens })).toEqual([]);
      expect(await sessionsOf(setup.other, signedIn)).toEqual([]);
    });

    it('a host login page (completeLogin): signing out ends the grants of the earlier sign-in too', async () => {
      const setup = await setUp(stores(), { login: { url: 'https://host.example.com/sign-in' } });
      const first = await hostSignIn(setup.sentinel, MAIN_APP);
      const again = await hostSignIn(setup.sentinel, APP_B, first.cookie, { prompt: 'login' });
      expect(again.tokens.sid).not.toBe(first.tokens.sid);
      expect(await sessionWorks(setup.sentinel, first.cookie), 'no earlier session survives the sign-in').toBe(false);
      expect((await logout(setup.other, again.cookie)).status).toBe(200);
      await expectSignedOut(setup, { a: first.tokens, b: again.tokens });
    });

    it("another user signing in on the same browser leaves the first user's apps signed in, as before", async () => {
      const setup = await setUp(stores());
      const first = await signInWithSession(setup.sentinel);
      const bob = await signInAgain(setup.sentinel, APP_B, first.cookie, { prompt: 'login' }, OTHER_USER);
      expect((await logout(setup.other, bob.cookie)).status).toBe(200);
      expect(await tokenStanding(setup.other, first.tokens, MAIN_APP)).toEqual(LIVE);
      expect(await tokenStanding(setup.other, bob.tokens, APP_B)).toEqual(ENDED);
      expect((await setup.other.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toContain(
        first.tokens.sid,
      );
    });
  });
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('logout-reauthentication', 'RedisStore (two instances)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
