/**
 * Sessions keyed by a short digest (src/authorize/state/session.ts `sessionDigestOf`) beside those of earlier
 * versions, keyed by the full digest of a 43-character id: a browser signed in before an upgrade stays signed in,
 * its apps' sid (with the 43-character session part) still ends it, and a sid of neither form names no session.
 */
import { describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { digest, digestsEqual, matchesStoredDigest, randomSecret, shortDigest } from '../src/lib/random-secrets.js';
import { sessionDigestOf, sessionKey } from '../src/authorize/state/session.js';
import { parseSid, sessionSid, userIndexKey } from '../src/sessions/session-index.js';
import { ACCOUNT_PATH, call } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { MAIN_APP, sessionWorks, signInThroughSession, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

const LIVE = { guard: true, introspection: true, refresh: true };
const ENDED = { guard: false, introspection: false, refresh: false };

/**
 * A session as an earlier version left it: the record under the full digest of a 43-character id, and its entry in
 * the user's index under that digest. Made from a session of this version by moving both.
 */
async function earlierVersionSession(sentinel: Sentinel): Promise<string> {
  const { store } = contextOf(sentinel);
  const { cookie } = await signInWithSession(sentinel);
  const earlier = randomSecret();
  const record = (await store.take(sessionKey(cookie)))!;
  await store.set(`session:${digest(earlier)}`, record, 3_600_000);
  const indexKey = userIndexKey(ACCOUNT, USER_ID);
  const index = (await store.get(indexKey))!;
  expect(index).toContain(`"${shortDigest(cookie)}"`);
  await store.set(indexKey, index.replace(shortDigest(cookie), digest(earlier)), 86_400_000);
  return earlier;
}

describe('session digests of both forms', () => {
  it('gives a new session a 44-character id, a 22-character key digest and a 45-character sid', async () => {
    const sentinel = makeSentinel(baseOptions());
    const { cookie, tokens } = await signInWithSession(sentinel);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(sessionDigestOf(cookie)).toBe(shortDigest(cookie));
    expect(await contextOf(sentinel).store.get(`session:${shortDigest(cookie)}`)).not.toBeNull();
    expect(tokens.sid).toBe(sessionSid(ACCOUNT, USER_ID, shortDigest(cookie)));
    expect(tokens.sid).toHaveLength(45);
  });

  it('keeps a session of an earlier version signed in, with its sid, and ends it by that sid', async () => {
    const sentinel = makeSentinel(baseOptions());
    const earlier = await earlierVersionSession(sentinel);
    expect(await sessionWorks(sentinel, earlier)).toBe(true);
    const tokens = await signInThroughSession(sentinel, MAIN_APP, earlier);
    // The sid apps got before the upgrade, with the full digest: the same session gives them the same sid.
    expect(tokens.sid).toBe(sessionSid(ACCOUNT, USER_ID, digest(earlier)));
    expect(tokens.sid).toHaveLength(66);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(LIVE);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(await sessionWorks(sentinel, earlier)).toBe(false);
    expect(await contextOf(sentinel).store.get(`session:${digest(earlier)}`)).toBeNull();
  });

  it("signs a session of an earlier version out at once when the app's ID token names it (RP-initiated logout)", async () => {
    const sentinel = makeSentinel(baseOptions());
    const earlier = await earlierVersionSession(sentinel);
    const tokens = await signInThroughSession(sentinel, MAIN_APP, earlier);
    const response = await call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: tokens.idToken }),
      headers: { cookie: `sentinel_session=${earlier}` },
    });
    // No confirmation page: the hint's sid is the browser's session's, in its 66-character form.
    expect(String(response.body)).not.toContain('name="confirmation"');
    expect(await sessionWorks(sentinel, earlier)).toBe(false);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
  });

  it('reads a sid with a session part of either length, and nothing else', () => {
    const user = 'U'.repeat(22);
    expect(parseSid(`${user}.${'s'.repeat(22)}`)).toEqual({ userPart: user, sessionDigest: 's'.repeat(22) });
    expect(parseSid(`${user}.${'s'.repeat(43)}`)).toEqual({ userPart: user, sessionDigest: 's'.repeat(43) });
    for (const length of [0, 21, 23, 30, 42, 44]) expect(parseSid(`${user}.${'s'.repeat(length)}`)).toBeNull();
  });

  it('matches a secret against its stored digest of either length, and against nothing else', () => {
    const secret = randomSecret();
    expect(matchesStoredDigest(secret, shortDigest(secret))).toBe(true);
    expect(matchesStoredDigest(secret, digest(secret))).toBe(true);
    expect(matchesStoredDigest(randomSecret(), shortDigest(secret))).toBe(false);
    expect(matchesStoredDigest(randomSecret(), digest(secret))).toBe(false);
    for (const cut of [0, 16, 21, 23, 30, 42]) expect(matchesStoredDigest(secret, digest(secret).slice(0, cut))).toBe(false);
    expect(digestsEqual(shortDigest(secret), digest(secret).slice(0, 22))).toBe(true);
  });
});
