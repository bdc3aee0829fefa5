/**
 * Back-channel logout deliveries waiting in a shared RedisStore, on one Redis and on a 3-master Redis Cluster, with
 * real receivers (node:http on loopback, validating every token per §2.6 with jose):
 * - an instance that stops between ending a session and delivering: another instance on the same store delivers;
 * - two instances polling one queue: each (session, app) delivered once, not once per instance;
 * - after each trigger (endSession, endUserSessions, RP-initiated logout) the guard, introspection and refresh refuse
 *   the session's tokens on both instances.
 *
 * No Redis: skipped with the reason printed, unless SENTINEL_REQUIRE_REDIS=1, where the suite fails.
 */
import { randomBytes } from 'node:crypto';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelEvent, SentinelOptions } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { readUserIndex } from '../src/sessions/session-index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT_PATH, call, jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import {
  APP_B,
  appEntry,
  codeThroughSession,
  MAIN_APP,
  redeemCode,
  signInThroughSession,
  signInWithSession,
  tokensOf,
  tokenStanding,
} from './helpers/logout-flow.js';
import { type LogoutReceiver, startReceiver } from './helpers/logout-receiver.js';
import { clusterAvailability, connectCluster, type RunningCluster, startCluster } from './helpers/redis-cluster.js';
import { type Availability, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const ENDED = { guard: false, introspection: false, refresh: false };
const LIVE = { guard: true, introspection: true, refresh: true };
const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;

interface Backend {
  name: string;
  available: Availability;
  connect(): Promise<{ client: Redis | Cluster; cleanup(prefix: string): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'one shared Redis',
    available: await sharedRedis('logout-delivery-redis'),
    async connect() {
      const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      return {
        client,
        async cleanup(prefix) {
          const keys = await client.keys(`${prefix}*`);
          for (const key of keys) await client.del(key);
          client.disconnect();
        },
      };
    },
  },
  {
    name: 'a 3-master Redis Cluster',
    available: clusterAvailability('logout-delivery-redis-cluster'),
    async connect() {
      const cluster: RunningCluster = await startCluster();
      const client = await connectCluster(cluster);
      return {
        client,
        async cleanup(prefix) {
          for (const node of client.nodes('master')) {
            for (const key of await node.keys(`${prefix}*`)) await node.del(key);
          }
          await client.quit();
          await cluster.stop();
        },
      };
    },
  },
];

async function until(check: () => boolean, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

for (const backend of backends) {
  describe.skipIf(backend.available.skip)(`back-channel logout on ${backend.name}`, () => {
    const prefix = `sentinel-logout-test:${randomBytes(8).toString('hex')}:`;
    let connection: Awaited<ReturnType<Backend['connect']>> | undefined;
    const running: { close(): Promise<void> }[] = [];
    let receivers: { a: LogoutReceiver; b: LogoutReceiver };

    beforeAll(async () => {
      requireAvailable(backend.available);
      connection = await backend.connect();
    }, 60_000);

    afterAll(async () => {
      await connection?.cleanup(prefix);
    });

    afterEach(async () => {
      for (const item of running.splice(0).reverse()) await item.close();
      const client = (connection as { client: Redis }).client;
      // Every delivery of the case settled: nothing left in the queue for the next case's receivers.
      expect(await client.zcard(`${prefix}queue:{logout}:due`)).toBe(0);
    });

    /** One instance of the deployment: its own RedisStore over the shared client and prefix, the same apps. */
    function instance(events: SentinelEvent[] = [], session?: SentinelOptions['session']): Sentinel {
      const base = baseOptions();
      const apps = (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receivers.a.uri } : app));
      const sentinel = makeSentinel({
        apps: [...apps, appEntry(APP_B, { backchannelLogoutUri: receivers.b.uri })],
        store: new RedisStore((connection as { client: Redis }).client, { prefix }),
        clientJwks: { allowPrivateAddresses: true },
        onEvent: (event) => events.push(event),
        ...(session === undefined ? {} : { session }),
      });
      running.push(sentinel);
      return sentinel;
    }

    async function startReceivers(): Promise<void> {
      // Both instances sign with the same configured key, so either one's JWKS validates.
      const jwks = () => makeSentinel().jwks();
      receivers = {
        a: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: CLIENT_ID, jwks }),
        b: await startReceiver({ issuer: ISSUER_OF_ACCOUNT, clientId: APP_B.clientId, jwks }),
      };
      running.push(receivers.a, receivers.b);
    }

    it('an instance that stops between ending and delivering loses nothing: another instance delivers', async () => {
      await startReceivers();
      const first = instance();
      const { cookie, tokens } = await signInWithSession(first);
      const b = await signInThroughSession(first, APP_B, cookie);
      // The first instance's delivery loop is gone (a crash right after the ending request, as far as delivery goes).
      await first.close();
      expect(await first.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
      // Nothing can deliver yet: no instance polls.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect([...receivers.a.received, ...receivers.b.received]).toEqual([]);
      const events: SentinelEvent[] = [];
      const second = instance(events);
      await receivers.a.waitFor(1);
      await receivers.b.waitFor(1);
      expect(receivers.a.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
      expect(receivers.b.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
      expect([...receivers.a.problems, ...receivers.b.problems]).toEqual([]);
      await until(() => events.filter((event) => event.type === 'logout.delivered').length === 2, 'two delivered events');
      for (const sentinel of [first, second]) {
        expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(ENDED);
        expect(await tokenStanding(sentinel, b, APP_B)).toEqual(ENDED);
      }
    }, 30_000);

    it('a delivery cut off by close() is put back and delivered by the next instance', async () => {
      let hang = true;
      await startReceivers();
      await receivers.a.close();
      receivers.a = await startReceiver({
        issuer: ISSUER_OF_ACCOUNT,
        clientId: CLIENT_ID,
        jwks: () => makeSentinel().jwks(),
        script: () => (hang ? 'hang' : 200),
      });
      running.push(receivers.a);
      const first = instance();
      const { tokens } = await signInWithSession(first);
      await first.endSession({ accountId: ACCOUNT, sid: tokens.sid });
      await receivers.a.waitFor(1);
      await first.close();
      hang = false;
      const events: SentinelEvent[] = [];
      instance(events);
      await receivers.a.waitFor(2);
      await until(() => events.some((event) => event.type === 'logout.delivered'), 'the delivered event');
      expect(receivers.a.received.map((entry) => entry.answered)).toEqual([0, 200]);
      expect(receivers.a.problems).toEqual([]);
    }, 30_000);

    it('two instances polling one queue deliver each logout once', async () => {
      await startReceivers();
      const eventsOne: SentinelEvent[] = [];
      const eventsTwo: SentinelEvent[] = [];
      const one = instance(eventsOne);
      const two = instance(eventsTwo);
      const sids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const signedIn = i % 2 === 0 ? one : two;
        const { cookie, tokens } = await signInWithSession(signedIn);
        await signInThroughSession(signedIn, APP_B, cookie);
        sids.push(tokens.sid);
      }
      // Half ended one by one on the other instance, the rest all at once ("sign out everywhere").
      for (const sid of sids.slice(0, 6)) expect(await two.endSession({ accountId: ACCOUNT, sid })).toBe(true);
      expect(await one.endUserSessions({ accountId: ACCOUNT, userId: USER_ID })).toBe(6);
      await receivers.a.waitFor(12);
      await receivers.b.waitFor(12);
      const delivered = () => [...eventsOne, ...eventsTwo].filter((event) => event.type === 'logout.delivered');
      const seen = () =>
        JSON.stringify(
          [...eventsOne, ...eventsTwo]
            .filter((e) => e.type.startsWith('logout'))
            .map((e) => [e.type, e.clientId, (e as { attempts: number }).attempts]),
        );
      await until(
        () => delivered().length >= 24,
        () => `24 delivered events: ${seen()} / a ${JSON.stringify(receivers.a.received)} b ${JSON.stringify(receivers.b.received)}`,
      );
      // Past another poll of both instances: nothing more arrives.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const receiver of [receivers.a, receivers.b]) {
        expect(receiver.problems).toEqual([]);
        expect(receiver.received.map((entry) => entry.sid).sort()).toEqual([...sids].sort());
      }
      expect(delivered()).toHaveLength(24);
    }, 60_000);

    it('parallel exchanges through one session on two instances keep the bound; every grant not listed is ended', async () => {
      await startReceivers();
      const max = 3;
      const events: SentinelEvent[] = [];
      const one = instance(events, { maxGrantsPerApp: max });
      const two = instance(events, { maxGrantsPerApp: max });
      const { cookie, tokens } = await signInWithSession(one);
      const pending = [];
      for (let i = 0; i < 3 * max; i++) pending.push(await codeThroughSession(one, MAIN_APP, cookie));
      const responses = await Promise.all(
        pending.map(({ code, verifier }, i) => redeemCode(i % 2 === 0 ? one : two, MAIN_APP, code, verifier)),
      );
      const issued = [tokens];
      for (const response of responses) {
        expect(response.status, response.body).toBe(200);
        issued.push(tokensOf(MAIN_APP, jsonOf(response)));
      }
      const index = await readUserIndex(contextOf(two), ACCOUNT, USER_ID);
      const listed = index.sessions.flatMap((session) => session.grants.map((grant) => grant.grantId));
      expect(listed.length).toBeLessThanOrEqual(max);
      const gid = (appTokens: (typeof issued)[number]) => (appTokens.refreshToken as string).split('.')[0] as string;
      for (const appTokens of issued) {
        const standing = listed.includes(gid(appTokens)) ? LIVE : ENDED;
        for (const sentinel of [two, one]) expect(await tokenStanding(sentinel, appTokens, MAIN_APP), gid(appTokens)).toEqual(standing);
      }
      expect(events.filter((event) => event.type === 'grant.ended')).toHaveLength(issued.length - listed.length);
      // Ending the session ends what it kept (and leaves no session of the user to the next case).
      expect(await two.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
      for (const appTokens of issued) expect(await tokenStanding(one, appTokens, MAIN_APP)).toEqual(ENDED);
      await receivers.a.waitFor(1);
      await until(() => events.some((event) => event.type === 'logout.delivered'), 'the delivered event');
    }, 60_000);

    it('after each trigger the guard, introspection and refresh refuse on both instances', async () => {
      await startReceivers();
      const events: SentinelEvent[] = [];
      const one = instance(events);
      const two = instance(events);
      const triggers: [string, (sid: string, cookie: string, idToken: string) => Promise<void>][] = [
        ['endSession', async (sid) => void (await two.endSession({ accountId: ACCOUNT, sid }))],
        ['endUserSessions', async () => void (await two.endUserSessions({ accountId: ACCOUNT, userId: USER_ID }))],
        [
          'RP-initiated logout',
          async (_sid, cookie, idToken) => {
            const response = await call(two, {
              path: `${ACCOUNT_PATH}/end_session`,
              query: new URLSearchParams({ id_token_hint: idToken }),
              headers: { cookie: `sentinel_session=${cookie}` },
            });
            expect(response.status).toBe(200);
          },
        ],
      ];
      let expected = 0;
      for (const [name, trigger] of triggers) {
        const { cookie, tokens } = await signInWithSession(one);
        const b = await signInThroughSession(one, APP_B, cookie);
        // Verified (and cached) on both instances before the ending.
        expect(await tokenStanding(one, tokens, MAIN_APP), name).toEqual(LIVE);
        expect(await tokenStanding(two, b, APP_B), name).toEqual(LIVE);
        await trigger(tokens.sid, cookie, tokens.idToken);
        for (const sentinel of [one, two]) {
          expect(await tokenStanding(sentinel, tokens, MAIN_APP), name).toEqual(ENDED);
          expect(await tokenStanding(sentinel, b, APP_B), name).toEqual(ENDED);
        }
        expected++;
        await receivers.a.waitFor(expected);
        await receivers.b.waitFor(expected);
        expect(receivers.a.received.at(-1)?.sid, name).toBe(tokens.sid);
      }
      expect([...receivers.a.problems, ...receivers.b.problems]).toEqual([]);
      await until(() => events.filter((event) => event.type === 'logout.delivered').length === 6, 'six delivered events');
    }, 60_000);
  });
}
