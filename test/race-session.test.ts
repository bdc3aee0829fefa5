/**
 * A logout racing a request that uses the same device session (issue 30, the read-await-act review). The
 * authorization endpoint reads the session, then extends its idle timeout by writing it back; a logout that ended
 * the session in between was undone by that write, so whoever held the session id kept a live session after the
 * user signed out. The window is made deterministic: the store runs the logout right after the authorize request's
 * read of the session returns. MemoryStore, and two instances over a real Redis.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse, type Store } from '../src/index.js';
import { sessionKey } from '../src/authorize/state/session.js';
import { ACCOUNT_PATH, AUTHORIZE_PATH, authorizeQuery, call, signIn } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

const ROUNDS = 20;

function authorizeWith(sentinel: Sentinel, sessionId: string, query = authorizeQuery()): Promise<SentinelResponse> {
  return call(sentinel, { path: AUTHORIZE_PATH, query, headers: { cookie: `sentinel_session=${sessionId}` } });
}

function logout(sentinel: Sentinel, sessionId: string): Promise<SentinelResponse> {
  return call(sentinel, { method: 'POST', path: `${ACCOUNT_PATH}/logout`, headers: { cookie: `sentinel_session=${sessionId}` } });
}

function codeOf(response: SentinelResponse): string | null {
  const location = String(response.headers.location ?? '');
  return location.startsWith('https://') ? new URL(location).searchParams.get('code') : null;
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: a logout during a request on the same session ends it for good`, () => {
    it(`authorize reads the session, the logout lands, authorize extends: the session stays ended (${ROUNDS} rounds)`, async () => {
      const [first, second] = stores();
      const racing = racingStore(first, (key, value) => key.startsWith('session:') && value !== null);
      const usedSide = makeSentinel({ store: racing });
      const logoutSide = first === second ? usedSide : makeSentinel({ store: second });
      for (let round = 0; round < ROUNDS; round += 1) {
        const { sessionCookie } = await signIn(usedSide);
        let loggedOut: SentinelResponse | undefined;
        racing.arm(async () => {
          loggedOut = await logout(logoutSide, sessionCookie);
        });
        const racingAuthorize = await authorizeWith(usedSide, sessionCookie);
        expect(loggedOut?.status, 'the logout ran inside the window').toBe(200);
        // The session the user ended is not back: the same id signs nobody in, on either instance.
        const later = await authorizeWith(logoutSide, sessionCookie);
        expect(codeOf(later), 'the ended session answered a later authorization request').toBeNull();
        const silent = await authorizeWith(usedSide, sessionCookie, authorizeQuery({ prompt: 'none' }));
        expect(new URL(String(silent.headers.location)).searchParams.get('error')).toBe('login_required');
        // And the racing request itself goes on as one without a session: the login page, no code.
        expect(racingAuthorize.status).toBe(302);
        expect(codeOf(racingAuthorize)).toBeNull();
      }
    });

    it('prompt=none racing a logout answers login_required, never a code', async () => {
      const [first] = stores();
      const racing = racingStore(first, (key, value) => key.startsWith('session:') && value !== null);
      const sentinel = makeSentinel({ store: racing });
      const { sessionCookie } = await signIn(sentinel);
      racing.arm(async () => {
        expect((await logout(sentinel, sessionCookie)).status).toBe(200);
      });
      const silent = await authorizeWith(sentinel, sessionCookie, authorizeQuery({ prompt: 'none' }));
      const params = new URL(String(silent.headers.location)).searchParams;
      expect(params.get('error')).toBe('login_required');
      expect(params.get('code')).toBeNull();
    });

    it('concurrent uses of one live session all keep it (the extension is not refused among readers)', async () => {
      const [first] = stores();
      const sentinel = makeSentinel({ store: first });
      const { sessionCookie } = await signIn(sentinel);
      const responses = await Promise.all(Array.from({ length: 20 }, () => authorizeWith(sentinel, sessionCookie)));
      for (const response of responses) expect(codeOf(response)).toBeTruthy();
      expect(codeOf(await authorizeWith(sentinel, sessionCookie))).toBeTruthy();
    });

    it('a session stored in the earlier named-field form survives concurrent uses while it is rewritten compactly', async () => {
      const [first] = stores();
      const sentinel = makeSentinel({ store: first });
      const sessionId = randomBytes(32).toString('base64url');
      const record = { userId: USER_ID, accountId: ACCOUNT, authTime: Math.floor(Date.now() / 1000), expiresAt: Date.now() + 3_600_000 };
      await first.set(sessionKey(sessionId), JSON.stringify(record), 600_000);
      const responses = await Promise.all(Array.from({ length: 10 }, () => authorizeWith(sentinel, sessionId)));
      for (const response of responses) expect(codeOf(response)).toBeTruthy();
      expect(await first.get(sessionKey(sessionId))).toMatch(/^\[/);
    });
  });
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('race-session', 'RedisStore (two instances on one Redis)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
