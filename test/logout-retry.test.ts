/**
 * The logout endpoint with one store write failing after the session record went: the index write that takes the
 * session out of its user's index. The logout answers 500 server_error (onError told), and the user's retry with the
 * same cookie finishes it: the session leaves the index, so a code issued just before the logout cannot attach to it
 * any more, and the retry clears the cookie and tells session.ended. RP-initiated logout (end_session) likewise.
 */
import { expect, it } from 'vitest';
import { MemoryStore, type SentinelEvent, type SwapEntry } from '../src/index.js';
import { ACCOUNT_PATH, call, jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, OTHER_ACCOUNT, USER_ID } from './helpers/fixtures.js';
import { codeThroughSession, MAIN_APP, redeemCode, sessionWorks, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

/** A MemoryStore whose next write of a session index fails, once. */
class IndexWriteFails extends MemoryStore {
  failNextIndexWrite = false;
  override async swap(entries: readonly SwapEntry[]): Promise<boolean> {
    if (this.failNextIndexWrite && entries.some((entry) => entry.key.startsWith('user-sessions:'))) {
      this.failNextIndexWrite = false;
      throw new Error('store down');
    }
    return super.swap(entries);
  }
}

const ENDED = { guard: false, introspection: false, refresh: false };

function setUp() {
  const store = new IndexWriteFails();
  const errors: unknown[] = [];
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({
    ...baseOptions(),
    store,
    onError: (error) => errors.push(error),
    onEvent: (event) => events.push(event),
  });
  return { store, errors, events, sentinel };
}

/**
 * After the retry: the session is out of its user's index, `session.ended` was reported once, and the code issued
 * through it just before the sign-out cannot attach to it: it leaves no grant.
 */
async function expectEndedForGood(
  { sentinel, events }: Pick<ReturnType<typeof setUp>, 'sentinel' | 'events'>,
  pending: Awaited<ReturnType<typeof codeThroughSession>>,
): Promise<void> {
  expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  expect(events.filter((event) => event.type === 'session.ended').map((event) => event.userId)).toEqual([USER_ID]);
  const redeemed = await redeemCode(sentinel, MAIN_APP, pending.code, pending.verifier);
  expect(redeemed.status).toBe(400);
  expect(jsonOf(redeemed).error).toBe('invalid_grant');
  expect(await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
}

it('a logout whose index write failed answers 500, and its retry takes the session out of the index', async () => {
  const { store, errors, events, sentinel } = setUp();
  const { cookie, tokens } = await signInWithSession(sentinel);
  // A code issued through the session just before the logout, redeemed after it.
  const pending = await codeThroughSession(sentinel, MAIN_APP, cookie);
  const logout = () =>
    postForm(sentinel, `${ACCOUNT_PATH}/logout`, '', {
      headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
    });

  store.failNextIndexWrite = true;
  const first = await logout();
  expect(first.status).toBe(500);
  expect(String(first.body)).toContain('server_error');
  expect(errors).toHaveLength(1);
  // What went first stays gone: the cookie signs nobody in, no token of the session lives.
  expect(await sessionWorks(sentinel, cookie)).toBe(false);
  expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
  expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
  expect(events.filter((event) => event.type === 'session.ended')).toEqual([]);

  const retry = await logout();
  expect(retry.status).toBe(200);
  expect(String(retry.headers['set-cookie'])).toContain('Max-Age=0');
  await expectEndedForGood({ sentinel, events }, pending);
  // Done once: a further logout with the same cookie finds nothing to end.
  expect((await logout()).headers['set-cookie']).toBeUndefined();
  expect(events.filter((event) => event.type === 'session.ended')).toHaveLength(1);
});

it("the retry in another account's logout leaves the session to its own account", async () => {
  const { store, sentinel } = setUp();
  const { cookie, tokens } = await signInWithSession(sentinel);
  const headers = { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' };
  store.failNextIndexWrite = true;
  expect((await postForm(sentinel, `${ACCOUNT_PATH}/logout`, '', { headers })).status).toBe(500);
  const elsewhere = await postForm(sentinel, `/sentinel/api/account/${OTHER_ACCOUNT}/logout`, '', { headers });
  expect(elsewhere.status).toBe(200);
  expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
  expect((await postForm(sentinel, `${ACCOUNT_PATH}/logout`, '', { headers })).status).toBe(200);
  expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
});

it('RP-initiated logout whose index write failed answers 500, and its retry takes the session out of the index', async () => {
  const { store, errors, events, sentinel } = setUp();
  const { cookie, tokens } = await signInWithSession(sentinel);
  const pending = await codeThroughSession(sentinel, MAIN_APP, cookie);
  const headers = { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' };
  // Without id_token_hint: the user confirms on the "Sign out?" page.
  const page = await call(sentinel, { path: `${ACCOUNT_PATH}/end_session`, headers });
  expect(page.status).toBe(200);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(String(page.body))?.[1] as string;
  const confirm = new URLSearchParams({ confirmation: field('confirmation'), csrf_token: field('csrf_token') }).toString();

  store.failNextIndexWrite = true;
  const first = await postForm(sentinel, `${ACCOUNT_PATH}/end_session`, confirm, { headers });
  expect(first.status).toBe(500);
  expect(errors).toHaveLength(1);
  expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
  expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);

  // The user follows the app's sign-out link again, with the same cookie.
  const retry = await call(sentinel, { path: `${ACCOUNT_PATH}/end_session`, headers });
  expect(retry.status).toBe(200);
  expect(String(retry.headers['set-cookie'])).toContain('Max-Age=0');
  await expectEndedForGood({ sentinel, events }, pending);
  // Another account's end_session with the same cookie finds nothing of its own to finish.
  const elsewhere = await call(sentinel, { path: `/sentinel/api/account/${OTHER_ACCOUNT}/end_session`, headers });
  expect(elsewhere.headers['set-cookie']).toBeUndefined();
});
