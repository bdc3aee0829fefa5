/**
 * Many changes of one user's session index at once (issue 36): concurrent attaches and code exchanges of one user,
 * through one session, on one instance and on two, with the ending of the session in the middle, and with a store
 * that fails to end an old grant. On MemoryStore and on a real Redis.
 *
 * Each case also counts the index's compare-and-set writes: on one instance none may lose (its writes are queued and
 * carried together, src/sessions/index-group-commit.ts), and far fewer land than there were changes. Without the
 * queue every change writes for itself, so those counts are what fails first.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Store } from '../src/index.js';
import type { EventInput } from '../src/events/sentinel-event.js';
import { contextOf } from '../src/http/context.js';
import { LogoutQueue } from '../src/logout/logout-queue.js';
import { endAllUserSessions, endIndexedSession } from '../src/sessions/end-sessions.js';
import { indexSession } from '../src/sessions/carry-over.js';
import { attachGrant, readUserIndex, type SessionContext, sessionSid } from '../src/sessions/session-index.js';
import { grantKey } from '../src/token/grant-records.js';
import { countingIndexWrites, type IndexWrites } from './helpers/counting-store.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { codeThroughSession, MAIN_APP, redeemCode, signInWithSession } from './helpers/logout-flow.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

/** `session.maxGrantsPerApp` by default. */
const MAX = 16;
const APP_A = 'app-a';
const APP_B = 'app-b';
const APP_C = 'app-c';

/** One instance of the service as the session functions see it, over its own view of the store. */
interface Instance {
  context: SessionContext;
  store: Store;
  writes: IndexWrites;
}

function instance(shared: Store, events: EventInput[]): Instance {
  const { store, writes } = countingIndexWrites(shared);
  return { context: { store, logoutQueue: new LogoutQueue(store), emit: (event) => events.push(event) }, store, writes };
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
/** A user of the case alone (the Redis cases share one key prefix). */
const newUser = (): string => `u-${randomBytes(6).toString('hex')}`;

/** A new device session of `userId`, indexed as a sign-in indexes it; its sid. */
async function signedIn(context: SessionContext, userId: string): Promise<{ sid: string; sessionDigest: string }> {
  const sessionDigest = createHash('sha256').update(randomBytes(16)).digest('base64url');
  await indexSession(context, { accountId: ACCOUNT, userId, sessionDigest, authTime: nowSeconds(), sessionEnd: nowSeconds() + 3600 });
  return { sid: sessionSid(ACCOUNT, userId, sessionDigest), sessionDigest };
}

/** A grant record as an exchange writes it before attaching it: alive until something deletes it. */
async function newGrant(store: Store): Promise<string> {
  const grantId = randomBytes(16).toString('base64url');
  await store.set(grantKey(grantId), 'alive', 3_600_000);
  return grantId;
}

function attach(
  at: Instance,
  userId: string,
  sid: string,
  grantId: string,
  clientId = APP_A,
  maxGrantsPerApp = MAX,
  maxAppsPerSession = 64,
): Promise<boolean> {
  const until = nowSeconds() + 3600;
  return attachGrant(at.context, { accountId: ACCOUNT, userId, sid, clientId, grantId, until, maxGrantsPerApp, maxAppsPerSession });
}

/** The grant ids the user's index lists for `clientId`. */
async function listed(context: SessionContext, userId: string, clientId = APP_A): Promise<string[]> {
  const index = await readUserIndex(context, ACCOUNT, userId);
  return index.sessions.flatMap((session) => session.grants.filter((grant) => grant.clientId === clientId).map((grant) => grant.grantId));
}

async function alive(store: Store, grantIds: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const grantId of grantIds) if ((await store.get(grantKey(grantId))) !== null) found.push(grantId);
  return found;
}

/**
 * `inner` with every call answered a turn of the event loop later, as a store across a network answers: MemoryStore
 * answers within the same turn, so exchanges handled at once would never overlap at the index and could not contend.
 */
function withRoundTrips(inner: Store): Store {
  return new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await new Promise((resolve) => setImmediate(resolve));
        return value.apply(target, args);
      };
    },
  });
}

const endedEvents = (events: EventInput[]): EventInput[] => events.filter((event) => event.type === 'grant.ended');

function cases(label: string, stores: () => [Store, Store]): void {
  describe(label, () => {
    it('64 attaches of one user at once all succeed and keep the bound; none loses a compare-and-set', async () => {
      const events: EventInput[] = [];
      const one = instance(stores()[0], events);
      const userId = newUser();
      const { sid } = await signedIn(one.context, userId);
      const grants: string[] = [];
      for (let i = 0; i < 64; i++) grants.push(await newGrant(one.store));
      const answers = await Promise.all(grants.map((grantId) => attach(one, userId, sid, grantId)));
      expect(answers).toEqual(grants.map(() => true));
      // Applied in the order they came: the newest MAX are listed and alive, every other one ended.
      const kept = await listed(one.context, userId);
      expect(kept).toEqual(grants.slice(-MAX));
      expect(await alive(one.store, grants)).toEqual(kept);
      expect(endedEvents(events)).toHaveLength(grants.length - MAX);
      expect(one.writes.lost).toBe(0);
      expect(one.writes.landed).toBeLessThan(grants.length / 4);
    });

    it('50 code exchanges of one user at once all answer 200 and keep the bound; none loses a compare-and-set', async () => {
      const { store, writes } = countingIndexWrites(withRoundTrips(stores()[0]));
      const sentinel = makeSentinel(baseOptions({ store }));
      try {
        const first = await signInWithSession(sentinel);
        const codes = [];
        for (let i = 0; i < 50; i++) codes.push(await codeThroughSession(sentinel, MAIN_APP, first.cookie));
        const before = { ...writes };
        const responses = await Promise.all(codes.map(({ code, verifier }) => redeemCode(sentinel, MAIN_APP, code, verifier)));
        const grants = [first.tokens.refreshToken as string];
        for (const response of responses) {
          expect(response.status, response.body).toBe(200);
          grants.push((jsonOf(response).refresh_token as string).split('.')[0] as string);
        }
        grants[0] = (grants[0] as string).split('.')[0] as string;
        const index = await readUserIndex(contextOf(sentinel), ACCOUNT, USER_ID);
        const kept = index.sessions.flatMap((session) => session.grants.map((grant) => grant.grantId));
        expect(kept).toHaveLength(MAX);
        expect((await alive(store, grants)).sort()).toEqual([...kept].sort());
        expect(writes.lost - before.lost).toBe(0);
      } finally {
        await sentinel.close();
      }
    });

    it('two instances attaching 40 each at once keep every grant right; each ended grant reported once', async () => {
      const events: EventInput[] = [];
      const [first, second] = stores();
      const one = instance(first, events);
      const two = instance(second, events);
      const userId = newUser();
      const { sid } = await signedIn(one.context, userId);
      const grants: string[] = [];
      for (let i = 0; i < 80; i++) grants.push(await newGrant(one.store));
      const answers = await Promise.all(grants.map((grantId, i) => attach(i % 2 === 0 ? one : two, userId, sid, grantId)));
      expect(answers).toEqual(grants.map(() => true));
      const kept = await listed(two.context, userId);
      expect(kept).toHaveLength(MAX);
      // Every grant the index lists is alive, every other one ended (its record deleted), seen from either instance.
      expect(await alive(two.store, grants)).toEqual(grants.filter((grantId) => kept.includes(grantId)));
      expect(endedEvents(events)).toHaveLength(grants.length - MAX);
      // Each instance wrote its attaches together: a lost write is retried by the batch, not by each attach.
      expect(one.writes.landed + two.writes.landed).toBeLessThan(grants.length / 4);
    });

    it('two instances attaching 40 new apps each at once keep session.maxAppsPerSession; each ended grant reported once', async () => {
      const events: EventInput[] = [];
      const [first, second] = stores();
      const one = instance(first, events);
      const two = instance(second, events);
      const userId = newUser();
      const { sid } = await signedIn(one.context, userId);
      const grants: string[] = [];
      for (let i = 0; i < 80; i++) grants.push(await newGrant(one.store));
      const apps = grants.map((_, i) => `https://apps.example/${i}`);
      const answers = await Promise.all(grants.map((grantId, i) => attach(i % 2 === 0 ? one : two, userId, sid, grantId, apps[i], MAX, 8)));
      expect(answers).toEqual(grants.map(() => true));
      const index = await readUserIndex(two.context, ACCOUNT, userId);
      const kept = index.sessions.flatMap((session) => session.grants.map((grant) => grant.grantId));
      expect(kept).toHaveLength(8);
      expect(await alive(two.store, grants)).toEqual(grants.filter((grantId) => kept.includes(grantId)));
      const ended = endedEvents(events);
      expect(ended).toHaveLength(grants.length - 8);
      expect(new Set(ended.map((event) => (event as { clientId: string }).clientId)).size).toBe(grants.length - 8);
      for (const event of ended) expect(event).toMatchObject({ reason: 'session-apps-limit' });
    });

    it('an ending queued among attaches: those before it are ended with the session, those after it refused', async () => {
      const events: EventInput[] = [];
      const one = instance(stores()[0], events);
      const userId = newUser();
      const { sid, sessionDigest } = await signedIn(one.context, userId);
      const grants: string[] = [];
      for (let i = 0; i < 40; i++) grants.push(await newGrant(one.store));
      const before = grants.slice(0, 20).map((grantId) => attach(one, userId, sid, grantId));
      const ending = endIndexedSession(one.context, ACCOUNT, userId, sessionDigest);
      const after = grants.slice(20).map((grantId) => attach(one, userId, sid, grantId));
      expect(await Promise.all(before)).toEqual(grants.slice(0, 20).map(() => true));
      expect(await ending).toEqual({ sid, authTime: expect.any(Number), clientIds: [APP_A] });
      expect(await Promise.all(after)).toEqual(grants.slice(20).map(() => false));
      // The session is gone with every grant attached to it; the refused ones are their callers' to end.
      expect((await readUserIndex(one.context, ACCOUNT, userId)).sessions).toEqual([]);
      expect(await alive(one.store, grants)).toEqual(grants.slice(20));
      expect(one.writes.lost).toBe(0);
    });

    it('two instances ending the same session at once: the one whose write loses finds it ended and goes on with the rest', async () => {
      const events: EventInput[] = [];
      const [first, second] = stores();
      const two = instance(second, events);
      // Instance one's first index write waits until instance two has ended the same session: it loses its
      // compare-and-set and plans again against an index without that session.
      let before: (() => Promise<unknown>) | null = null;
      const held: Store = new Proxy(first, {
        get(target, property) {
          if (property === 'swap') {
            return async (entries: Parameters<Store['swap']>[0]) => {
              const wait = before;
              before = null;
              if (wait !== null) await wait();
              return target.swap(entries);
            };
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const one = instance(held, events);
      const userId = newUser();
      const a = await signedIn(two.context, userId);
      const b = await signedIn(two.context, userId);
      const grants = [await newGrant(two.store), await newGrant(two.store)] as [string, string];
      expect(await attach(two, userId, a.sid, grants[0])).toBe(true);
      expect(await attach(two, userId, b.sid, grants[1])).toBe(true);
      let endedByTwo: unknown;
      before = async () => {
        endedByTwo = await endIndexedSession(two.context, ACCOUNT, userId, a.sessionDigest);
      };
      // "Sign out everywhere" on instance one: session a was ended by two meanwhile, b is ended by one.
      expect(await endAllUserSessions(one.context, ACCOUNT, userId)).toBe(1);
      expect(endedByTwo).toEqual({ sid: a.sid, authTime: expect.any(Number), clientIds: [APP_A] });
      expect(one.writes.lost).toBe(1);
      expect((await readUserIndex(one.context, ACCOUNT, userId)).sessions).toEqual([]);
      expect(await alive(one.store, grants)).toEqual([]);
      // Ending it again, once the session is gone from the index: nothing to end, no error.
      expect(await endIndexedSession(one.context, ACCOUNT, userId, a.sessionDigest)).toBeNull();
    });

    it('a store failing to end an old grant rejects only the attach that needed it; the rest of its batch is written', async () => {
      const events: EventInput[] = [];
      const inner = stores()[0];
      let failing: string | null = null;
      const failingStore: Store = new Proxy(inner, {
        get(target, property) {
          if (property === 'delete') {
            return (key: string) => (key === failing ? Promise.reject(new Error('store down')) : target.delete(key));
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const one = instance(failingStore, events);
      const userId = newUser();
      const { sid } = await signedIn(one.context, userId);
      const [a0, b0, x, a1, b1, b2] = [
        await newGrant(one.store),
        await newGrant(one.store),
        await newGrant(one.store),
        await newGrant(one.store),
        await newGrant(one.store),
        await newGrant(one.store),
      ] as string[];
      // One grant per app: each further attach of an app ends its previous grant first.
      expect(await attach(one, userId, sid, a0 as string, APP_A, 1)).toBe(true);
      expect(await attach(one, userId, sid, b0 as string, APP_B, 1)).toBe(true);
      failing = grantKey(a0 as string);
      // x goes first alone; a1, b1 and b2 queue behind it and are planned together: a1 cannot end a0.
      const answers = await Promise.allSettled([
        attach(one, userId, sid, x as string, APP_C, 1),
        attach(one, userId, sid, a1 as string, APP_A, 1),
        attach(one, userId, sid, b1 as string, APP_B, 1),
        attach(one, userId, sid, b2 as string, APP_B, 1),
      ]);
      expect(answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : (answer.reason as Error).message))).toEqual([
        true,
        'store down',
        true,
        true,
      ]);
      expect(await listed(one.context, userId, APP_A)).toEqual([a0]);
      expect(await listed(one.context, userId, APP_B)).toEqual([b2]);
      expect(await listed(one.context, userId, APP_C)).toEqual([x]);
      // a1 is alive but not listed: its caller was rejected and ends it (authorization-code-grant.ts `joinSession`).
      expect(await alive(one.store, [a0, b0, x, a1, b1, b2] as string[])).toEqual([a0, x, a1, b2]);
      expect(endedEvents(events)).toEqual([
        { type: 'grant.ended', accountId: ACCOUNT, clientId: APP_B, userId, reason: 'session-app-limit' },
        { type: 'grant.ended', accountId: ACCOUNT, clientId: APP_B, userId, reason: 'session-app-limit' },
      ]);
      expect(one.writes.lost).toBe(0);
      // Once the store answers again, the next attach of the app ends a0 as it should.
      failing = null;
      const a2 = await newGrant(one.store);
      expect(await attach(one, userId, sid, a2, APP_A, 1)).toBe(true);
      expect(await listed(one.context, userId, APP_A)).toEqual([a2]);
      expect(await alive(one.store, [a0 as string])).toEqual([]);
    });
  });
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('index-contention', 'RedisStore (two instances: two RedisStore objects, one prefix)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
