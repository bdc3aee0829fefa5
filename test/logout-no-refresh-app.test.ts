/**
 * An app without the refresh_token grant, signed in through a browser session that outlives its tokens: the session
 * index keeps it named (a marker in place of its expired grant, src/sessions/app-marker.ts) for as long as the
 * session lives, so ending the session still sends it a logout token (Back-Channel Logout 1.0 §2.7), with a real
 * receiver on loopback.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel } from '../src/index.js';
import { userIndexKey } from '../src/sessions/session-index.js';
import { advanceClock } from './helpers/clock.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { APP_B, appEntry, MAIN_APP, sessionWorks, signInAgain, signInThroughSession, signInWithSession } from './helpers/logout-flow.js';
import { ACCOUNT_PATH, call } from './helpers/direct-flow.js';
import { type LogoutReceiver, startReceiver } from './helpers/logout-receiver.js';

/** An app registered for authorization_code alone: its grant ends with its access token (1 h). */
const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const item of running.splice(0).reverse()) await item.close();
});

async function setUp(): Promise<{ sentinel: Sentinel; store: MemoryStore; receiver: LogoutReceiver }> {
  let sentinel: Sentinel | undefined;
  const receiver = await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: APP_B.clientId, jwks: () => (sentinel as Sentinel).jwks() });
  running.push(receiver);
  const store = new MemoryStore();
  const appB = appEntry(APP_B, { grantTypes: ['authorization_code'], backchannelLogoutUri: receiver.uri });
  sentinel = makeSentinel({ apps: [...(baseOptions().apps ?? []), appB], store, clientJwks: { allowPrivateAddresses: true } });
  running.push(sentinel);
  return { sentinel, store, receiver };
}

/** The user keeps using the browser session (idle 1 h, absolute 8 h) for 150 minutes: B's tokens are long expired. */
async function keepUsing(sentinel: Sentinel, cookie: string): Promise<void> {
  for (const minutes of [50, 100, 150]) {
    advanceClock(minutes * 60);
    expect(await sessionWorks(sentinel, cookie)).toBe(true);
  }
}

/** The stored triples `[clientId, gid, until]` of the user's only index entry. */
async function storedGrants(store: MemoryStore): Promise<unknown[][]> {
  const [, entry] = JSON.parse((await store.get(userIndexKey(ACCOUNT, USER_ID))) as string) as [string, unknown[]];
  const triples: unknown[][] = [];
  for (let i = 3; i < entry.length; i += 3) triples.push(entry.slice(i, i + 3));
  return triples;
}

describe('an app without refresh tokens in a long browser session', () => {
  it('stays named by the session after its tokens expired, and gets a logout token when the session ends', async () => {
    const { sentinel, store, receiver } = await setUp();
    const first = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    expect(b.refreshToken).toBeUndefined();
    await keepUsing(sentinel, first.cookie);
    const [session] = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(session?.clientIds).toEqual([CLIENT_ID, APP_B.clientId]);
    // The next write of the index (here another app's sign-in) keeps B as a marker: its client id, no grant id, 0.
    await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect((await storedGrants(store)).find(([clientId]) => clientId === APP_B.clientId)).toEqual([APP_B.clientId, '', 0]);
    // B holds no live grant any more, so it is no connected app.
    expect((await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).map((app) => app.clientId)).toEqual([CLIENT_ID]);
    // The real clock again for the delivery, whose token the receiver checks against it: what names B now is the
    // marker the write above stored in place of its grant.
    vi.restoreAllMocks();
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    await receiver.waitFor(1);
    expect(receiver.received.map((token) => token.sid)).toEqual([first.tokens.sid]);
    expect(receiver.problems).toEqual([]);
  });

  it('signed in before the user signed in again in the browser: still told when the user signs out there', async () => {
    const { sentinel, receiver } = await setUp();
    const first = await signInWithSession(sentinel, APP_B);
    // The same user signs in again in the same browser (prompt=login): a new session, which carries the earlier one.
    const again = await signInAgain(sentinel, MAIN_APP, first.cookie);
    await keepUsing(sentinel, again.cookie);
    vi.restoreAllMocks();
    const response = await call(sentinel, {
      method: 'POST',
      path: `${ACCOUNT_PATH}/logout`,
      headers: { cookie: `sentinel_session=${again.cookie}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(response.status).toBe(200);
    await receiver.waitFor(1);
    // The sid of the ID tokens B holds: the session it signed in through.
    expect(receiver.received.map((token) => token.sid)).toEqual([first.tokens.sid]);
    expect(receiver.problems).toEqual([]);
  });

  it('disconnecting the app tells it too, though it has no grant left to end', async () => {
    const { sentinel, receiver } = await setUp();
    const first = await signInWithSession(sentinel);
    await signInThroughSession(sentinel, APP_B, first.cookie);
    await keepUsing(sentinel, first.cookie);
    await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    vi.restoreAllMocks();
    expect(await sentinel.revokeUserGrants({ accountId: ACCOUNT, userId: USER_ID, clientId: APP_B.clientId })).toBe(0);
    await receiver.waitFor(1);
    expect(receiver.received.map((token) => token.sid)).toEqual([first.tokens.sid]);
    const [session] = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(session?.clientIds).toEqual([CLIENT_ID]);
  });

  it('a new sign-in of the app takes the place of its marker', async () => {
    const { sentinel, store } = await setUp();
    const first = await signInWithSession(sentinel);
    await signInThroughSession(sentinel, APP_B, first.cookie);
    await keepUsing(sentinel, first.cookie);
    await signInThroughSession(sentinel, APP_B, first.cookie);
    const ofB = (await storedGrants(store)).filter(([clientId]) => clientId === APP_B.clientId);
    expect(ofB).toHaveLength(1);
    expect(ofB[0]?.[1]).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('the marker goes once the session has reached its end', async () => {
    const { sentinel } = await setUp();
    const first = await signInWithSession(sentinel);
    await signInThroughSession(sentinel, APP_B, first.cookie);
    // Past the 8 h absolute end: the main app's refresh grant keeps the entry listed, but B is no longer named.
    advanceClock(9 * 3600);
    const [session] = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    expect(session?.clientIds).toEqual([CLIENT_ID]);
  });
});
