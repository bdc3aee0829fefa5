/**
 * A logout queued while an earlier delivery of the same session to the same app is still in flight: the app took
 * the first token (and ended its local sessions of the sid), then signed the user in again through the same browser
 * session before answering. When the session ends, the app must get another token, or its new local session outlives
 * the session it came from. The job's id is the same (a digest of session and app), so queueing it again must make
 * the claimed job due once more rather than leave it to the claimer that is about to settle it.
 *
 * On MemoryStore and on one shared Redis (the script of RedisStore's queue); the store contract
 * (helpers/store-contract.ts) checks the queue step itself on Redis Cluster too. No Redis: that half is skipped with
 * the reason printed, unless SENTINEL_REQUIRE_REDIS=1, where it fails.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelEvent, Store } from '../src/index.js';
import { MemoryStore } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { MAIN_APP, signInThroughSession, signInWithSession } from './helpers/logout-flow.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

/** How long the app takes to answer a logout token after it has taken it (and acted on it). */
const ANSWER_AFTER_MS = 1200;

interface Backend {
  name: string;
  skip: boolean;
  open(): Promise<{ store: Store; close(): Promise<void> }>;
}

const redis = await sharedRedis('logout-redelivery');
const backends: Backend[] = [
  { name: 'MemoryStore', skip: false, open: async () => ({ store: new MemoryStore(), close: async () => {} }) },
  {
    name: 'one shared Redis',
    skip: redis.skip,
    async open() {
      requireAvailable(redis);
      const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
      const prefix = `sentinel-redelivery-test:${randomBytes(8).toString('hex')}:`;
      return {
        store: new RedisStore(client, { prefix }),
        async close() {
          await deleteByPrefix(client, prefix);
          client.disconnect();
        },
      };
    },
  },
];

/** A receiver that records each token's sid as it takes it, and answers only {@link ANSWER_AFTER_MS} later. */
async function slowReceiver(): Promise<{ uri: string; sids: string[]; close(): Promise<void> }> {
  const sids: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token') ?? '';
      sids.push(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).sid);
      setTimeout(() => response.writeHead(200).end(), ANSWER_AFTER_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logout`;
  return { uri, sids, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(`a logout queued during a delivery of the same session and app, on ${backend.name}`, () => {
    const running: { close(): Promise<unknown> }[] = [];
    afterEach(async () => {
      for (const item of running.splice(0).reverse()) await item.close();
    });

    it('disconnect the app, the app signs in again through the session, the session ends: a second token follows', async () => {
      const receiver = await slowReceiver();
      running.push(receiver);
      const opened = await backend.open();
      running.push(opened);
      const events: SentinelEvent[] = [];
      const base = baseOptions();
      const sentinel: Sentinel = makeSentinel({
        apps: (base.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receiver.uri } : app)),
        store: opened.store,
        clientJwks: { allowPrivateAddresses: true },
        onEvent: (event) => events.push(event),
      });
      running.push(sentinel);
      const { cookie, tokens } = await signInWithSession(sentinel);
      // "Disconnect this app": the app takes a logout token for the session, and answers a little later.
      expect(await sentinel.revokeUserGrants({ accountId: ACCOUNT, userId: USER_ID, clientId: CLIENT_ID })).toBe(1);
      await until(() => receiver.sids.length === 1, 'the first logout token');
      // Meanwhile the user signs in to the app again through the same browser session, and then signs out of it.
      const again = await signInThroughSession(sentinel, MAIN_APP, cookie);
      expect(again.sid).toBe(tokens.sid);
      expect(await sentinel.endSession({ accountId: ACCOUNT, sid: tokens.sid })).toBe(true);
      // The first delivery is still unanswered: the second is queued behind it, not dropped as its duplicate.
      await until(() => receiver.sids.length === 2, 'a second logout token for the new sign-in');
      expect(receiver.sids).toEqual([tokens.sid, tokens.sid]);
      await until(() => events.filter((event) => event.type === 'logout.delivered').length === 2, 'both deliveries settled');
    });
  });
}
