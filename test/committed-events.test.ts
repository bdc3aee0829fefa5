/**
 * Events that report a change already made are emitted as `'committed'`: an `onEvent` that throws on one goes to
 * `onError`, and the request keeps its answer instead of a 500 saying nothing changed (docs/observability.md#audit-events).
 * Token revocation, a replayed code and a reused refresh token, a brand JWT's exchange, the logout endpoint,
 * `endSession` / `endUserSessions`, and the console's keys and sessions actions. (The account page's passkey removal
 * is in test/account-page.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import type { SentinelEvent, SentinelRequest } from '../src/index.js';
import { operatorCookie } from './helpers/console-session.js';
import { ACCOUNT_PATH, exchangeCode, jsonOf, postForm, signIn, useRefreshToken } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { codeFor } from './helpers/oauth.js';
import { codeThroughSession, MAIN_APP, redeemCode, sessionWorks, signInWithSession } from './helpers/logout-flow.js';
import { BOT, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH as EXCHANGE_TOKEN_PATH } from './helpers/exchange.js';

/** A service whose `onEvent` throws on the named event types once `failing` is set; `onError` collects. */
function vetoing(types: readonly string[], overrides: Record<string, unknown> = {}) {
  const errors: unknown[] = [];
  const state = { failing: false };
  const sentinel = makeSentinel({
    onEvent: (event: SentinelEvent) => {
      if (state.failing && types.includes(event.type)) throw new Error(`audit sink down (${event.type})`);
    },
    onError: (error: unknown) => {
      errors.push(error);
    },
    ...overrides,
  });
  return { sentinel, errors, state };
}

function consoleRequest(method: string, path: string, cookie: string, form?: Record<string, string>): SentinelRequest {
  return {
    method,
    path,
    query: new URLSearchParams(),
    headers: { cookie, ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: form === undefined ? undefined : new URLSearchParams(form).toString(),
  };
}

describe('a throwing onEvent after an irreversible change', () => {
  it('token revocation answers 200: the refresh token is revoked, and onError hears the hook', async () => {
    const { sentinel, errors, state } = vetoing(['token.revoked']);
    const { code, verifier } = await signIn(sentinel);
    const tokens = jsonOf(await exchangeCode(sentinel, code, verifier));
    const form = (path: string) =>
      postForm(
        sentinel,
        `${ACCOUNT_PATH}/token/${path}`,
        new URLSearchParams({ token: String(tokens.refresh_token), client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      );
    state.failing = true;
    const revoked = await form('revoke');
    expect(revoked.status).toBe(200);
    state.failing = false;
    expect(jsonOf(await form('introspect')).active).toBe(false);
    expect(errors.map(String)).toEqual(['Error: audit sink down (token.revoked)']);
  });

  it('a replayed code and a reused refresh token answer invalid_grant: their grants are revoked all the same', async () => {
    // No retry grace: the second presentation is a replay at once (RFC 6749 §4.1.2, RFC 9700 §4.14.2).
    const { sentinel, errors, state } = vetoing(['code.replayed', 'refresh.reused'], { retryGrace: 0 });
    const replayed = await signIn(sentinel);
    const first = jsonOf(await exchangeCode(sentinel, replayed.code, replayed.verifier));
    state.failing = true;
    const replay = await exchangeCode(sentinel, replayed.code, replayed.verifier);
    expect([replay.status, jsonOf(replay).error]).toEqual([400, 'invalid_grant']);
    expect(await sentinel.verifyAccessToken(String(first.access_token), { accountId: ACCOUNT }).catch(() => 'refused')).toBe('refused');
    state.failing = false;
    const reused = await signIn(sentinel);
    const tokens = jsonOf(await exchangeCode(sentinel, reused.code, reused.verifier));
    const rotated = jsonOf(await useRefreshToken(sentinel, String(tokens.refresh_token)));
    state.failing = true;
    const reuse = await useRefreshToken(sentinel, String(tokens.refresh_token));
    expect([reuse.status, jsonOf(reuse).error]).toEqual([400, 'invalid_grant']);
    expect((await useRefreshToken(sentinel, String(rotated.refresh_token))).status).toBe(400);
    expect(errors.map(String)).toEqual(['Error: audit sink down (code.replayed)', 'Error: audit sink down (refresh.reused)']);
  });

  it('a replay, a reuse and a gone user answer invalid_grant when the hook throws on every event, token.denied too', async () => {
    const gone = { now: false };
    const { sentinel, errors, state } = vetoing(['code.replayed', 'refresh.reused', 'grant.ended', 'token.denied'], {
      retryGrace: 0,
      idTokenClaims: true,
      users: { authenticate: async () => ({ id: 'u-alice' }), claims: async () => (gone.now ? null : {}) },
    });
    const replayed = await signIn(sentinel);
    await exchangeCode(sentinel, replayed.code, replayed.verifier);
    const reused = await signIn(sentinel);
    const tokens = jsonOf(await exchangeCode(sentinel, reused.code, reused.verifier));
    await useRefreshToken(sentinel, String(tokens.refresh_token));
    const openid = await codeFor(sentinel, { scope: 'openid' });
    state.failing = true;
    const replay = await exchangeCode(sentinel, replayed.code, replayed.verifier);
    expect([replay.status, jsonOf(replay).error]).toEqual([400, 'invalid_grant']);
    const reuse = await useRefreshToken(sentinel, String(tokens.refresh_token));
    expect([reuse.status, jsonOf(reuse).error]).toEqual([400, 'invalid_grant']);
    gone.now = true;
    const form = {
      grant_type: 'authorization_code',
      code: openid,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    };
    const goneUser = await postForm(sentinel, `${ACCOUNT_PATH}/token`, new URLSearchParams(form).toString());
    expect([goneUser.status, jsonOf(goneUser).error]).toEqual([400, 'invalid_grant']);
    expect(errors.map(String)).toEqual(
      ['code.replayed', 'token.denied', 'refresh.reused', 'token.denied', 'grant.ended', 'token.denied'].map(
        (type) => `Error: audit sink down (${type})`,
      ),
    );
    // A code whose session ended while it was redeemed: its grant is revoked and it stays spent.
    state.failing = false;
    gone.now = false;
    const { cookie, tokens: signedIn } = await signInWithSession(sentinel);
    const pending = await codeThroughSession(sentinel, MAIN_APP, cookie);
    await sentinel.endSession({ accountId: ACCOUNT, sid: String(signedIn.sid) });
    state.failing = true;
    const ended = await redeemCode(sentinel, MAIN_APP, pending.code, pending.verifier);
    expect([ended.status, jsonOf(ended).error]).toEqual([400, 'invalid_grant']);
    expect(errors.map(String).at(-1)).toBe('Error: audit sink down (token.denied)');
    // A refusal that changed nothing is still vetoed: the hook's 500 leaves the code to retry.
    const unknown = await exchangeCode(sentinel, 'x'.repeat(43), replayed.verifier);
    expect([unknown.status, jsonOf(unknown).error]).toEqual([500, 'server_error']);
  });

  it("a brand JWT's exchange answers its token: the JWT's jti is spent, so a 500 would leave nothing to retry with", async () => {
    const key = await brandKey();
    const { sentinel, errors, state } = vetoing(['token.exchanged'], exchangeOptions(key));
    const assertion = await brandJWT(key);
    const form = new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT }).toString();
    state.failing = true;
    const exchanged = await postForm(sentinel, EXCHANGE_TOKEN_PATH, form);
    expect(exchanged.status, exchanged.body).toBe(200);
    expect(typeof jsonOf(exchanged).access_token).toBe('string');
    // The JWT is single use: had the answer been a 500, the client's retry would have been refused as a replay.
    state.failing = false;
    expect(jsonOf(await postForm(sentinel, EXCHANGE_TOKEN_PATH, form)).error).toBe('invalid_grant');
    expect(errors.map(String)).toEqual(['Error: audit sink down (token.exchanged)']);
  });

  it('the logout endpoint signs out (its cookie expired), and endUserSessions resolves to the count', async () => {
    const { sentinel, errors, state } = vetoing(['session.ended']);
    const first = await signInWithSession(sentinel);
    state.failing = true;
    const logout = await postForm(sentinel, `${ACCOUNT_PATH}/logout`, '', {
      headers: { cookie: `sentinel_session=${first.cookie}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(logout.status).toBeLessThan(400);
    expect(String(logout.headers['set-cookie'])).toMatch(/^sentinel_session=;/);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(false);
    const second = await signInWithSession(sentinel);
    await expect(sentinel.endUserSessions({ accountId: ACCOUNT, userId: 'u-alice' })).resolves.toBe(1);
    expect(await sessionWorks(sentinel, second.cookie)).toBe(false);
    expect(errors.map(String)).toEqual(['Error: audit sink down (session.ended)', 'Error: audit sink down (session.ended)']);
  });

  it("the console's key rotation and revocation and its session endings answer as done", async () => {
    const rotation = { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360 };
    const { sentinel, errors, state } = vetoing(['console.changed'], { keys: undefined, keyRotation: rotation, keysPerAccount: true });
    await sentinel.ready();
    const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
    const cookie = await operatorCookie(sentinel, ACCOUNT, 'u-op', 600);
    const keys = () => operatorConsole.handle(consoleRequest('GET', `/console/${ACCOUNT}/keys`, cookie));
    const csrf = /name="csrf" value="([^"]+)"/.exec(String((await keys())?.body))?.[1] as string;
    const post = (path: string, form: Record<string, string> = {}) =>
      operatorConsole.handle(consoleRequest('POST', `/console/${ACCOUNT}/${path}`, cookie, { csrf, ...form }));
    state.failing = true;
    expect((await post('keys/rotate'))?.status).toBe(303);
    // The account's ring exists once rotated: one of its keys to revoke.
    const kid = /<tr><td><code>([^<]+)<\/code>/.exec(String((await keys())?.body))?.[1] as string;
    expect((await post(`keys/${encodeURIComponent(kid)}/revoke`))?.status).toBe(303);
    await operatorCookie(sentinel, ACCOUNT, 'u-other', 600);
    const [session] = await sentinel.listSessions({ accountId: ACCOUNT, userId: 'u-other' });
    expect((await post('sessions/end', { user: 'u-other', sid: session?.sid as string }))?.status).toBe(303);
    await operatorCookie(sentinel, ACCOUNT, 'u-other', 600);
    expect((await post('sessions/end-all', { user: 'u-other' }))?.status).toBe(303);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: 'u-other' })).toEqual([]);
    expect(errors.map(String)).toEqual(Array(4).fill('Error: audit sink down (console.changed)'));
  });
});
