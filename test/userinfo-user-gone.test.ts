/**
 * A user the `users.claims` hook says is gone (`null`) at UserInfo: the call is refused and the token's grant ends, as
 * a refresh of such a user ends it at the token endpoint (`grant.ended`, `reason: 'user-gone'`). Before, only the
 * one call was refused: the grant's other access tokens kept passing the bearer guard and introspection, and its
 * refresh token kept working. Also for a delegated token (RFC 8693), which lives on the subject's grant.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type SentinelOptions, type Store } from '../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { call, jsonOf, postForm, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import { codeFor } from './helpers/oauth.js';
import { BOT, BOT_CLIENT_ID, brandKey, exchangeOptions, TOKEN_EXCHANGE, TYPE } from './helpers/exchange.js';

const USERINFO = `/sentinel/api/account/${ACCOUNT}/userinfo`;
const INTROSPECT = `${TOKEN_PATH}/introspect`;
const key = await brandKey();

/** A sentinel whose claims hook answers `null` once `gone.now` is set; events and errors are recorded. */
function goneSentinel(overrides: Partial<SentinelOptions> = {}) {
  const gone = { now: false };
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const options = exchangeOptions(key);
  const sentinel = makeSentinel({
    ...options,
    apps: (options.apps ?? []).map((app) =>
      app.clientId === CLIENT_ID || app.clientId === BOT_CLIENT_ID ? { ...app, scope: 'openid email read' } : app,
    ),
    users: { authenticate: async () => null, claims: async () => (gone.now ? null : { email: 'alice@example.com' }) },
    onEvent: (event) => void events.push(event),
    onError: (error) => void errors.push(error),
    ...overrides,
  });
  return { sentinel, gone, events, errors };
}

/** Two access tokens of one grant (the code's, then a refresh's) and the grant's current refresh token. */
async function grantTokens(sentinel: Sentinel): Promise<{ first: string; second: string; refreshToken: string }> {
  const code = await codeFor(sentinel, { scope: 'openid email read' });
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  const exchanged = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
  expect(exchanged.status, exchanged.body).toBe(200);
  const refreshed = await useRefreshToken(sentinel, jsonOf(exchanged).refresh_token as string);
  expect(refreshed.status, refreshed.body).toBe(200);
  const body = jsonOf(refreshed);
  return {
    first: jsonOf(exchanged).access_token as string,
    second: body.access_token as string,
    refreshToken: body.refresh_token as string,
  };
}

function userInfo(sentinel: Sentinel, token: string) {
  return call(sentinel, { path: USERINFO, headers: { authorization: `Bearer ${token}` } });
}

async function introspected(sentinel: Sentinel, token: string): Promise<unknown> {
  const form = { token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  return jsonOf(await postForm(sentinel, INTROSPECT, new URLSearchParams(form).toString())).active;
}

async function guardAccepts(sentinel: Sentinel, token: string): Promise<boolean> {
  return (await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT })).ok;
}

function expectUserGoneRefusal(response: Awaited<ReturnType<typeof userInfo>>): void {
  expect(response.status, response.body).toBe(401);
  expect(jsonOf(response)).toMatchObject({ error: 'invalid_token', error_description: 'the user of this access token no longer exists' });
}

describe('UserInfo for a user the claims hook says is gone', () => {
  it('ends the grant: its other access token fails the guard and introspection, and its refresh token is refused', async () => {
    const { sentinel, gone, events } = goneSentinel();
    const { first, second, refreshToken } = await grantTokens(sentinel);
    // Live everywhere first, so the guard has verified (and cached) the token that must stop afterwards.
    expect(await guardAccepts(sentinel, first)).toBe(true);
    expect(await introspected(sentinel, first)).toBe(true);
    gone.now = true;
    expectUserGoneRefusal(await userInfo(sentinel, second));
    expect(await guardAccepts(sentinel, first)).toBe(false);
    expect(await guardAccepts(sentinel, second)).toBe(false);
    expect(await introspected(sentinel, first)).toBe(false);
    const refused = await useRefreshToken(sentinel, refreshToken);
    expect(refused.status, refused.body).toBe(400);
    expect(jsonOf(refused).error).toBe('invalid_grant');
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([
      expect.objectContaining({ type: 'grant.ended', accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID, reason: 'user-gone' }),
    ]);
    // The grant is gone, so later calls are refused by the guard's check without asking the hook again.
    const again = await userInfo(sentinel, first);
    expect(again.status).toBe(401);
    expect(jsonOf(again).error_description).toBe('the token has been revoked');
  });

  it("ends the subject's grant for a delegated token: the person behind it is gone, whoever holds the token", async () => {
    const { sentinel, gone, events } = goneSentinel();
    const { first, refreshToken } = await grantTokens(sentinel);
    const form = { grant_type: TOKEN_EXCHANGE, subject_token: first, subject_token_type: TYPE.accessToken, ...BOT };
    const delegated = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
    expect(delegated.status, delegated.body).toBe(200);
    const actorToken = jsonOf(delegated).access_token as string;
    expect(await guardAccepts(sentinel, actorToken)).toBe(true);
    gone.now = true;
    expectUserGoneRefusal(await userInfo(sentinel, actorToken));
    expect(await guardAccepts(sentinel, actorToken)).toBe(false);
    expect(await guardAccepts(sentinel, first)).toBe(false);
    expect((await useRefreshToken(sentinel, refreshToken)).status).toBe(400);
    // The event names the grant's own client, not the actor that presented the token.
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([
      expect.objectContaining({ clientId: CLIENT_ID, userId: USER_ID, reason: 'user-gone' }),
    ]);
  });

  it('answers 500 server_error and tells onError when the store fails to end the grant; claims are never released', async () => {
    const inner = new MemoryStore();
    let failDeletes = false;
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'delete') {
          return (storeKey: string) =>
            failDeletes && storeKey.startsWith('grant:') ? Promise.reject(new Error('store down (test)')) : target.delete(storeKey);
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const { sentinel, gone, errors, events } = goneSentinel({ store });
    const { second } = await grantTokens(sentinel);
    gone.now = true;
    failDeletes = true;
    const failed = await userInfo(sentinel, second);
    expect(failed.status, failed.body).toBe(500);
    expect(jsonOf(failed).error).toBe('server_error');
    expect(failed.body).not.toContain('alice@example.com');
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store down (test)' }));
    expect(events.some((event) => event.type === 'grant.ended')).toBe(false);
    // Once the store works again, the next call ends the grant.
    failDeletes = false;
    expectUserGoneRefusal(await userInfo(sentinel, second));
    expect(await guardAccepts(sentinel, second)).toBe(false);
  });
});
