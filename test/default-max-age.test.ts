/**
 * `default_max_age` (OpenID Connect Registration 1.0 §2): an app's authorization request without `max_age` is
 * answered as if it carried `max_age` of the app's default, for a browser session and for a host's own login page
 * alike; an explicit `max_age` overrides it. Registered through the `apps` option (`defaultMaxAge`) and dynamic
 * registration (`default_max_age`, echoed in the client information, cleared by an update without it).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SentinelResponse } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { advanceClock } from './helpers/clock.js';
import { AUTHORIZE_PATH, authorizeQuery, call, jsonOf, openLogin, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, registerClient } from './helpers/registration-client.js';

const now = (): number => Math.floor(Date.now() / 1000);
const APP = { accountId: ACCOUNT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [REDIRECT_URI] };

function answerOf(response: SentinelResponse): URLSearchParams {
  return new URL(String(response.headers.location)).searchParams;
}

afterEach(() => vi.restoreAllMocks());

describe('default_max_age', () => {
  it("stands in for a missing max_age at a host's own login page; an explicit max_age overrides it", async () => {
    const sentinel = makeSentinel({ apps: [{ ...APP, defaultMaxAge: 60 }], login: { url: 'https://host.example.com/sign-in' } });
    const plain = await startInteraction(sentinel, authorizeQuery({ scope: 'openid' }));
    expect((await sentinel.interaction(plain.interaction))?.maxAge).toBe(60);
    const stale = await sentinel.completeLogin(plain.interaction, { userId: USER_ID, authTime: now() - 3600 });
    expect(answerOf(stale).get('error')).toBe('login_required');
    expect(answerOf(stale).get('code')).toBeNull();
    // max_age=7200 in the request: the app asked for an hour-old sign-in to do, this time.
    const wider = await startInteraction(sentinel, authorizeQuery({ scope: 'openid', max_age: '7200' }));
    expect((await sentinel.interaction(wider.interaction))?.maxAge).toBe(7200);
    const accepted = await sentinel.completeLogin(wider.interaction, { userId: USER_ID, authTime: now() - 3600 });
    expect(answerOf(accepted).get('code')).toBeTruthy();
  });

  it('makes a browser session older than the default sign in again (prompt=none: login_required)', async () => {
    const sentinel = makeSentinel({ apps: [{ ...APP, defaultMaxAge: 60 }] });
    const { interaction } = await startInteraction(sentinel, authorizeQuery());
    const csrf = await openLogin(sentinel, interaction);
    const done = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const cookie = (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
    const silent = (extra: Record<string, string> = {}) =>
      call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ prompt: 'none', ...extra }), headers: { cookie } });
    expect(answerOf(await silent()).get('code')).toBeTruthy();
    advanceClock(61);
    expect(answerOf(await silent()).get('error')).toBe('login_required');
    expect(answerOf(await silent({ max_age: '3600' })).get('code')).toBeTruthy();
  });

  it('is registered, echoed and cleared through dynamic registration, and applied at the authorization endpoint', async () => {
    const sentinel = makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const metadata = { redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'] };
    const info = await registerClient(sentinel, { ...metadata, default_max_age: 300 });
    expect(info).toMatchObject({ default_max_age: 300 });
    expect((await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id))?.defaultMaxAge).toBe(300);
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ client_id: info.client_id }));
    expect((await sentinel.interaction(interaction))?.maxAge).toBe(300);
    // RFC 7592 §2.2: an update replaces the metadata, so one without default_max_age clears it.
    const put = await manageClient(sentinel, 'PUT', info, { body: { ...metadata, client_id: info.client_id } });
    expect(put.status).toBe(200);
    expect(jsonOf(put)).not.toHaveProperty('default_max_age');
    const after = await startInteraction(sentinel, authorizeQuery({ client_id: info.client_id }));
    expect((await sentinel.interaction(after.interaction))?.maxAge).toBeUndefined();
  });

  it('is taken by registerApp(), validated as an apps entry, and applied at the authorization endpoint', async () => {
    const sentinel = makeSentinel({ apps: [APP] });
    const { app } = await sentinel.registerApp({ accountId: ACCOUNT, redirectUris: [REDIRECT_URI], defaultMaxAge: 120 });
    expect(app.defaultMaxAge).toBe(120);
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ client_id: app.clientId }));
    expect((await sentinel.interaction(interaction))?.maxAge).toBe(120);
    await expect(sentinel.registerApp({ accountId: ACCOUNT, redirectUris: [REDIRECT_URI], defaultMaxAge: 0 })).rejects.toThrow(
      /defaultMaxAge/,
    );
  });

  it('is a positive integer of seconds in the apps option too', () => {
    for (const defaultMaxAge of [0, -1, 1.5, 2e9]) {
      expect(() => makeSentinel({ apps: [{ ...APP, defaultMaxAge }] }), String(defaultMaxAge)).toThrow(/defaultMaxAge/);
    }
  });
});
