/**
 * Single-use markers of assertions (`assertion-jti`, `private_key_jwt`) and of trusted brands' JWTs (`brand-jti`) are
 * kept per account: on MemoryStore, whose security areas are never evicted and refuse writes once full, one account's
 * clients filling their area refuse only that account's credentials, never every other account's. A marker under the
 * key of earlier versions (no account in it) still makes its credential a replay.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, SecurityStateFullError } from '../src/index.js';
import { accountMarkerKeys } from '../src/stores/replay-epoch.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, BRAND_ISSUER, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { assertionAuth, clientKey, KEYED_CLIENT_ID, keyedSentinel } from './helpers/key-bound.js';

const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
const OTHER = 'another-account';

/** Counts markers of `prefix` for another account until its area is full, and checks that it is. */
async function fillOtherAccount(store: MemoryStore, prefix: string): Promise<void> {
  for (let index = 0; index < 10_000; index += 1) {
    try {
      await store.increment(accountMarkerKeys(prefix, OTHER, randomUUID()).key, 600_000);
    } catch (error) {
      expect(error).toBeInstanceOf(SecurityStateFullError);
      expect(error).toMatchObject({ prefix });
      return;
    }
  }
  throw new Error(`the ${prefix} area of ${OTHER} never filled`);
}

function v2(sentinel: Sentinel, form: Record<string, string>) {
  return sentinel.handle({
    method: 'POST',
    path: V2_PATH,
    query: new URLSearchParams({ state: CONSUMER_UUID }),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(),
  });
}

describe('private_key_jwt assertion markers, per account', () => {
  it("are counted in an area of the account's own: another account's full area refuses none of its assertions", async () => {
    const store = new MemoryStore({ securityMaxBytes: 8192 });
    await fillOtherAccount(store, 'assertion-jti');
    const errors: unknown[] = [];
    const key = await clientKey();
    const own = keyedSentinel(key, {}, { store, onError: (error) => errors.push(error) });
    const jti = randomUUID();
    const form = await assertionAuth(key, { jti });
    expect((await v2(own, form))?.status).toBe(200);
    expect(errors).toEqual([]);
    expect(await store.get(accountMarkerKeys('assertion-jti', ACCOUNT, `${KEYED_CLIENT_ID}\u0000${jti}`).key)).toBe('1');
    const replay = await v2(own, form);
    expect(replay?.status).toBe(401);
    expect(jsonOf(replay as never).error_description).toMatch(/already been used/);
  });

  it('refuse an assertion an earlier version spent, under its key without the account', async () => {
    const store = new MemoryStore();
    const key = await clientKey();
    const sentinel = keyedSentinel(key, {}, { store });
    const jti = randomUUID();
    await store.increment(accountMarkerKeys('assertion-jti', ACCOUNT, `${KEYED_CLIENT_ID}\u0000${jti}`).earlierKey, 600_000);
    const replay = await v2(sentinel, await assertionAuth(key, { jti }));
    expect(replay?.status).toBe(401);
    expect(jsonOf(replay as never).error_description).toMatch(/already been used/);
  });
});

describe('brand JWT markers, per account', () => {
  const bearer = (sentinel: Sentinel, assertion: string) =>
    postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT }).toString());

  it("are counted in an area of the account's own: another account's full area refuses none of its JWTs", async () => {
    const store = new MemoryStore({ securityMaxBytes: 8192 });
    await fillOtherAccount(store, 'brand-jti');
    const errors: unknown[] = [];
    const key = await brandKey();
    const sentinel = makeSentinel(exchangeOptions(key, { store, onError: (error) => errors.push(error) }));
    const jti = randomUUID();
    const jwt = await brandJWT(key, { jti });
    expect((await bearer(sentinel, jwt)).status).toBe(200);
    expect(errors).toEqual([]);
    expect(await store.get(accountMarkerKeys('brand-jti', ACCOUNT, `${BRAND_ISSUER}\u0000${jti}`).key)).toBe('1');
    expect(jsonOf(await bearer(sentinel, jwt)).error_description).toMatch(/already been used/);
  });

  it('refuse a JWT an earlier version spent, under its key without the account', async () => {
    const store = new MemoryStore();
    const key = await brandKey();
    const sentinel = makeSentinel(exchangeOptions(key, { store }));
    const jti = randomUUID();
    await store.increment(accountMarkerKeys('brand-jti', ACCOUNT, `${BRAND_ISSUER}\u0000${jti}`).earlierKey, 600_000);
    const replay = await bearer(sentinel, await brandJWT(key, { jti }));
    expect(replay.status).toBe(400);
    expect(jsonOf(replay).error_description).toMatch(/already been used/);
  });
});
