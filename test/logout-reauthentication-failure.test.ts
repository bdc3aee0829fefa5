/**
 * Signing in again as the same user in the same browser replaces the device session; the new one carries the
 * earlier sign-in over, so the browser's logout ends the earlier sign-in's grants too (logout-reauthentication.test.ts).
 * A store that fails at any write of that replacement must leave those grants reachable by the browser's logout:
 * the sign-in answers 500 and sets no cookie, so the browser still holds the earlier cookie, and signing out with it
 * ends them.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type Store } from '../src/index.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, call, csrfOf, LOGIN_PATH, postLogin, setCookies, signIn } from './helpers/direct-flow.js';
import { ACCOUNT, BOB, makeSentinel, PASSWORD, USER_ID, USERNAME, withBob } from './helpers/fixtures.js';
import { MAIN_APP, pkceQuery, sessionWorks, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

type Operation = 'set' | 'take' | 'swap';

/** MemoryStore, but once armed the first `operation` on a key starting with `prefix` fails (then it disarms). */
function failingOnce(): { store: Store; arm(operation: Operation, prefix: string): void; fired(): boolean } {
  let armed: { operation: Operation; prefix: string } | null = null;
  let fired = false;
  const trip = (operation: Operation, keys: string[]): void => {
    const at = armed;
    if (at === null || at.operation !== operation || !keys.some((key) => key.startsWith(at.prefix))) return;
    armed = null;
    fired = true;
    throw new Error('store down');
  };
  // MemoryStore, whose set, take and swap fail first where armed.
  class FailingStore extends MemoryStore {
    override async set(key: string, value: string, ttl: number): Promise<void> {
      trip('set', [key]);
      return super.set(key, value, ttl);
    }
    override async take(key: string): Promise<string | null> {
      trip('take', [key]);
      return super.take(key);
    }
    override async swap(entries: Parameters<Store['swap']>[0]): Promise<boolean> {
      trip(
        'swap',
        entries.map((entry) => entry.key),
      );
      return super.swap(entries);
    }
  }
  return {
    store: new FailingStore(),
    arm: (operation, prefix) => {
      armed = { operation, prefix };
    },
    fired: () => fired,
  };
}

/** The browser of `cookie` signs in again (prompt=login) with the store armed just before the credentials are posted. */
async function failedSignInAgain(sentinel: Sentinel, cookie: string, arm: () => void, user = { username: USERNAME, password: PASSWORD }) {
  const { query } = pkceQuery(MAIN_APP, { prompt: 'login' });
  const headers = { cookie: `sentinel_session=${cookie}` };
  const authorize = await call(sentinel, { path: AUTHORIZE_PATH, query, headers });
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(authorize.headers.location))?.[1] as string;
  expect(interaction, String(authorize.headers.location)).toBeTruthy();
  const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }), headers });
  arm();
  return postLogin(sentinel, interaction, { csrf_token: csrfOf(page.body), ...user }, undefined, headers.cookie);
}

const ENDED = { guard: false, introspection: false, refresh: false };

describe('a store failure while signing in again in the same browser', () => {
  const points: [string, Operation, string][] = [
    ['writing the new session record', 'set', 'session:'],
    ["writing the user's index (the carry-over)", 'swap', 'user-sessions:'],
    ['removing the earlier session record', 'take', 'session:'],
  ];
  for (const [point, operation, prefix] of points) {
    it(`at ${point}: 500, no cookie, and the browser's logout still ends the earlier sign-in's grants`, async () => {
      const failing = failingOnce();
      const errors: unknown[] = [];
      const sentinel = makeSentinel({ store: failing.store, onError: (error) => void errors.push(error) });
      const first = await signInWithSession(sentinel, MAIN_APP);
      const answer = await failedSignInAgain(sentinel, first.cookie, () => failing.arm(operation, prefix));
      expect(failing.fired(), 'the store failed where it was armed').toBe(true);
      expect(answer.status).toBe(500);
      expect(setCookies(answer).some((line) => line.startsWith('sentinel_session=') && !line.includes('Max-Age=0'))).toBe(false);
      expect(errors).toHaveLength(1);
      // The browser still holds the earlier cookie: signing out with it must end what was issued through it.
      const logout = await call(sentinel, {
        method: 'POST',
        path: `${ACCOUNT_PATH}/logout`,
        headers: { cookie: `sentinel_session=${first.cookie}`, 'sec-fetch-site': 'same-origin' },
      });
      expect(logout.status).toBe(200);
      expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
      expect(await sessionWorks(sentinel, first.cookie)).toBe(false);
    });
  }
});

describe('a store failure while another user signs in in the same browser', () => {
  it("at removing the first user's session record: that session, still signed in, still ends with endUserSessions", async () => {
    const failing = failingOnce();
    const sentinel = makeSentinel({
      store: failing.store,
      onError: () => {},
      users: withBob(),
    });
    // Alice's session, through which no app holds a grant yet (the code is still on its way).
    const alice = (await signIn(sentinel)).sessionCookie;
    const answer = await failedSignInAgain(sentinel, alice, () => failing.arm('take', 'session:'), BOB);
    expect(failing.fired(), 'the store failed where it was armed').toBe(true);
    expect(answer.status).toBe(500);
    // No cookie for Bob: the browser keeps Alice's, and her session goes on as before.
    expect(await sessionWorks(sentinel, alice)).toBe(true);
    // So "sign out everywhere" (another device, the account page, the CLI) must still find and end it.
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    expect(await sessionWorks(sentinel, alice)).toBe(false);
  });
});
