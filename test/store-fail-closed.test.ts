/**
 * Fail-closed grants against a real, private `redis-server` that is restarted empty, paused in the middle of a
 * write, and run out of memory — with the ioredis client built from `redisClientOptions()`:
 *
 * - no revoked token is ever accepted again, and after an empty restart no user token from before it is;
 * - a revoke after the data loss answers 200 and its token stays refused;
 * - no retry after a failed rotation or exchange is reported as reuse or replay, and nothing is revoked by it;
 * - the service works again ≤ 0.5 s after Redis is back;
 * - `onError` receives the cause of every 500, with no code, token or secret in it.
 *
 * No redis-server binary: skipped with the reason printed, unless SENTINEL_REQUIRE_REDIS=1, where it fails.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelEvent, SentinelResponse, Store } from '../src/index.js';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { jsonOf, postForm, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { PrivateRedis, redisServerBinary, requireAvailable } from './helpers/redis.js';
import { codeFor } from './helpers/oauth.js';

const binary = redisServerBinary('store-fail-closed');
/** How soon after redis-server is back the service must work again. */
const RECOVERY_LIMIT_MS = 500;

type Tokens = { access_token: string; refresh_token: string };

/** A RedisStore that can pause its Redis right before the next swap: the write then runs only on resume. */
function pausingStore(inner: Store, redis: PrivateRedis): Store & { pauseBeforeSwap: boolean } {
  const store = {
    pauseBeforeSwap: false,
    get: (key: string) => inner.get(key),
    set: (key: string, value: string, ttl: number) => inner.set(key, value, ttl),
    take: (key: string) => inner.take(key),
    delete: (key: string) => inner.delete(key),
    increment: (key: string, ttl: number) => inner.increment(key, ttl),
    swap: (entries: Parameters<Store['swap']>[0]) => {
      if (store.pauseBeforeSwap) {
        store.pauseBeforeSwap = false;
        redis.pause();
      }
      return inner.swap(entries);
    },
  };
  return store;
}

describe.skipIf(binary.skip)('fail-closed grants on a private Redis', () => {
  const redis = new PrivateRedis();
  let client: Redis;
  let store: ReturnType<typeof pausingStore>;
  let sentinel: Sentinel;
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  /** Every secret handed out, to check that none reaches onError. */
  const secrets: string[] = [CLIENT_SECRET];

  const exchange = (code: string) =>
    counted(
      postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      ),
    );
  const refresh = (token: string) => counted(useRefreshToken(sentinel, token));
  const revoke = (token: string) =>
    counted(
      postForm(
        sentinel,
        `${TOKEN_PATH}/revoke`,
        new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      ),
    );
  const accepted = (token: string) =>
    sentinel.verifyAccessToken(token, { accountId: ACCOUNT }).then(
      () => true,
      () => false,
    );
  const newCode = async () => {
    const code = await codeFor(sentinel);
    secrets.push(code);
    return code;
  };
  const signIn = async (): Promise<Tokens> => {
    const response = await exchange(await newCode());
    expect(response.status).toBe(200);
    const tokens = jsonOf(response) as Tokens;
    secrets.push(tokens.access_token, tokens.refresh_token);
    return tokens;
  };
  /** 5xx answers seen by the tests; each must have its cause in onError. */
  let serverErrors = 0;
  const counted = async (pending: Promise<SentinelResponse>): Promise<SentinelResponse> => {
    const response = await pending;
    if (response.status >= 500) serverErrors++;
    return response;
  };
  const flagged = () => events.filter((event) => event.type === 'refresh.reused' || event.type === 'code.replayed');

  /** Waits until the store answers again; returns how long that took. */
  async function recovery(): Promise<number> {
    const started = performance.now();
    for (;;) {
      const response = await exchange(await newCode().catch(() => 'unusable'));
      if (response.status === 200) {
        secrets.push(...Object.values(jsonOf(response)).map(String));
        return performance.now() - started;
      }
      if (performance.now() - started > 10_000) throw new Error('the service did not recover within 10 s');
      await sleep(10);
    }
  }

  beforeAll(async () => {
    requireAvailable(binary);
    await redis.start();
    client = new Redis(redis.url, { ...redisClientOptions(), lazyConnect: false });
    client.on('error', () => {});
    await new Promise<void>((resolve) => client.once('ready', () => resolve()));
    store = pausingStore(new RedisStore(client, { prefix: 'fail-closed:', commandTimeoutMs: 500 }), redis);
    sentinel = makeSentinel({ store, onEvent: (event) => events.push(event), onError: (error) => errors.push(error) });
  }, 30_000);

  afterAll(async () => {
    client?.disconnect();
    await redis.destroy();
    // Every 5xx had its cause reported, and no cause carries a secret.
    expect(serverErrors).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThanOrEqual(serverErrors);
    const text = errors.map((error) => (error instanceof Error ? `${error.message}\n${error.stack}` : String(error))).join('\n');
    for (const secret of secrets) expect(text.includes(secret), 'a secret reached onError').toBe(false);
  });

  beforeEach(() => {
    events.length = 0;
  });

  it('refuses revoked and pre-loss tokens after an empty restart, and a revoke after the loss still takes', async () => {
    const live = await signIn();
    const revokedAccess = await signIn();
    const revokedGrant = await signIn();
    expect((await revoke(revokedAccess.access_token)).status).toBe(200);
    expect((await revoke(revokedGrant.refresh_token)).status).toBe(200);
    expect(await accepted(live.access_token)).toBe(true);
    expect(await accepted(revokedAccess.access_token)).toBe(false);
    expect(await accepted(revokedGrant.access_token)).toBe(false);

    await redis.kill();
    const errorsBefore = errors.length;
    const down = await refresh(live.refresh_token);
    expect(down.status).toBe(500);
    expect(errors.length).toBeGreaterThan(errorsBefore);
    // A few seconds down: long enough for a backing-off reconnect schedule to fall far behind.
    await sleep(3000);
    await redis.start(); // empty: no persistence
    const took = await recovery();
    console.info(`[store-fail-closed] recovered ${Math.round(took)} ms after an empty restart`);
    expect(took).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);

    for (const tokens of [live, revokedAccess, revokedGrant]) expect(await accepted(tokens.access_token)).toBe(false);
    for (const tokens of [live, revokedAccess, revokedGrant]) {
      const response = await refresh(tokens.refresh_token);
      expect(response.status).toBe(400);
      expect(jsonOf(response).error).toBe('invalid_grant');
    }
    const late = await revoke(live.access_token);
    expect(late.status).toBe(200);
    expect(await accepted(live.access_token)).toBe(false);
    expect(flagged()).toEqual([]);
  }, 30_000);

  it('a rotation written only after its 500 (paused Redis) is retried without being taken for reuse', async () => {
    const tokens = await signIn();
    store.pauseBeforeSwap = true;
    const failed = await refresh(tokens.refresh_token);
    redis.resume();
    expect(failed.status).toBe(500);
    expect(jsonOf(failed).error).toBe('server_error');
    await sleep(100); // the queued script runs now: the old token is spent and the client never got the new one
    const retry = await refresh(tokens.refresh_token);
    expect(retry.status).toBe(400);
    expect(jsonOf(retry).error).toBe('invalid_grant');
    expect(flagged()).toEqual([]);
    // Nothing was revoked: the access token from before still works.
    expect(await accepted(tokens.access_token)).toBe(true);
  }, 30_000);

  it('an exchange written only after its 500 (paused Redis) is retried without being taken for a replay', async () => {
    const code = await newCode();
    store.pauseBeforeSwap = true;
    const failed = await exchange(code);
    redis.resume();
    expect(failed.status).toBe(500);
    await sleep(100);
    const retry = await exchange(code);
    expect(retry.status).toBe(400);
    expect(jsonOf(retry).error).toBe('invalid_grant');
    expect(flagged()).toEqual([]);
  }, 30_000);

  it('changes nothing when Redis is out of memory, and the retry afterwards succeeds', async () => {
    const tokens = await signIn();
    const code = await newCode();
    await client.config('SET', 'maxmemory-policy', 'noeviction');
    await client.config('SET', 'maxmemory', '1');
    try {
      const rotation = await refresh(tokens.refresh_token);
      expect(rotation.status).toBe(500);
      const redemption = await exchange(code);
      expect(redemption.status).toBe(500);
    } finally {
      await client.config('SET', 'maxmemory', '0');
    }
    const rotation = await refresh(tokens.refresh_token);
    expect(rotation.status).toBe(200);
    secrets.push(...Object.values(jsonOf(rotation)).map(String));
    const redemption = await exchange(code);
    expect(redemption.status).toBe(200);
    secrets.push(...Object.values(jsonOf(redemption)).map(String));
    expect(flagged()).toEqual([]);
    expect(await accepted(tokens.access_token)).toBe(true);
  }, 30_000);
});
