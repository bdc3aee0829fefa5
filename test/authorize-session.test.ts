/**
 * Device-session timeouts (idle and absolute) and the Store keys of the browser flow, against a recording store.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { digest, randomSecret, shortDigest } from '../src/lib/random-secrets.js';
import { createSession } from '../src/authorize/state/new-session.js';
import { encodeSessionRecord, endSession, sessionDigestOf, useSession } from '../src/authorize/state/session.js';
import { MemoryStore } from '../src/index.js';
import { ACCOUNT, OTHER_ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';

function recordingSentinel(session = { absoluteTtl: 8 * 3600, idleTtl: 3600 }) {
  const store = new MemoryStore();
  const sets: Array<{ key: string; ttlMs: number }> = [];
  const set = store.set.bind(store);
  store.set = async (key, value, ttlMs) => {
    sets.push({ key, ttlMs });
    return set(key, value, ttlMs);
  };
  // A session's extension is a compare-and-set (it must not bring back a session ended meanwhile): record its writes too.
  const swap = store.swap.bind(store);
  store.swap = async (entries) => {
    const applied = await swap(entries);
    if (applied) for (const entry of entries) if (entry.value !== null) sets.push({ key: entry.key, ttlMs: entry.ttlMs ?? 0 });
    return applied;
  };
  const sentinel = makeSentinel({ store, session: { cookieName: 'sentinel_session', ...session } });
  return { context: contextOf(sentinel), store, sets };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('device sessions', () => {
  it('stores the record under session:{short digest of the id} with the idle TTL, never the id itself', async () => {
    const { context, sets } = recordingSentinel();
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-1', authTime: 1 });
    expect(id).toMatch(/^[A-Za-z0-9_-]{44}$/);
    // The session record is written first, then the user's session index (session-index.ts), and the cookie after
    // both: an ending between the two finds the record to delete (test/logout-signin-race.test.ts).
    expect(sets).toEqual([
      { key: `session:${shortDigest(id)}`, ttlMs: 3600 * 1000 },
      { key: expect.stringMatching(/^user-sessions:[A-Za-z0-9_-]{22}$/), ttlMs: expect.any(Number) },
    ]);
    // 22 characters of the digest: 21 fewer than the keys of earlier versions.
    expect(sets[0]?.key).toHaveLength('session:'.length + 22);
    expect(shortDigest(id)).toBe(digest(id).slice(0, 22));
    for (const write of sets) expect(write.key).not.toContain(id);
  });

  it('still reads, extends and ends a session of an earlier version, keyed by the full digest of its 43-character id', async () => {
    const { context, store, sets } = recordingSentinel();
    const earlier = randomSecret();
    expect(earlier).toHaveLength(43);
    expect(sessionDigestOf(earlier)).toBe(digest(earlier));
    await store.set(
      `session:${digest(earlier)}`,
      encodeSessionRecord({ userId: 'u-1', accountId: ACCOUNT, authTime: 1, expiresAt: Date.now() + 60_000 }),
      60_000,
    );
    expect(await useSession(context, earlier, ACCOUNT)).toMatchObject({ userId: 'u-1', authTime: 1 });
    expect(sets.at(-1)?.key).toBe(`session:${digest(earlier)}`);
    // Its short-digest key names nothing: the id's length alone says where its record is.
    expect(await store.get(`session:${shortDigest(earlier)}`)).toBeNull();
    expect(await endSession(context, earlier)).toMatchObject({ userId: 'u-1' });
    expect(await store.get(`session:${digest(earlier)}`)).toBeNull();
  });

  it('refreshes the idle timeout on use, but never beyond the absolute end', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { context, sets } = recordingSentinel({ absoluteTtl: 3 * 3600, idleTtl: 3600 });
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-1', authTime: 1 });
    vi.setSystemTime(new Date('2026-01-01T00:30:00Z'));
    expect(await useSession(context, id, ACCOUNT)).not.toBeNull();
    expect(sets.at(-1)?.ttlMs).toBe(3600 * 1000);
    vi.setSystemTime(new Date('2026-01-01T02:40:00Z'));
    expect(await useSession(context, id, ACCOUNT)).not.toBeNull();
    expect(sets.at(-1)?.ttlMs).toBe(20 * 60 * 1000);
  });

  it('ends a session past its absolute lifetime even if the store still holds it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { context, store } = recordingSentinel({ absoluteTtl: 3600, idleTtl: 3600 });
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-1', authTime: 1 });
    vi.setSystemTime(new Date('2026-01-01T01:00:01Z'));
    expect(await useSession(context, id, ACCOUNT)).toBeNull();
    expect(await store.get(`session:${shortDigest(id)}`)).toBeNull();
  });

  it('a session belongs to one account', async () => {
    const { context } = recordingSentinel();
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-1', authTime: 1 });
    expect(await useSession(context, id, OTHER_ACCOUNT)).toBeNull();
    expect(await useSession(context, id, ACCOUNT)).toMatchObject({ userId: 'u-1', accountId: ACCOUNT, authTime: 1 });
  });

  it('endSession removes the record once', async () => {
    const { context } = recordingSentinel();
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-1', authTime: 1 });
    expect(await endSession(context, id)).toMatchObject({ userId: 'u-1' });
    expect(await endSession(context, id)).toBeNull();
    expect(await useSession(context, id, ACCOUNT)).toBeNull();
  });

  it('stores the compact array form and still reads the named-field form of earlier versions', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const { context, store } = recordingSentinel({ absoluteTtl: 3600, idleTtl: 600 });
    const id = await createSession(context, { accountId: ACCOUNT, userId: 'u-"1"', authTime: 7 });
    const end = Date.parse('2026-01-01T01:00:00Z');
    expect(await store.get(`session:${shortDigest(id)}`)).toBe(JSON.stringify(['u-"1"', ACCOUNT, 7, end]));
    const legacy = { userId: 'u-2', accountId: ACCOUNT, authTime: 9, createdAt: end - 3_600_000, expiresAt: end };
    const old = randomSecret(); // an id of those versions, keyed by its full digest
    await store.set(`session:${digest(old)}`, JSON.stringify(legacy), 600_000);
    expect(await useSession(context, old, ACCOUNT)).toEqual({ userId: 'u-2', accountId: ACCOUNT, authTime: 9, expiresAt: end });
    // Using it rewrites it in the compact form, with the same absolute end.
    expect(await store.get(`session:${digest(old)}`)).toBe(
      encodeSessionRecord({ userId: 'u-2', accountId: ACCOUNT, authTime: 9, expiresAt: end }),
    );
  });

  it('a record of the wrong shape reads as no session', async () => {
    const { context, store } = recordingSentinel();
    const future = Date.now() + 60_000;
    for (const value of [
      JSON.stringify(['u-1', ACCOUNT, 1]),
      JSON.stringify(['u-1', ACCOUNT, '1', future]),
      JSON.stringify([1, ACCOUNT, 1, future]),
      JSON.stringify({ userId: 'u-1', accountId: ACCOUNT, expiresAt: future }),
      'null',
      '42',
    ]) {
      await store.set(`session:${shortDigest('x')}`, value, 60_000);
      expect(await useSession(context, 'x', ACCOUNT)).toBeNull();
    }
    await store.set(`session:${shortDigest('x')}`, JSON.stringify(['u-1', ACCOUNT, 1, future]), 60_000);
    expect(await useSession(context, 'x', ACCOUNT)).not.toBeNull();
  });

  it('a corrupt record reads as no session', async () => {
    const { context, store } = recordingSentinel();
    await store.set(`session:${shortDigest('x')}`, '{not json', 1000);
    expect(await useSession(context, 'x', ACCOUNT)).toBeNull();
  });
});
