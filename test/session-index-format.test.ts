/**
 * The stored form of the session index (src/sessions/session-index.ts): `[userId, entry, …]` with each entry's ends
 * as offsets from its authTime. An index written by an earlier version (`[accountId, userId, entry, …]`, every time
 * since the epoch) still reads, still ends what it lists, is rewritten in the new form by the next change, and is
 * never read for another account.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { encodeIndex, parseIndex } from '../src/sessions/index-encoding.js';
import { userIndexKey } from '../src/sessions/session-index.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT, USER_ID } from './helpers/fixtures.js';
import { MAIN_APP, signInThroughSession, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

const ENDED = { guard: false, introspection: false, refresh: false };

/** The index as an earlier version wrote it: the account first, and every time since the epoch. */
function earlierForm(raw: string): string {
  const [userId, ...entries] = JSON.parse(raw) as [string, ...(string | number)[][]];
  const absolute = entries.map((entry) => {
    const authTime = entry[1] as number;
    return entry.map((value, i) => (i === 2 || (i > 3 && i % 3 === 2) ? authTime + (value as number) : value));
  });
  return JSON.stringify([ACCOUNT, userId, ...absolute]);
}

describe('the session index as stored', () => {
  it('holds the user and entries whose ends are offsets from the sign-in, without the account', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    await signInWithSession(sentinel);
    const [userId, entry, ...more] = JSON.parse((await store.get(userIndexKey(ACCOUNT, USER_ID))) as string) as [string, unknown[]];
    expect(userId).toBe(USER_ID);
    expect(more).toEqual([]);
    const [, authTime, sessionEnd, clientId, , grantEnd] = entry as [string, number, number, string, string, number];
    expect(authTime).toBeGreaterThan(1_700_000_000);
    expect(sessionEnd).toBeGreaterThan(0);
    expect(sessionEnd).toBeLessThan(1_000_000);
    expect(clientId).toBe(MAIN_APP.clientId);
    expect(grantEnd).toBeGreaterThan(sessionEnd);
  });

  it('writes an entry that carries nothing exactly as versions before carried sessions did (rolling upgrades)', () => {
    // An instance of the earlier version refuses any tail after the triples: only the record of a user who signed in
    // again in one browser (an entry with `carried`) is unreadable to it, never anyone else's.
    const entry = { sessionDigest: 'E'.repeat(43), authTime: 1_767_225_600, sessionEnd: 1_767_254_400 };
    const grants = [{ clientId: 'a', grantId: 'g1', until: 1_769_817_600 }];
    const earlierVersion = `["${USER_ID}",["${'E'.repeat(43)}",1767225600,28800,"a","g1",2592000],["${'E'.repeat(43)}",1767225600,28800]]`;
    expect(
      encodeIndex(USER_ID, [
        { ...entry, grants },
        { ...entry, grants: [], carried: [] },
      ]),
    ).toBe(earlierVersion);
    expect(
      encodeIndex(USER_ID, [
        { ...entry, grants, carried: undefined },
        { ...entry, grants: [] },
      ]),
    ).toBe(earlierVersion);
  });

  it('keeps the sessions an entry carries as one array after its triples, and refuses a broken tail', () => {
    const earlier = 'E'.repeat(43);
    const sessions = [
      {
        sessionDigest: earlier,
        authTime: 1_767_225_600,
        sessionEnd: 1_767_254_400,
        grants: [{ clientId: 'a', grantId: 'g1', until: 1_769_817_600 }],
      },
      { sessionDigest: 'N'.repeat(43), authTime: 1_767_225_700, sessionEnd: 1_767_254_500, grants: [], carried: [earlier] },
    ];
    const raw = encodeIndex(USER_ID, sessions);
    expect(JSON.parse(raw)[2]).toEqual(['N'.repeat(43), 1_767_225_700, 28_800, [earlier]]);
    expect(parseIndex(raw).sessions).toEqual(sessions);
    expect(() => parseIndex(JSON.stringify([USER_ID, ['N'.repeat(43), 1, 2, 'a', 'g1']]))).toThrow('unreadable');
    expect(() => parseIndex(JSON.stringify([USER_ID, ['N'.repeat(43), 1, 2, [7]]]))).toThrow('unreadable');
  });

  it('reads an index of the earlier form, ends what it lists, and rewrites it on the next change', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const first = await signInWithSession(sentinel);
    const key = userIndexKey(ACCOUNT, USER_ID);
    const current = (await store.get(key)) as string;
    const sessions = await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID });
    await store.set(key, earlierForm(current), 3_600_000);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual(sessions);
    expect(await sentinel.listSessions({ accountId: OTHER_ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(await sentinel.endSession({ accountId: OTHER_ACCOUNT, sid: first.tokens.sid })).toBe(false);

    const second = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect(second.sid).toBe(first.tokens.sid);
    expect(await store.get(key)).toMatch(new RegExp(`^\\["${USER_ID}",\\[`));
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, second, MAIN_APP)).toEqual(ENDED);
  });

  it('ends the grants an index of the earlier form lists when the session ends', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const { tokens } = await signInWithSession(sentinel);
    const key = userIndexKey(ACCOUNT, USER_ID);
    await store.set(key, earlierForm((await store.get(key)) as string), 3_600_000);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect(await store.get(key)).toBeNull();
  });

  it('drops what can no longer live on the next write and rewrites the rest as it was', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store });
    const first = await signInWithSession(sentinel);
    const key = userIndexKey(ACCOUNT, USER_ID);
    const [userId, entry] = JSON.parse((await store.get(key)) as string) as [string, (string | number)[]];
    const authTime = entry[1] as number;
    // The live entry gains a grant that ended a minute before its sign-in; an entry of a day-old sign-in whose
    // session and grant ended an hour after it is listed behind it.
    const withExpiredGrant = [...entry, MAIN_APP.clientId, 'expired-grant-of-a-live-session', -60];
    const dayOld = ['x'.repeat(43), authTime - 86_400, 3600, MAIN_APP.clientId, 'grant-of-a-day-old-session', 3600];
    await store.set(key, JSON.stringify([userId, withExpiredGrant, dayOld]), 3_600_000);

    const second = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect(second.sid).toBe(first.tokens.sid);
    const [, ...entries] = JSON.parse((await store.get(key)) as string) as [string, ...(string | number)[][]];
    expect(entries).toHaveLength(1);
    const written = entries[0] as (string | number)[];
    expect(written.slice(0, entry.length)).toEqual(entry);
    expect(written).not.toContain('expired-grant-of-a-live-session');
    expect(written).toHaveLength(entry.length + 3);

    // A write where nothing expired keeps every entry and grant it read.
    const third = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect(third.sid).toBe(first.tokens.sid);
    const [, ...after] = JSON.parse((await store.get(key)) as string) as [string, ...(string | number)[][]];
    expect(after[0]?.slice(0, written.length)).toEqual(written);
    expect(after[0]).toHaveLength(written.length + 3);
  });
});
