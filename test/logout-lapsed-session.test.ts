/**
 * RP-initiated logout from a browser with no live session: the session the `id_token_hint` names (its `sid`) idled
 * out while the grants issued through it still live. Logging out ends those grants, every app's, as ending the
 * session would have; a hint alone never ends a session whose record is still in use elsewhere.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sentinel, SentinelEvent, SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { sessionKey } from '../src/authorize/state/session.js';
import { ACCOUNT_PATH, call, postForm } from './helpers/direct-flow.js';
import { advanceClock } from './helpers/clock.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { APP_B, appEntry, MAIN_APP, sessionWorks, signInThroughSession, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

function withAppB(): SentinelOptions {
  const base = baseOptions();
  return { ...base, apps: [...(base.apps ?? []), appEntry(APP_B)] };
}
afterEach(() => {
  vi.restoreAllMocks();
});

const LIVE = { guard: true, introspection: true, refresh: true };
const ENDED = { guard: false, introspection: false, refresh: false };

function endSession(sentinel: Sentinel, idTokenHint: string) {
  return call(sentinel, { path: `${ACCOUNT_PATH}/end_session`, query: new URLSearchParams({ id_token_hint: idTokenHint }) });
}

describe('logout of a lapsed session', () => {
  it('ends the grants of every app signed in through it, and tells the host', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({ ...withAppB(), onEvent: (event) => events.push(event) });
    const { cookie, tokens } = await signInWithSession(sentinel);
    const other = await signInThroughSession(sentinel, APP_B, cookie);
    // The session idles out: its record goes, the grants issued through it stay.
    await contextOf(sentinel).store.delete(sessionKey(cookie));
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(LIVE);
    expect((await endSession(sentinel, tokens.idToken)).status).toBe(200);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, other, APP_B)).toEqual(ENDED);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'session.ended', reason: 'logout', userId: USER_ID, clientId: CLIENT_ID }),
    );
  });

  it('leaves a session whose record lives: only the browser holding it ends it', async () => {
    const sentinel = makeSentinel(baseOptions());
    const { tokens } = await signInWithSession(sentinel);
    expect((await endSession(sentinel, tokens.idToken)).status).toBe(200);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(LIVE);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
  });
});

describe('a hint in another browser of the same user', () => {
  it('asks before signing out a session the hint was not issued from, even begun in the same second', async () => {
    const sentinel = makeSentinel(baseOptions());
    vi.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel);
    vi.useRealTimers();
    expect(decodeJwt(first.tokens.idToken).auth_time).toBe(decodeJwt(second.tokens.idToken).auth_time);
    const response = await call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: first.tokens.idToken }),
      headers: { cookie: `sentinel_session=${second.cookie}` },
    });
    expect(response.status).toBe(200);
    expect(String(response.body)).toContain('name="confirmation"');
    expect(await sessionWorks(sentinel, second.cookie)).toBe(true);
  });

  it("ends the hint's lapsed session too once the user confirms, though the browser signed in again since", async () => {
    const sentinel = makeSentinel(baseOptions());
    const first = await signInWithSession(sentinel);
    // The first session idles out with its grant alive; the user signs in again, later, in the same browser.
    await contextOf(sentinel).store.delete(sessionKey(first.cookie));
    advanceClock(2);
    const second = await signInWithSession(sentinel);
    const confirmed = await confirmLogout(sentinel, first.tokens.idToken, second.cookie);
    expect(confirmed.status).toBe(200);
    expect(await sessionWorks(sentinel, second.cookie)).toBe(false);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it("leaves the hint's session when its record still lives elsewhere, and ends nothing before the confirmation", async () => {
    const sentinel = makeSentinel(baseOptions());
    const first = await signInWithSession(sentinel);
    advanceClock(2);
    const second = await signInWithSession(sentinel);
    const page = await logoutPage(sentinel, first.tokens.idToken, second.cookie);
    expect(page.confirmation).not.toBe('');
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(LIVE);
    expect((await confirmLogout(sentinel, first.tokens.idToken, second.cookie)).status).toBe(200);
    expect(await sessionWorks(sentinel, second.cookie)).toBe(false);
    expect(await sessionWorks(sentinel, first.cookie)).toBe(true);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(LIVE);
  });
});

/** The "Sign out?" page for `idTokenHint` in the browser holding `cookie`: its confirmation id and CSRF token. */
async function logoutPage(sentinel: Sentinel, idTokenHint: string, cookie: string): Promise<{ confirmation: string; csrf: string }> {
  const page = await call(sentinel, {
    path: `${ACCOUNT_PATH}/end_session`,
    query: new URLSearchParams({ id_token_hint: idTokenHint }),
    headers: { cookie: `sentinel_session=${cookie}` },
  });
  const html = String(page.body);
  return {
    confirmation: /name="confirmation" value="([^"]+)"/.exec(html)?.[1] ?? '',
    csrf: /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '',
  };
}

/** Shows the page and confirms it, as the user would. */
async function confirmLogout(sentinel: Sentinel, idTokenHint: string, cookie: string) {
  const { confirmation, csrf } = await logoutPage(sentinel, idTokenHint, cookie);
  return postForm(sentinel, `${ACCOUNT_PATH}/end_session`, new URLSearchParams({ confirmation, csrf_token: csrf }).toString(), {
    headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
  });
}
