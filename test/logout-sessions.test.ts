/**
 * The session index: `sid` in ID tokens, `listSessions`, `endSession`, `endUserSessions`, `listUserGrants`,
 * `revokeUserGrants`, and what ending a session does to every token issued through it (MemoryStore; the shared-Redis
 * and cluster runs are in logout-delivery-redis.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { type Sentinel, type SentinelEvent, type SentinelOptions, type Store, MemoryStore } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { readUserIndex } from '../src/sessions/session-index.js';
import { ACCOUNT_PATH, call, jsonOf, openLogin, postForm, postLogin, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, OTHER_ACCOUNT, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import {
  type AppTokens,
  MAIN_APP,
  codeThroughSession,
  redeemCode,
  sessionWorks,
  signInAgain,
  signInThroughSession,
  signInWithSession,
  tokenStanding,
  tokensOf,
  APP_C,
  APP_B,
} from './helpers/logout-flow.js';

function options(overrides: Partial<SentinelOptions> = {}): SentinelOptions {
  const base = baseOptions(overrides);
  const extra = [APP_B, APP_C].map((app) => ({
    accountId: ACCOUNT,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUris: [app.redirectUri],
    grantTypes: ['authorization_code' as const, 'refresh_token' as const],
  }));
  return { ...base, apps: [...(base.apps ?? []), ...extra] };
}

const LIVE = { guard: true, introspection: true, refresh: true };
const ENDED = { guard: false, introspection: false, refresh: false };

describe('sid and the session index', () => {
  it('every app signed in through one session gets the same sid; another session gets another', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const second = await signInThroughSession(sentinel, APP_B, first.cookie);
    expect(first.tokens.sid).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    expect(second.sid).toBe(first.tokens.sid);
    const other = await signInWithSession(sentinel);
    expect(other.tokens.sid).not.toBe(first.tokens.sid);
    const sessions = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(sessions).toEqual([
      { sid: first.tokens.sid, authTime: expect.any(Number), clientIds: [MAIN_APP.clientId, APP_B.clientId] },
      { sid: other.tokens.sid, authTime: expect.any(Number), clientIds: [MAIN_APP.clientId] },
    ]);
    // The sid is no secret of the browser: neither the cookie nor anything that leads to it.
    expect(first.tokens.sid).not.toContain(first.cookie);
    expect(await sentinel.listSessions({ accountId: OTHER_ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it('a refreshed ID token keeps the sid', async () => {
    const sentinel = makeSentinel(options());
    const { tokens } = await signInWithSession(sentinel);
    const response = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/token`,
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken as string, scope: 'openid' }).toString(),
      { headers: { authorization: `Basic ${Buffer.from(`${MAIN_APP.clientId}:${MAIN_APP.clientSecret}`).toString('base64')}` } },
    );
    expect(response.status, response.body).toBe(200);
    const idToken = jsonOf(response).id_token as string;
    expect(JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString()).sid).toBe(tokens.sid);
  });

  it('lists the apps holding grants, and revoking one app leaves the others and the session', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    const second = await signInWithSession(sentinel);
    const apps = await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID });
    expect(apps.map((app) => [app.clientId, app.grants, app.sids])).toEqual([
      [MAIN_APP.clientId, 2, [first.tokens.sid, second.tokens.sid]],
      [APP_B.clientId, 1, [first.tokens.sid]],
    ]);
    expect(await sentinel.revokeUserGrants({ accountId: ACCOUNT, userId: USER_ID, clientId: MAIN_APP.clientId })).toBe(2);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, second.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(LIVE);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(true);
    expect((await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).map((app) => app.clientId)).toEqual([APP_B.clientId]);
  });
});

describe('connected apps', () => {
  it('an app whose grant was revoked through /revoke is no longer listed as connected', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    const revoked = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/token/revoke`,
      new URLSearchParams({ token: b.refreshToken as string, token_type_hint: 'refresh_token' }).toString(),
      { headers: { authorization: `Basic ${Buffer.from(`${APP_B.clientId}:${APP_B.clientSecret}`).toString('base64')}` } },
    );
    expect(revoked.status, revoked.body).toBe(200);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
    const apps = await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID });
    expect(apps.map((app) => [app.clientId, app.grants])).toEqual([[MAIN_APP.clientId, 1]]);
  });
});

/** The grant id of an app's tokens: the first part of its refresh token. */
const gidOf = (tokens: AppTokens): string => (tokens.refreshToken as string).split('.')[0] as string;

/** The grant ids the session index lists for the user, by app. */
async function listedGrants(sentinel: Sentinel): Promise<Map<string, string[]>> {
  const index = await readUserIndex(contextOf(sentinel), ACCOUNT, USER_ID);
  const listed = new Map<string, string[]>();
  for (const grant of index.sessions.flatMap((session) => session.grants)) {
    listed.set(grant.clientId, [...(listed.get(grant.clientId) ?? []), grant.grantId]);
  }
  return listed;
}

describe('session.maxSessionsPerUser: the sessions one user keeps', () => {
  it('a sign-in past the bound ends the oldest session as a logout would: its grants, its cookie, a session.ended', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ session: { maxSessionsPerUser: 2 }, onEvent: (event) => events.push(event) }));
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel);
    expect(events.filter((event) => event.type === 'session.ended')).toEqual([]);
    const third = await signInWithSession(sentinel);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(false);
    for (const kept of [second, third]) {
      expect(await tokenStanding(sentinel, kept.tokens, MAIN_APP)).toEqual(LIVE);
      expect(await sessionWorks(sentinel, kept.cookie)).toBe(true);
    }
    const listed = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(listed.map((session) => session.sid).sort()).toEqual([second.tokens.sid, third.tokens.sid].sort());
    expect(events.filter((event) => event.type === 'session.ended')).toEqual([
      expect.objectContaining({ accountId: ACCOUNT, userId: USER_ID, reason: 'sessions-limit' }),
    ]);
  });

  it('a throwing onEvent does not fail the sign-in once the oldest session has ended: the hook is told to onError', async () => {
    const errors: unknown[] = [];
    const onEvent = (event: SentinelEvent): void => {
      if (event.type === 'session.ended') throw new Error('audit sink down');
    };
    const sentinel = makeSentinel(options({ session: { maxSessionsPerUser: 1 }, onEvent, onError: (error) => void errors.push(error) }));
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(false);
    expect(await sessionWorks(sentinel, second.cookie)).toBe(true);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([
      second.tokens.sid,
    ]);
    expect(errors).toHaveLength(1);
  });

  it('a sign-in whose ending of the oldest session fails leaves no entry behind for the session it never sent', async () => {
    // The store fails once to delete a session record: the one of the oldest session, as the sign-in past the bound
    // ends it. That sign-in fails (no cookie), and must take back its own index entry, not only its record.
    let failDelete = false;
    const inner = new MemoryStore();
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'delete') {
          return (key: string) => {
            if (failDelete && key.startsWith('session:')) {
              failDelete = false;
              return Promise.reject(new Error('store down'));
            }
            return target.delete(key);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const errors: unknown[] = [];
    const sentinel = makeSentinel(options({ store, session: { maxSessionsPerUser: 1 }, onError: (error) => void errors.push(error) }));
    const first = await signInWithSession(sentinel);
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    failDelete = true;
    const failed = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(failed.status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(String(failed.headers['set-cookie'] ?? '')).not.toContain('sentinel_session=');
    // The first session's ending failed before its record went: it is still the one session, and the only one listed.
    expect(await sessionWorks(sentinel, first.cookie)).toBe(true);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([
      first.tokens.sid,
    ]);
  });

  it("signing in again and again in one browser ends that browser's oldest earlier sign-in, never another device", async () => {
    const sentinel = makeSentinel(options({ session: { maxSessionsPerUser: 3 } }));
    const phone = await signInWithSession(sentinel);
    const laptop = await signInWithSession(sentinel);
    // Each sign-in again carries the laptop's earlier one, whose grants stay listed with it until the laptop signs out.
    const again = await signInAgain(sentinel, APP_B, laptop.cookie);
    const third = await signInAgain(sentinel, APP_C, again.cookie);
    expect(await sessionWorks(sentinel, phone.cookie), 'the phone stays signed in').toBe(true);
    expect(await tokenStanding(sentinel, phone.tokens, MAIN_APP)).toEqual(LIVE);
    // The bound still holds (it keeps the user's one index record small): the laptop's oldest sign-in gave way.
    expect(await tokenStanding(sentinel, laptop.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, again.tokens, APP_B)).toEqual(LIVE);
    expect(await tokenStanding(sentinel, third.tokens, APP_C)).toEqual(LIVE);
    const listed = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(listed.map((session) => session.sid).sort()).toEqual([phone.tokens.sid, third.tokens.sid].sort());
  });
});

describe('signing in again in the same browser', () => {
  it('a throwing onEvent on the replaced session neither fails the sign-in nor leaves the earlier grants behind', async () => {
    const errors: unknown[] = [];
    const onEvent = (event: SentinelEvent): void => {
      if (event.type === 'session.ended' && event.reason === 'replaced') throw new Error('audit sink down');
    };
    const sentinel = makeSentinel(options({ onEvent, onError: (error) => void errors.push(error) }));
    const first = await signInWithSession(sentinel);
    // signInAgain expects the sign-in's 303 and its code redeemed.
    const again = await signInAgain(sentinel, APP_B, first.cookie);
    expect(errors).toHaveLength(1);
    // The earlier sign-in was carried over: signing out of the browser ends its grants too.
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: again.tokens.sid })).toBe(true);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
  });
});

describe('session.maxGrantsPerApp: the grants one app keeps through one session', () => {
  const MAX = 3;

  it('keeps the newest of an app in one session and ends the older ones; other apps and ending the session as before', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ session: { maxGrantsPerApp: MAX }, onEvent: (event) => events.push(event) }));
    const first = await signInWithSession(sentinel);
    const grants = [first.tokens, await signInThroughSession(sentinel, MAIN_APP, first.cookie)];
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    // MAX + 2 of the app through one session: the bound holds, and the two oldest are ended.
    for (let i = grants.length; i < MAX + 2; i++) grants.push(await signInThroughSession(sentinel, MAIN_APP, first.cookie));
    const listed = await listedGrants(sentinel);
    expect(listed.get(MAIN_APP.clientId)).toEqual(grants.slice(2).map(gidOf));
    expect(listed.get(APP_B.clientId)).toEqual([gidOf(b)]);
    for (const ended of grants.slice(0, 2)) expect(await tokenStanding(sentinel, ended, MAIN_APP)).toEqual(ENDED);
    for (const kept of grants.slice(2)) expect(await tokenStanding(sentinel, kept, MAIN_APP)).toEqual(LIVE);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(LIVE);
    const apps = await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID });
    expect(new Map(apps.map((app) => [app.clientId, app.grants]))).toEqual(
      new Map([
        [MAIN_APP.clientId, MAX],
        [APP_B.clientId, 1],
      ]),
    );
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([
      expect.objectContaining({ clientId: MAIN_APP.clientId, userId: USER_ID, reason: 'session-app-limit', outcome: 'success' }),
      expect.objectContaining({ clientId: MAIN_APP.clientId, userId: USER_ID, reason: 'session-app-limit', outcome: 'success' }),
    ]);
    // Ending the session still ends every grant it kept.
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    for (const kept of [...grants.slice(2), b]) expect(await tokenStanding(sentinel, kept, kept === b ? APP_B : MAIN_APP)).toEqual(ENDED);
  });

  it('parallel exchanges through one session leave at most the bound listed, and every grant not listed ended', async () => {
    const sentinel = makeSentinel(options({ session: { maxGrantsPerApp: MAX } }));
    const first = await signInWithSession(sentinel);
    const pending = [];
    for (let i = 0; i < 3 * MAX; i++) pending.push(await codeThroughSession(sentinel, MAIN_APP, first.cookie));
    const responses = await Promise.all(pending.map(({ code, verifier }) => redeemCode(sentinel, MAIN_APP, code, verifier)));
    const issued = [first.tokens];
    for (const response of responses) {
      expect(response.status, response.body).toBe(200);
      issued.push(tokensOf(MAIN_APP, jsonOf(response)));
    }
    const listed = (await listedGrants(sentinel)).get(MAIN_APP.clientId) ?? [];
    expect(listed.length).toBeLessThanOrEqual(MAX);
    for (const tokens of issued) {
      expect(await tokenStanding(sentinel, tokens, MAIN_APP), gidOf(tokens)).toEqual(listed.includes(gidOf(tokens)) ? LIVE : ENDED);
    }
  });

  it('a store failing to end an old grant fails the exchange with server_error and leaves no grant outside the index', async () => {
    const inner = new MemoryStore();
    const written = new Set<string>();
    let failing: string | null = null;
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => (key === failing ? Promise.reject(new Error('store down')) : inner.delete(key)),
      increment: (key, ttl) => inner.increment(key, ttl),
      swap: (entries) => {
        for (const entry of entries) if (entry.key.startsWith('grant:') && entry.value !== null) written.add(entry.key);
        return inner.swap(entries);
      },
    };
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ store, session: { maxGrantsPerApp: 2 }, onEvent: (event) => events.push(event) }));
    const first = await signInWithSession(sentinel);
    const second = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    failing = `grant:{${gidOf(first.tokens)}}`;
    const { code, verifier } = await codeThroughSession(sentinel, MAIN_APP, first.cookie);
    const response = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect(response.status, response.body).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    // Every grant the store still holds is one the index lists: the new one was revoked, the old ones stay listed.
    const listed = (await listedGrants(sentinel)).get(MAIN_APP.clientId) ?? [];
    expect(listed).toEqual([gidOf(first.tokens), gidOf(second)]);
    const alive = [];
    for (const key of written) if ((await inner.get(key)) !== null) alive.push(key);
    expect(alive.sort()).toEqual(listed.map((gid) => `grant:{${gid}}`).sort());
    expect(events.some((event) => event.type === 'grant.ended')).toBe(false);
    // Once the store answers again, the next exchange ends the oldest as it should.
    failing = null;
    const third = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect((await listedGrants(sentinel)).get(MAIN_APP.clientId)).toEqual([gidOf(second), gidOf(third)]);
  });

  it('is an integer of at least 1, 16 by default', async () => {
    expect(() => makeSentinel(options({ session: { maxGrantsPerApp: 0 } }))).toThrow(/session\.maxGrantsPerApp/);
    expect(() => makeSentinel(options({ session: { maxGrantsPerApp: 2.5 } }))).toThrow(/session\.maxGrantsPerApp/);
    expect(contextOf(makeSentinel(options())).config.session.maxGrantsPerApp).toBe(16);
  });
});

describe('ending sessions', () => {
  it('endSession ends the session and every grant issued through it; the other session stays', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    const other = await signInWithSession(sentinel, APP_C);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(LIVE);
    // Cached by the guard now: ending must refuse it all the same.
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(false);
    expect(await tokenStanding(sentinel, other.tokens, APP_C)).toEqual(LIVE);
    expect(await sessionWorks(sentinel, other.cookie)).toBe(true);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([
      other.tokens.sid,
    ]);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(false);
  });

  it('endUserSessions ends every session of the user and answers how many', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel, APP_B);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(2);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, second.tokens, APP_B)).toEqual(ENDED);
    expect(await sessionWorks(sentinel, second.cookie)).toBe(false);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(0);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it('endUserSessions counts a browser whose user signed in again there once, as listSessions lists it', async () => {
    const sentinel = makeSentinel(options());
    const first = await signInWithSession(sentinel);
    const again = await signInAgain(sentinel, APP_B, first.cookie);
    const elsewhere = await signInWithSession(sentinel, APP_C);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(2);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(2);
    for (const [tokens, app] of [
      [first.tokens, MAIN_APP],
      [again.tokens, APP_B],
      [elsewhere.tokens, APP_C],
    ] as const) {
      expect(await tokenStanding(sentinel, tokens, app)).toEqual(ENDED);
    }
    expect(await sessionWorks(sentinel, again.cookie)).toBe(false);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it('the logout endpoint ends the grants of the session too', async () => {
    const sentinel = makeSentinel(options());
    const { cookie, tokens } = await signInWithSession(sentinel);
    const response = await call(sentinel, {
      method: 'POST',
      path: `${ACCOUNT_PATH}/logout`,
      headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(response.status).toBe(200);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
  });

  it('a sign-out posted twice at once (a double click) ends the session once: one session.ended', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ onEvent: (event) => void events.push(event) }));
    const { cookie, tokens } = await signInWithSession(sentinel);
    const headers = { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' };
    const [first, second] = await Promise.all([
      call(sentinel, { method: 'POST', path: `${ACCOUNT_PATH}/logout`, headers }),
      call(sentinel, { method: 'POST', path: `${ACCOUNT_PATH}/logout`, headers }),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    // Both clear the cookie: the browser is signed out whichever answer it takes.
    for (const response of [first, second]) expect(String(response.headers['set-cookie'])).toMatch(/^sentinel_session=;/);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(events.filter((event) => event.type === 'session.ended')).toHaveLength(1);
  });

  it('RP-initiated logout sent twice at once ends the session once: one session.ended', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ onEvent: (event) => void events.push(event) }));
    const { cookie, tokens } = await signInWithSession(sentinel);
    const request = {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: tokens.idToken }),
      headers: { cookie: `sentinel_session=${cookie}` },
    };
    const answers = await Promise.all([call(sentinel, request), call(sentinel, request)]);
    expect(answers.map((response) => response.status)).toEqual([200, 200]);
    for (const response of answers) expect(String(response.headers['set-cookie'])).toMatch(/^sentinel_session=;/);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(events.filter((event) => event.type === 'session.ended')).toHaveLength(1);
  });

  it('end_session with id_token_hint ends the grants of the session too', async () => {
    const sentinel = makeSentinel(options());
    const { cookie, tokens } = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, cookie);
    const response = await call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: tokens.idToken }),
      headers: { cookie: `sentinel_session=${cookie}` },
    });
    expect(response.status).toBe(200);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
  });

  it('a code issued in a session that ended before its redemption is refused, and leaves no grant', async () => {
    const sentinel = makeSentinel(options());
    const { cookie, tokens } = await signInWithSession(sentinel);
    const pending = await codeThroughSession(sentinel, APP_B, cookie);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    const response = await redeemCode(sentinel, APP_B, pending.code, pending.verifier);
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_grant');
    expect(await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it('a store failing while a session ends rejects, and a retry finishes what was left', async () => {
    const inner = new MemoryStore();
    let failDeletes = false;
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => (failDeletes && key.startsWith('grant:') ? Promise.reject(new Error('store down')) : inner.delete(key)),
      increment: (key, ttl) => inner.increment(key, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const sentinel: Sentinel = makeSentinel(options({ store }));
    const { tokens } = await signInWithSession(sentinel);
    failDeletes = true;
    await expect(sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).rejects.toThrow('store down');
    // Nothing claims it ended: the session is still listed, so "sign out everywhere" finds it.
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
    failDeletes = false;
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
  });

  it('endUserSessions cut short by the store still reports the sessions it ended before the failure', async () => {
    const inner = new MemoryStore();
    let failing: string | undefined;
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => (failing !== undefined && key.includes(failing) ? Promise.reject(new Error('store down')) : inner.delete(key)),
      increment: (key, ttl) => inner.increment(key, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const events: SentinelEvent[] = [];
    const sentinel: Sentinel = makeSentinel(options({ store, onEvent: (event) => events.push(event) }));
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel, APP_B);
    // The second session's grant cannot be deleted: its ending fails after the first session's has ended.
    failing = gidOf(second.tokens);
    await expect(sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).rejects.toThrow('store down');
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(events.filter((event) => event.type === 'session.ended')).toEqual([
      expect.objectContaining({ accountId: ACCOUNT, userId: USER_ID, reason: 'ended-everywhere' }),
    ]);
  });

  it('refuses wrong arguments with a TypeError and unknown sids with false', async () => {
    const sentinel = makeSentinel(options());
    await expect(sentinel.endSession({ accountId: ACCOUNT, sid: '' })).rejects.toThrow(TypeError);
    await expect(sentinel.listSessions({ accountId: ACCOUNT } as never)).rejects.toThrow(/userId/);
    await expect(sentinel.endUserSessions(null as never)).rejects.toThrow(TypeError);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: 'not-a-sid' })).toBe(false);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: `${'a'.repeat(22)}.${'b'.repeat(43)}` })).toBe(false);
  });
});
