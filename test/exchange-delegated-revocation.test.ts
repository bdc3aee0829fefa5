/**
 * An actor revoking its own delegated tokens (RFC 7009 of RFC 8693 delegations) never touches the subject's grant:
 * the grant belongs to the user's app, so the bot can neither grow its record nor end it (once at 65 revoked tokens,
 * with the user's app blamed). Each revocation is a marker of its own (`revoked-jti:`), security state, read by the
 * liveness check of delegated tokens only: on MemoryStore and on RedisStore with two instances sharing it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, SecurityStateFullError, type Sentinel, type SentinelEvent, type Store } from '../src/index.js';
import { shortDigest } from '../src/lib/random-secrets.js';
import { contextOf } from '../src/http/context.js';
import { MAX_REVOKED_ACCESS_TOKENS, readGrant } from '../src/token/grant-records.js';
import { consumerToken, jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT_ISSUER, BOT, brandKey, exchangeOptions, TOKEN_EXCHANGE, TOKEN_PATH, TYPE } from './helpers/exchange.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel, OTHER_ACCOUNT, REDIRECT_URI } from './helpers/fixtures.js';
import { codeFor } from './helpers/oauth.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { restartableStore } from './helpers/restartable-store.js';
import { advanceClock } from './helpers/clock.js';

const key = await brandKey();
const USER_APP = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET };

async function userTokens(sentinel: Sentinel): Promise<{ access: string; refresh: string; gid: string }> {
  const code = await codeFor(sentinel, { scope: 'read write' });
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...USER_APP };
  const body = jsonOf(await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString()));
  const access = body.access_token as string;
  const gid = JSON.parse(Buffer.from(access.split('.')[1] as string, 'base64url').toString()).gid as string;
  return { access, refresh: body.refresh_token as string, gid };
}

async function delegated(sentinel: Sentinel, subject: string): Promise<string> {
  const form = { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: TYPE.accessToken, ...BOT };
  const response = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
  expect(response.status, response.body).toBe(200);
  return jsonOf(response).access_token as string;
}

async function revoke(sentinel: Sentinel, token: string, client: Record<string, string>): Promise<number> {
  return (await postForm(sentinel, `${TOKEN_PATH}/revoke`, new URLSearchParams({ token, ...client }).toString())).status;
}

const live = async (sentinel: Sentinel, token: string): Promise<boolean> =>
  (await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT })).ok;

function cases(name: string, stores: () => [Store, Store], markerTtls?: () => Promise<number[]>): void {
  it(`${name}: a bot revoking more of its delegated tokens than a grant remembers leaves the user's grant whole`, async () => {
    const [first, second] = stores();
    const events: SentinelEvent[] = [];
    const one = makeSentinel(exchangeOptions(key, { store: first, onEvent: (event) => events.push(event) }));
    const two = makeSentinel(exchangeOptions(key, { store: second }));
    const user = await userTokens(one);
    const revoked: string[] = [];
    for (let index = 0; index <= MAX_REVOKED_ACCESS_TOKENS; index += 1) {
      const token = await delegated(one, user.access);
      expect(await revoke(one, token, BOT)).toBe(200);
      revoked.push(token);
    }
    // The user's app keeps its grant: its access token passes, its refresh token refreshes, nothing ended.
    expect(await live(one, user.access)).toBe(true);
    const refreshed = await postForm(
      one,
      TOKEN_PATH,
      new URLSearchParams({ grant_type: 'refresh_token', refresh_token: user.refresh, ...USER_APP }).toString(),
    );
    expect(refreshed.status, refreshed.body).toBe(200);
    expect(events.filter((event) => event.type === 'grant.ended')).toEqual([]);
    // Nor did the bot grow the grant's record, which every check of the user's tokens reads.
    const grant = await readGrant(contextOf(one), user.gid);
    expect(grant?.grant.revokedJtis ?? {}).toEqual({});
    // Every revoked delegated token stays refused, on the instance that revoked it and on the other.
    for (const token of [revoked[0] as string, revoked.at(-1) as string]) {
      expect(await live(one, token)).toBe(false);
      expect(await live(two, token)).toBe(false);
    }
    // A delegated token not revoked still passes.
    const kept = await delegated(one, user.access);
    expect(await live(two, kept)).toBe(true);
    if (markerTtls !== undefined) {
      // Remembered until the token could no longer pass anyway: its exp (at most an hour), plus the clock tolerance.
      const ttls = await markerTtls();
      expect(ttls).toHaveLength(MAX_REVOKED_ACCESS_TOKENS + 1);
      for (const ttl of ttls) {
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual((3600 + 60 + 1) * 1000);
      }
    }
  });

  it(`${name}: revoking a delegated token stops the ones delegated from it, not its subject`, async () => {
    const [first, second] = stores();
    const one = makeSentinel(exchangeOptions(key, { store: first }));
    const two = makeSentinel(exchangeOptions(key, { store: second }));
    const user = await userTokens(one);
    const middle = await delegated(one, user.access);
    const below = await delegated(two, middle);
    expect(await live(two, below)).toBe(true);
    expect(await revoke(two, middle, BOT)).toBe(200);
    expect(await live(one, below)).toBe(false);
    expect(await live(one, user.access)).toBe(true);
  });

  it(`${name}: a bot revoking a consumer's delegated token stops it and the ones delegated from it, not the consumer's`, async () => {
    const [first, second] = stores();
    const one = makeSentinel(exchangeOptions(key, { store: first }));
    const two = makeSentinel(exchangeOptions(key, { store: second }));
    const asConsumer = async (sentinel: Sentinel, token: string): Promise<boolean> =>
      (await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok;
    const consumer = await consumerToken(one);
    const middle = await delegated(one, consumer);
    const below = await delegated(two, middle);
    // Checked once while live, on both instances: both now sit in the guard's verified-token caches.
    for (const sentinel of [one, two]) {
      expect(await asConsumer(sentinel, middle)).toBe(true);
      expect(await asConsumer(sentinel, below)).toBe(true);
    }
    expect(await revoke(two, middle, BOT)).toBe(200);
    for (const sentinel of [one, two]) {
      expect(await asConsumer(sentinel, middle)).toBe(false);
      expect(await asConsumer(sentinel, below)).toBe(false);
    }
    const introspected = await postForm(one, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token: below, ...BOT }).toString());
    expect(jsonOf(introspected)).toEqual({ active: false });
    // Nor can the bot exchange what it revoked, nor what was delegated from it.
    for (const subject of [middle, below]) {
      const form = { grant_type: TOKEN_EXCHANGE, subject_token: subject, subject_token_type: TYPE.accessToken, ...BOT };
      expect((await postForm(one, TOKEN_PATH, new URLSearchParams(form).toString())).status).toBe(400);
    }
    // The consumer's own token is the app's, verified store-free: it passes, and it cannot be revoked.
    expect(await asConsumer(one, consumer)).toBe(true);
    expect(await revoke(one, consumer, USER_APP)).toBe(400);
  });
}

describe('delegated token revocation on MemoryStore', () => {
  cases('MemoryStore', () => {
    const store = new MemoryStore();
    return [store, store];
  });

  it('more revocations than the store bound keeps of an ordinary prefix do not evict one (security state)', async () => {
    const store = new MemoryStore({ max: 10 });
    const sentinel = makeSentinel(exchangeOptions(key, { store }));
    const user = await userTokens(sentinel);
    const token = await delegated(sentinel, user.access);
    expect(await revoke(sentinel, token, BOT)).toBe(200);
    // As many revocations as a bot could make: in an ordinary (LRU) area the first would be the first to go.
    for (let index = 0; index < 200; index += 1) await store.set(`revoked-jti:flood-${index}`, '1', 600_000);
    expect(await live(sentinel, token)).toBe(false);
  });

  it("one account's bot filling its revocation budget refuses its own revocations only, never another account's", async () => {
    const store = new MemoryStore({ securityMaxBytes: 8 * 1024 });
    const errors: unknown[] = [];
    const sentinel = makeSentinel(exchangeOptions(key, { store, onError: (error) => errors.push(error) }));
    // Another account's bot revoking in a loop, as its revocations are written: until its budget refuses one.
    const otherIssuer = `http://localhost/sentinel/api/account/${OTHER_ACCOUNT}`;
    const flood = (index: number): Promise<void> =>
      store.set(`revoked-jti:${shortDigest(otherIssuer)}:${randomUUID()}-${index}`, '1', 600_000);
    let refused: unknown;
    for (let index = 0; index < 1_000 && refused === undefined; index += 1) await flood(index).catch((error: unknown) => (refused = error));
    expect(refused).toBeInstanceOf(SecurityStateFullError);
    // This account's bot still revokes its delegated token, and it stays refused.
    const user = await userTokens(sentinel);
    const token = await delegated(sentinel, user.access);
    expect(await revoke(sentinel, token, BOT)).toBe(200);
    expect(await live(sentinel, token)).toBe(false);
    expect(errors).toEqual([]);
    const { jti } = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { jti: string };
    expect(await store.get(`revoked-jti:${shortDigest(ACCOUNT_ISSUER)}:${jti}`)).toBe('1');
    // A revocation an earlier version wrote (no account in its key) still counts.
    const older = await delegated(sentinel, user.access);
    const olderJti = (JSON.parse(Buffer.from(older.split('.')[1] as string, 'base64url').toString()) as { jti: string }).jti;
    await store.set(`revoked-jti:${olderJti}`, '1', 600_000);
    expect(await live(sentinel, older)).toBe(false);
    // The account over its budget is refused, never another account's revocation forgotten.
    await expect(flood(-1)).rejects.toMatchObject({ name: 'SecurityStateFullError', prefix: 'revoked-jti' });
    expect(String(refused)).toContain(`"revoked-jti:${shortDigest(otherIssuer)}:"`);
  });

  it('a revocation marker that cannot be read fails the check closed (503), and the user token never reads one', async () => {
    const inner = new MemoryStore();
    const down = { on: false };
    const reads: string[] = [];
    const store: Store = {
      get: (name) => {
        reads.push(name);
        return down.on && name.startsWith('revoked-jti:') ? Promise.reject(new Error('store unreachable')) : inner.get(name);
      },
      set: (name, value, ttl) => inner.set(name, value, ttl),
      take: (name) => inner.take(name),
      delete: (name) => inner.delete(name),
      increment: (name, ttl) => inner.increment(name, ttl),
      swap: (entries) => inner.swap(entries),
    };
    const sentinel = makeSentinel(exchangeOptions(key, { store, onError: () => {} }));
    const user = await userTokens(sentinel);
    const token = await delegated(sentinel, user.access);
    down.on = true;
    const checked = await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT });
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.response.status).toBe(503);
    reads.length = 0;
    expect(await live(sentinel, user.access)).toBe(true);
    expect(reads.filter((name) => name.startsWith('revoked-jti:'))).toEqual([]);
    // A consumer's delegated token has no grant: its marker alone decides, and fails closed just the same, while the
    // consumer's own token stays store-free.
    down.on = false;
    const consumer = await consumerToken(sentinel);
    const consumerDelegated = await delegated(sentinel, consumer);
    down.on = true;
    const refused = await sentinel.checkBearer(`Bearer ${consumerDelegated}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
    expect(!refused.ok && refused.response.status).toBe(503);
    reads.length = 0;
    expect((await sentinel.checkBearer(`Bearer ${consumer}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    expect(reads).toEqual([]);
  });
});

// A consumer's delegated token has no grant: its revocation markers are negative state with nothing positive behind
// them, so a store that lost them (Redis restarted empty; a MemoryStore replaced by an empty one stands for it) must
// not let a revoked one pass again. The replay epoch (src/stores/replay-epoch.ts) tells the loss.
describe("a consumer's delegated tokens after the store lost its data", () => {
  it('a revoked one stays refused, and so does any issued before the loss; one delegated after it passes', async () => {
    const store = restartableStore();
    const sentinel = makeSentinel(exchangeOptions(key, { store, clockTolerance: 5 }));
    const asConsumer = async (token: string): Promise<boolean> =>
      (await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok;
    const consumer = await consumerToken(sentinel);
    const revoked = await delegated(sentinel, consumer);
    const kept = await delegated(sentinel, consumer);
    expect(await revoke(sentinel, revoked, BOT)).toBe(200);
    expect(await asConsumer(revoked)).toBe(false);
    expect(await asConsumer(kept)).toBe(true);

    store.restart();
    expect(await asConsumer(revoked)).toBe(false);
    // Nothing tells it from one whose marker was lost: refused alike, and the bot exchanges the consumer's token anew.
    expect(await asConsumer(kept)).toBe(false);
    const introspected = await postForm(sentinel, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token: revoked, ...BOT }).toString());
    expect(jsonOf(introspected)).toEqual({ active: false });
    // The consumer's own token is verified store-free and never revocable: the loss changes nothing for it.
    expect(await asConsumer(consumer)).toBe(true);
    try {
      advanceClock(10);
      const fresh = await delegated(sentinel, consumer);
      expect(await asConsumer(fresh)).toBe(true);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

await describeOnSharedRedis(
  'exchange-delegated-revocation',
  'delegated token revocation on RedisStore (two instances)',
  (newStore, block) => {
    cases(
      'RedisStore',
      () => [newStore(), newStore()],
      async () => {
        const { client, prefix } = block();
        const keys = await client.keys(`${prefix}revoked-jti:*`);
        return Promise.all(keys.map((name) => client.pttl(name)));
      },
    );
  },
);
