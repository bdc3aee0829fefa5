/**
 * Back-channel logout delivery (OpenID Connect Back-Channel Logout 1.0) on MemoryStore, with real receivers: node:http
 * servers on loopback that validate every logout token per §2.6 with jose. Two apps in one session get one token
 * each, a third app outside it gets none; retries on 503; a hanging app; a 400 that is not retried; a store failing
 * while a session ends. The shared-Redis and cluster runs (restarts, two instances) are in
 * logout-delivery-redis.test.ts.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  hashClientSecret,
  MemoryAppStore,
  MemoryStore,
  type Sentinel,
  type SentinelEvent,
  type SentinelOptions,
  type Store,
} from '../src/index.js';
import type { QueuedJob } from '../src/stores/store.js';
import { MAX_IN_FLIGHT_PER_APP } from '../src/logout/delivery-worker.js';
import { ACCOUNT_PATH, call } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import {
  APP_B,
  appEntry,
  type FlowApp,
  MAIN_APP,
  sessionWorks,
  signInThroughSession,
  signInWithSession,
  tokenStanding,
  APP_C,
} from './helpers/logout-flow.js';
import { type LogoutReceiver, type Script, startReceiver } from './helpers/logout-receiver.js';

const ENDED = { guard: false, introspection: false, refresh: false };
const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

interface Setup {
  sentinel: Sentinel;
  events: SentinelEvent[];
  errors: unknown[];
  receivers: Record<'a' | 'b' | 'c', LogoutReceiver>;
}

/** Three apps, each with its own receiver (scripted), on one service. */
async function setUp(scripts: Partial<Record<'a' | 'b' | 'c', Script>> = {}, overrides: Partial<SentinelOptions> = {}): Promise<Setup> {
  let sentinel: Sentinel | undefined;
  const jwks = () => (sentinel as Sentinel).jwks();
  const receivers = {
    a: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, jwks, script: scripts.a }),
    b: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: APP_B.clientId, jwks, script: scripts.b }),
    c: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: APP_C.clientId, jwks, script: scripts.c }),
  };
  running.push(...Object.values(receivers));
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const base = baseOptions();
  const apps = (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receivers.a.uri } : app));
  const extra = [appEntry(APP_B, { backchannelLogoutUri: receivers.b.uri }), appEntry(APP_C, { backchannelLogoutUri: receivers.c.uri })];
  sentinel = makeSentinel({
    apps: [...apps, ...extra],
    clientJwks: { allowPrivateAddresses: true },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  running.push(sentinel);
  return { sentinel, events, errors, receivers };
}

/**
 * A service whose apps come from a host registry holding `app` alone, with a back-channel logout receiver of its own
 * (both closed after the test).
 */
async function hostRegistryWith(app: FlowApp): Promise<{ sentinel: Sentinel; receiver: LogoutReceiver; registry: MemoryAppStore }> {
  let sentinel: Sentinel | undefined;
  const receiver = await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: app.clientId, jwks: () => (sentinel as Sentinel).jwks() });
  running.push(receiver);
  const registry = new MemoryAppStore([
    {
      accountId: ACCOUNT,
      clientId: app.clientId,
      clientSecretHash: hashClientSecret(app.clientSecret as string),
      redirectUris: [app.redirectUri],
      grantTypes: ['authorization_code', 'refresh_token'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      backchannelLogoutUri: receiver.uri,
    },
  ]);
  sentinel = makeSentinel({ apps: [], appStore: registry, clientJwks: { allowPrivateAddresses: true } });
  running.push(sentinel);
  return { sentinel, receiver, registry };
}

function logoutEvents(events: SentinelEvent[]) {
  return events
    .filter((event) => event.type === 'logout.delivered' || event.type === 'logout.failed')
    .map((event) => ({ type: event.type, clientId: event.clientId, attempts: (event as { attempts: number }).attempts }));
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('back-channel logout delivery', () => {
  it('two apps in one session get one valid logout token each; an app outside the session gets none', async () => {
    const { sentinel, events, receivers } = await setUp();
    const first = await signInWithSession(sentinel);
    const b = await signInThroughSession(sentinel, APP_B, first.cookie);
    const other = await signInWithSession(sentinel, APP_C);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid })).toBe(true);
    await receivers.a.waitFor(1);
    await receivers.b.waitFor(1);
    await until(() => logoutEvents(events).length === 2, 'two logout events');
    for (const receiver of [receivers.a, receivers.b]) {
      expect(receiver.problems).toEqual([]);
      expect(receiver.received).toEqual([{ sid: first.tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    }
    expect(logoutEvents(events).sort((x, y) => x.clientId!.localeCompare(y.clientId!))).toEqual(
      [
        { type: 'logout.delivered', clientId: CLIENT_ID, attempts: 1 },
        { type: 'logout.delivered', clientId: APP_B.clientId, attempts: 1 },
      ].sort((x, y) => x.clientId.localeCompare(y.clientId)),
    );
    // The events name the app and the attempts, never the token.
    expect(JSON.stringify(events)).not.toContain(receivers.a.received[0]?.jti);
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
    // App C signed in through another session: it is told nothing, and that session ends with its own token.
    expect(receivers.c.received).toEqual([]);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    await receivers.c.waitFor(1);
    expect(receivers.c.received).toEqual([{ sid: other.tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    expect(receivers.c.problems).toEqual([]);
    expect(receivers.a.received).toHaveLength(1);
    expect(receivers.b.received).toHaveLength(1);
  });

  it("runs a delivery outside the async context of the request that ended the session (a host's request logger)", async () => {
    const requestScope = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const { sentinel, receivers } = await setUp(
      {},
      {
        onEvent: (event) => {
          if (event.type === 'logout.delivered') seen.push(requestScope.getStore());
        },
      },
    );
    const first = await signInWithSession(sentinel);
    await requestScope.run('request-that-ended-it', () => sentinel.endSession({ accountId: ACCOUNT, sid: first.tokens.sid }));
    await receivers.a.waitFor(1);
    await until(() => seen.length === 1, 'the delivery event');
    expect(seen).toEqual([undefined]);
  });

  it('an app of the host registry named by an https client_id gets its token while metadata documents are off', async () => {
    // An OpenID Federation entity id, say: only with documents on is an https client_id one nobody registered.
    const app: FlowApp = { ...APP_B, clientId: 'https://rp.example.com' };
    const { sentinel, receiver } = await hostRegistryWith(app);
    expect(sentinel.config.clientIdMetadataDocuments.enabled).toBe(false);
    const { tokens } = await signInWithSession(sentinel, app);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
    await receiver.waitFor(1);
    expect(receiver.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    expect(receiver.problems).toEqual([]);
  });

  it('a disabled app is still told when a session it got tokens through ends: its own session with the user ends too', async () => {
    const { sentinel, receiver, registry } = await hostRegistryWith(APP_B);
    const { tokens } = await signInWithSession(sentinel, APP_B);
    expect(registry.disableApp(ACCOUNT, APP_B.clientId)).toBe(true);
    expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
    await receiver.waitFor(1);
    expect(receiver.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    expect(receiver.problems).toEqual([]);
    // Told, and still disabled: nothing else of the service finds it. Enabled again, it finds its grant ended.
    expect(registry.findApp(ACCOUNT, APP_B.clientId)).toBeNull();
    expect(registry.enableApp(ACCOUNT, APP_B.clientId)).toBe(true);
    expect(await tokenStanding(sentinel, tokens, APP_B)).toEqual(ENDED);
  });

  it('retries on 503 and delivers on the third attempt, each with a fresh token', async () => {
    const { sentinel, events, receivers } = await setUp({ a: (n) => (n <= 2 ? 503 : 200) });
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await receivers.a.waitFor(3, 30_000);
    await until(() => logoutEvents(events).length === 1, 'the delivered event', 5000);
    expect(receivers.a.problems).toEqual([]);
    expect(receivers.a.received.map((entry) => entry.answered)).toEqual([503, 503, 200]);
    expect(new Set(receivers.a.received.map((entry) => entry.jti)).size).toBe(3);
    expect(logoutEvents(events)).toEqual([{ type: 'logout.delivered', clientId: CLIENT_ID, attempts: 3 }]);
  }, 40_000);

  it('retries a 429 and a 408 (the app or its gateway busy, not refusing the token) and delivers', async () => {
    const { sentinel, events, receivers } = await setUp({ a: (n) => (n === 1 ? 429 : n === 2 ? 408 : 200) });
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await receivers.a.waitFor(3, 30_000);
    await until(() => logoutEvents(events).length === 1, 'the delivered event', 5000);
    expect(receivers.a.problems).toEqual([]);
    expect(receivers.a.received.map((entry) => entry.answered)).toEqual([429, 408, 200]);
    expect(logoutEvents(events)).toEqual([{ type: 'logout.delivered', clientId: CLIENT_ID, attempts: 3 }]);
  }, 40_000);

  it('an app that answers 400 gets no retry, and a logout.failed event', async () => {
    const { sentinel, events, receivers } = await setUp({ a: () => 400 });
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await until(() => logoutEvents(events).length === 1, 'the failed event');
    const failed = events.find((event) => event.type === 'logout.failed');
    expect(failed).toMatchObject({ type: 'logout.failed', clientId: CLIENT_ID, userId: USER_ID, attempts: 1, outcome: 'failure' });
    expect((failed as { reason: string }).reason).toContain('400');
    // Past the first retry's due time (2 to 2.2 s): a 503 would have been tried again by now.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(receivers.a.received.map((entry) => entry.answered)).toEqual([400]);
  });

  // The last settle (the job ended: delivered, or failed for good) reached the store, but its answer was lost: the
  // job was gone from the queue, and the event that reports the outcome was never emitted, on any instance.
  it.each([
    ['delivered', 200, 'logout.delivered'],
    ['refused', 400, 'logout.failed'],
  ] as const)('reports a %s token though the answer to its last settle was lost', async (_case, status, type) => {
    let losing = true;
    class LosingSettle extends MemoryStore {
      override async settleJob(queue: string, id: string, lease: number, next: Omit<QueuedJob, 'id'> | null): Promise<boolean> {
        const settled = await super.settleJob(queue, id, lease, next);
        if (losing && next === null) {
          losing = false;
          throw new Error('settle reply lost');
        }
        return settled;
      }
    }
    const { sentinel, events, errors } = await setUp({ a: () => status }, { store: new LosingSettle() });
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await until(() => logoutEvents(events).length === 1, type);
    expect(logoutEvents(events)).toEqual([{ type, clientId: CLIENT_ID, attempts: 1 }]);
    expect(errors).toContainEqual(expect.objectContaining({ message: 'settle reply lost' }));
  });

  it('RP-initiated logout answers while an app hangs, and the other app is told meanwhile', async () => {
    const { sentinel, events, receivers } = await setUp({ b: (n) => (n === 1 ? 'hang' : 200) });
    const { cookie, tokens } = await signInWithSession(sentinel);
    await signInThroughSession(sentinel, APP_B, cookie);
    const response = await call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: tokens.idToken }),
      headers: { cookie: `sentinel_session=${cookie}` },
    });
    expect(response.status).toBe(200);
    // The answer came before any delivery finished: app B's attempt is still open (or not yet sent).
    expect(logoutEvents(events).filter((event) => event.clientId === APP_B.clientId)).toEqual([]);
    await receivers.a.waitFor(1);
    await receivers.b.waitFor(1);
    await until(() => logoutEvents(events).some((event) => event.clientId === CLIENT_ID), 'app A delivered');
    expect(logoutEvents(events).filter((event) => event.clientId === APP_B.clientId)).toEqual([]);
    // The hanging attempt is cut off at 5 s and retried; the second attempt is taken.
    await receivers.b.waitFor(2, 20_000);
    await until(() => logoutEvents(events).some((event) => event.clientId === APP_B.clientId), 'app B delivered');
    expect(logoutEvents(events).find((event) => event.clientId === APP_B.clientId)).toEqual({
      type: 'logout.delivered',
      clientId: APP_B.clientId,
      attempts: 2,
    });
    expect([...receivers.a.problems, ...receivers.b.problems]).toEqual([]);
  }, 30_000);

  it('an app that hangs holds at most its share of the delivery slots: the other app is told meanwhile', async () => {
    const { sentinel, receivers } = await setUp({ b: () => 'hang' });
    const sessions = 40;
    for (let i = 0; i < sessions; i++) {
      const { cookie } = await signInWithSession(sentinel);
      await signInThroughSession(sentinel, APP_B, cookie);
    }
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(sessions);
    await receivers.a.waitFor(sessions);
    // At most 16 of B's deliveries hang at once (its share, half of the 32 slots); the rest wait for them instead of
    // taking A's slots. (How many B received in all depends on how long A took: its retries start after 5 s.)
    expect(receivers.b.mostHanging).toBeGreaterThan(0);
    expect(receivers.b.mostHanging).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_APP);
    expect(receivers.a.problems).toEqual([]);
  }, 60_000);

  it("an app's deliveries share a few kept-alive connections instead of one each", async () => {
    const { sentinel, receivers } = await setUp();
    const sessions = 40;
    for (let i = 0; i < sessions; i++) await signInWithSession(sentinel);
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(sessions);
    await receivers.a.waitFor(sessions);
    expect(receivers.a.problems).toEqual([]);
    // At most the app's share of the slots open at once, each carrying several tokens (one each before keep-alive).
    expect(receivers.a.connections).toBeLessThanOrEqual(sessions / 2);
  });

  it('a backlog drains without claims going back: jobs of an app at its limit wait for its next slot', async () => {
    // Counts the jobs the loop puts back in the queue undelivered. Before the held jobs, every claim beyond an app's
    // eight slots went back for a second, so a backlog was claimed again and again and drained at a few per second.
    let putBack = 0;
    class CountingStore extends MemoryStore {
      override settleJob(...args: Parameters<MemoryStore['settleJob']>): ReturnType<MemoryStore['settleJob']> {
        if (args[3] !== null) putBack++;
        return super.settleJob(...args);
      }
    }
    const { sentinel, receivers, errors } = await setUp({}, { store: new CountingStore() });
    const sessions = 60;
    for (let i = 0; i < sessions; i++) {
      const { cookie } = await signInWithSession(sentinel);
      await signInThroughSession(sentinel, APP_B, cookie);
    }
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(sessions);
    await receivers.a.waitFor(sessions);
    await receivers.b.waitFor(sessions);
    expect(receivers.a.problems).toEqual([]);
    expect(receivers.b.problems).toEqual([]);
    expect(errors).toEqual([]);
    // Both apps answer at once, so no job needs a retry; what goes back is only a claim the held room could not take.
    expect(putBack).toBeLessThan(sessions / 4);
  }, 60_000);

  it('a store failing to queue the deliveries: 500 server_error and onError, the grants already gone; a retry delivers', async () => {
    let failQueue = true;
    class FailingQueueStore extends MemoryStore {
      override enqueueJobs(queue: string, jobs: Parameters<MemoryStore['enqueueJobs']>[1]): Promise<void> {
        return failQueue ? Promise.reject(new Error('store down')) : super.enqueueJobs(queue, jobs);
      }
    }
    const { sentinel, errors, receivers } = await setUp({}, { store: new FailingQueueStore() });
    const { cookie, tokens } = await signInWithSession(sentinel);
    const response = await call(sentinel, {
      path: `${ACCOUNT_PATH}/end_session`,
      query: new URLSearchParams({ id_token_hint: tokens.idToken }),
      headers: { cookie: `sentinel_session=${cookie}` },
    });
    expect(response.status).toBe(500);
    expect(response.body).toContain('server_error');
    expect(errors.map((error) => (error as Error).message)).toContain('store down');
    // Grants first: nothing of the session works although its deliveries could not be queued.
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    expect((await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).map((session) => session.sid)).toEqual([tokens.sid]);
    failQueue = false;
    expect(await sentinel.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(1);
    await receivers.a.waitFor(1);
    expect(receivers.a.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
  });

  it("a store failing to queue the deliveries: the user's retry of the same logout (same cookie) tells the app and unlists the session", async () => {
    let failQueue = true;
    class FailingQueueStore extends MemoryStore {
      override enqueueJobs(queue: string, jobs: Parameters<MemoryStore['enqueueJobs']>[1]): Promise<void> {
        return failQueue ? Promise.reject(new Error('store down')) : super.enqueueJobs(queue, jobs);
      }
    }
    const { sentinel, errors, receivers } = await setUp({}, { store: new FailingQueueStore() });
    const { cookie, tokens } = await signInWithSession(sentinel);
    const logout = () =>
      call(sentinel, {
        method: 'POST',
        path: `${ACCOUNT_PATH}/logout`,
        headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
      });
    expect((await logout()).status).toBe(500);
    expect(errors.map((error) => (error as Error).message)).toEqual(['store down']);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
    failQueue = false;
    // The session record outlived the failure, so the same cookie finds the session and finishes the ending.
    const retry = await logout();
    expect(retry.status).toBe(200);
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    expect(await sessionWorks(sentinel, cookie)).toBe(false);
    await receivers.a.waitFor(1);
    expect(receivers.a.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
  });

  it('a custom store without queue methods still delivers, from this process', async () => {
    const inner = new MemoryStore();
    const store: Store = {
      get: (key) => inner.get(key),
      set: (key, value, ttl) => inner.set(key, value, ttl),
      take: (key) => inner.take(key),
      delete: (key) => inner.delete(key),
      increment: (key, ttl) => inner.increment(key, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const { sentinel, receivers } = await setUp({}, { store });
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await receivers.a.waitFor(1);
    expect(receivers.a.problems).toEqual([]);
  });

  it('disconnecting one app tells that app, once per session it leaves, and no other', async () => {
    const { sentinel, receivers } = await setUp();
    const first = await signInWithSession(sentinel);
    await signInThroughSession(sentinel, APP_B, first.cookie);
    const second = await signInWithSession(sentinel);
    expect(await sentinel.revokeUserGrants({ accountId: ACCOUNT, userId: USER_ID, clientId: CLIENT_ID })).toBe(2);
    await receivers.a.waitFor(2);
    expect(receivers.a.received.map((entry) => entry.sid).sort()).toEqual([first.tokens.sid, second.tokens.sid].sort());
    expect(receivers.b.received).toEqual([]);
  });

  it('the address guard is checked again at delivery: a loopback URI from the registry is never posted to', async () => {
    const receiver = await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, jwks: () => ({ keys: [] }) });
    running.push(receiver);
    const events: SentinelEvent[] = [];
    // A registry row changed behind the service's back (written by hand): registration would have refused it.
    const registry = new MemoryAppStore(makeSentinel().config.apps);
    const plain = registry.findApp.bind(registry);
    registry.findApp = (accountId, clientId) => {
      const app = plain(accountId, clientId);
      return app === null || clientId !== CLIENT_ID ? app : { ...app, backchannelLogoutUri: receiver.uri };
    };
    const sentinel = makeSentinel({ apps: [], appStore: registry, onEvent: (event) => events.push(event) });
    running.push(sentinel);
    const { tokens } = await signInWithSession(sentinel);
    await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid });
    await until(() => logoutEvents(events).length === 1, 'the failed event');
    const failed = events.find((event) => event.type === 'logout.failed') as { reason: string; attempts: number };
    expect(failed.reason).toMatch(/private, loopback or link-local/);
    expect(failed.attempts).toBe(1);
    expect(receiver.received).toEqual([]);
  });
});
