/**
 * `session.maxAppsPerSession`: the apps one device session keeps grants of. With client ID metadata documents anyone
 * can mint a client, so one signed-in user could otherwise add apps to her own index record without end: every
 * exchange rewrites the whole record, and with MemoryStore it could fill `sessionIndexMaxBytes`, after which every
 * user's sign-in fails. Through the service (MemoryStore), and at the index itself; the concurrent and Redis cases
 * are in session-index-contention.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type SentinelOptions, type Store } from '../src/index.js';
import type { EventInput } from '../src/events/sentinel-event.js';
import { contextOf } from '../src/http/context.js';
import { LogoutQueue } from '../src/logout/logout-queue.js';
import { indexSession } from '../src/sessions/carry-over.js';
import { attachGrant, readUserIndex, type SessionContext, sessionSid } from '../src/sessions/session-index.js';
import { grantKey } from '../src/token/grant-records.js';
import { ACCOUNT, baseOptions, makeSentinel, USER_ID } from './helpers/fixtures.js';
import {
  type AppTokens,
  APP_B,
  appEntry,
  MAIN_APP,
  signInThroughSession,
  signInWithSession,
  tokenStanding,
  APP_C,
} from './helpers/logout-flow.js';

const LIVE = { guard: true, introspection: true, refresh: true };
const ENDED = { guard: false, introspection: false, refresh: false };

function options(overrides: Partial<SentinelOptions> = {}): SentinelOptions {
  const base = baseOptions(overrides);
  return { ...base, apps: [...(base.apps ?? []), appEntry(APP_B), appEntry(APP_C)] };
}

/** The grant id of an app's tokens: the first part of its refresh token. */
const gidOf = (tokens: AppTokens): string => (tokens.refreshToken as string).split('.')[0] as string;

/** The apps the user's index lists, with their grant ids, in the order they stand in it. */
async function listedApps(sentinel: Sentinel): Promise<[string, string[]][]> {
  const index = await readUserIndex(contextOf(sentinel), ACCOUNT, USER_ID);
  const listed = new Map<string, string[]>();
  for (const grant of index.sessions.flatMap((session) => session.grants)) {
    listed.set(grant.clientId, [...(listed.get(grant.clientId) ?? []), grant.grantId]);
  }
  return [...listed];
}

describe('session.maxAppsPerSession through the service', () => {
  it('an exchange of one app too many ends every grant of the least recently used app, one grant.ended each', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel(options({ session: { maxAppsPerSession: 2 }, onEvent: (event) => events.push(event) }));
    const first = await signInWithSession(sentinel);
    const again = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    // The main app signs in once more: now B is the one used least recently.
    const latest = await signInThroughSession(sentinel, MAIN_APP, first.cookie);
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([]);
    const c = await signInThroughSession(sentinel, APP_C, first.cookie);
    expect(await listedApps(sentinel)).toEqual([
      [MAIN_APP.clientId, [gidOf(first.tokens), gidOf(again), gidOf(latest)]],
      [APP_C.clientId, [gidOf(c)]],
    ]);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
    for (const kept of [first.tokens, again, latest]) expect(await tokenStanding(sentinel, kept, MAIN_APP)).toEqual(LIVE);
    expect(await tokenStanding(sentinel, c, APP_C)).toEqual(LIVE);
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([
      expect.objectContaining({ clientId: APP_B.clientId, userId: USER_ID, reason: 'session-apps-limit', outcome: 'success' }),
    ]);
    // Then the main app is the least recent: all three of its grants end, one event each.
    const b2 = await signInThroughSession(sentinel, APP_B, first.cookie);
    expect(await listedApps(sentinel)).toEqual([
      [APP_C.clientId, [gidOf(c)]],
      [APP_B.clientId, [gidOf(b2)]],
    ]);
    for (const ended of [first.tokens, again, latest]) expect(await tokenStanding(sentinel, ended, MAIN_APP)).toEqual(ENDED);
    const ends = events.filter((event) => event.type === 'grant.ended').slice(1);
    expect(ends).toHaveLength(3);
    for (const event of ends) expect(event).toMatchObject({ clientId: MAIN_APP.clientId, reason: 'session-apps-limit' });
    // Ending the session still ends every grant it kept.
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    expect(await tokenStanding(sentinel, c, APP_C)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, b2, APP_B)).toEqual(ENDED);
  });

  it("counts apps per session: another session's apps are not touched", async () => {
    const sentinel = makeSentinel(options({ session: { maxAppsPerSession: 2 } }));
    const one = await signInWithSession(sentinel);
    const two = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, two.cookie);
    await signInThroughSession(sentinel, APP_B, one.cookie);
    await signInThroughSession(sentinel, APP_C, one.cookie);
    expect(await tokenStanding(sentinel, one.tokens, MAIN_APP)).toEqual(ENDED);
    for (const kept of [two.tokens, b]) expect(await tokenStanding(sentinel, kept, kept === b ? APP_B : MAIN_APP)).toEqual(LIVE);
  });

  it('is an integer of at least 1, 64 by default', () => {
    expect(() => makeSentinel(options({ session: { maxAppsPerSession: 0 } }))).toThrow(/session\.maxAppsPerSession/);
    expect(() => makeSentinel(options({ session: { maxAppsPerSession: 2.5 } }))).toThrow(/session\.maxAppsPerSession/);
    expect(contextOf(makeSentinel(options())).config.session.maxAppsPerSession).toBe(64);
  });
});

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

function sessionContext(store: Store, events: EventInput[] = []): SessionContext {
  return { store, logoutQueue: new LogoutQueue(store), emit: (event) => events.push(event) };
}

async function signedIn(context: SessionContext, userId: string): Promise<string> {
  const sessionDigest = createHash('sha256').update(randomBytes(16)).digest('base64url');
  await indexSession(context, { accountId: ACCOUNT, userId, sessionDigest, authTime: nowSeconds(), sessionEnd: nowSeconds() + 3600 });
  return sessionSid(ACCOUNT, userId, sessionDigest);
}

/** Writes a grant as an exchange does and attaches it to `sid` with the default bounds; its id. */
async function attachNew(
  context: SessionContext,
  userId: string,
  sid: string,
  clientId: string,
  until = nowSeconds() + 3600,
): Promise<string> {
  const grantId = randomBytes(16).toString('base64url');
  await context.store.set(grantKey(grantId), 'alive', 3_600_000);
  const attached = await attachGrant(context, {
    accountId: ACCOUNT,
    userId,
    sid,
    clientId,
    grantId,
    until,
    maxGrantsPerApp: 16,
    maxAppsPerSession: 64,
  });
  expect(attached).toBe(true);
  return grantId;
}

async function appsOf(context: SessionContext, userId: string): Promise<string[]> {
  const index = await readUserIndex(context, ACCOUNT, userId);
  return [...new Set(index.sessions.flatMap((session) => session.grants.map((grant) => grant.clientId)))];
}

describe('session.maxAppsPerSession at the index (MemoryStore)', () => {
  it("one user minting apps cannot fill sessionIndexMaxBytes and fail every other user's sign-in", async () => {
    // Room for the index of one session with 64 apps of metadata-document ids, and not for 600 of them.
    const store = new MemoryStore({ sessionIndexMaxBytes: 64 * 1024 });
    const events: EventInput[] = [];
    const context = sessionContext(store, events);
    const sid = await signedIn(context, 'mallory');
    const clientIds = Array.from({ length: 600 }, (_, i) => `https://mallory.example/clients/${i}`);
    const grants: string[] = [];
    for (const clientId of clientIds) grants.push(await attachNew(context, 'mallory', sid, clientId));
    expect(await appsOf(context, 'mallory')).toEqual(clientIds.slice(-64));
    // Every grant the index no longer lists is ended, one event each.
    for (const [i, grantId] of grants.entries()) expect(await store.get(grantKey(grantId))).toBe(i < 600 - 64 ? null : 'alive');
    expect(events.filter((event) => event.type === 'grant.ended')).toHaveLength(600 - 64);
    // Another user still signs in.
    await expect(signedIn(context, 'alice')).resolves.toMatch(/\./);
  });

  it('an app whose grants expired (a marker) counts, and is dropped first with no grant to end', async () => {
    const events: EventInput[] = [];
    const context = sessionContext(new MemoryStore(), events);
    const sid = await signedIn(context, 'u-marker');
    // Expired at once: the next read lists the app's marker in its place.
    await attachNew(context, 'u-marker', sid, 'app-expired', nowSeconds() - 1);
    for (let i = 0; i < 63; i++) await attachNew(context, 'u-marker', sid, `app-${i}`);
    const index = await readUserIndex(context, ACCOUNT, 'u-marker');
    expect(index.sessions[0]?.grants[0]).toEqual(expect.objectContaining({ clientId: 'app-expired', grantId: '' }));
    await attachNew(context, 'u-marker', sid, 'app-63');
    const apps = await appsOf(context, 'u-marker');
    expect(apps).toHaveLength(64);
    expect(apps).not.toContain('app-expired');
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([]);
  });

  it('a store failing to end the dropped app fails the attach and writes nothing', async () => {
    const inner = new MemoryStore();
    let failing = false;
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => (failing ? Promise.reject(new Error('store down')) : inner.delete(key)),
      increment: (key, ttl) => inner.increment(key, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const events: EventInput[] = [];
    const context = sessionContext(store, events);
    const sid = await signedIn(context, 'u-fail');
    const first = await attachNew(context, 'u-fail', sid, 'app-first');
    for (let i = 1; i < 64; i++) await attachNew(context, 'u-fail', sid, `app-${i}`);
    failing = true;
    await expect(attachNew(context, 'u-fail', sid, 'app-64')).rejects.toThrow('store down');
    const apps = await appsOf(context, 'u-fail');
    expect(apps[0]).toBe('app-first');
    expect(apps).not.toContain('app-64');
    expect(await inner.get(grantKey(first))).toBe('alive');
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([]);
  });
});
