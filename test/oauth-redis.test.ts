/**
 * The single-use guarantees of the token side over a shared RedisStore (the multi-instance deployment): two
 * sentinels on one Redis, requests split between them; concurrent revocations (RFC 7009) of one grant's access
 * tokens, which all write that one grant record; and DPoP nonces (RFC 9449 §8) handed out by one instance and
 * presented to another while a key rollout has them sign with different keys. Skipped without a reachable Redis
 * unless SENTINEL_REQUIRE_REDIS=1.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSentinel, generatePrivateJWK, type Sentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { baseOptions } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';
import { clientKey, dpopProof } from './helpers/key-bound.js';
import { CLIENT, codeFor, exchange, isAccepted, postForm, refresh, REVOKE_PATH, TOKEN_PATH } from './helpers/oauth.js';

const redis = await sharedRedis('oauth-redis');
const skip = redis.skip;

/** Closes the instances, then removes every key of the block's prefix and lets its client go. */
async function tearDown(hosts: MountedHost[], client: Redis, prefix: string): Promise<void> {
  await Promise.all(hosts.map((host) => host.close()));
  const keys = await client.keys(`${prefix}*`);
  for (const key of keys) await client.del(key);
  client.disconnect();
}

describe.skipIf(skip)('token side on a shared RedisStore (two instances)', () => {
  const prefix = `sentinel-oauth-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis;
  let hosts: MountedHost[] = [];
  let sentinels: Sentinel[] = [];
  const errors: unknown[] = [];

  beforeAll(async () => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const store = new RedisStore(client, { prefix });
    // No retry grace: the replay right after the race must revoke what the code gave.
    const options = () => baseOptions({ store, retryGrace: 0, onError: (error) => void errors.push(error) });
    sentinels = [createSentinel(options()), createSentinel(options())];
    hosts = await Promise.all(sentinels.map((sentinel) => HOSTS[0]!.mount(sentinel)));
  });

  afterAll(() => tearDown(hosts, client, prefix));

  it('50 concurrent redemptions of one code across instances give exactly one token, and the replay revokes it', async () => {
    const code = await codeFor(sentinels[0]!);
    const responses = await Promise.all(Array.from({ length: 50 }, (_, index) => exchange(hosts[index % 2]!.server, code)));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    // A later replay on either instance revokes what the code gave.
    expect((await exchange(hosts[1]!.server, code)).status).toBe(400);
    expect(await isAccepted(sentinels[0]!, winners[0]!.body.access_token)).toBe(false);
  });

  it('200 concurrent uses of one refresh token across instances give exactly one success', async () => {
    const issued = await exchange(hosts[0]!.server, await codeFor(sentinels[0]!));
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) => refresh(hosts[index % 2]!.server, issued.body.refresh_token)),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
    expect(responses.every((response) => response.status === 200 || response.body.error === 'invalid_grant')).toBe(true);
  });

  /** `count` access tokens of one grant: the code's, then one per refresh. */
  async function accessTokensOfOneGrant(count: number): Promise<string[]> {
    let issued = await exchange(hosts[0]!.server, await codeFor(sentinels[0]!));
    const tokens = [issued.body.access_token as string];
    while (tokens.length < count) {
      issued = await refresh(hosts[0]!.server, issued.body.refresh_token);
      tokens.push(issued.body.access_token);
    }
    return tokens;
  }

  it.each([
    ['on one instance', 1],
    ['across two instances', 2],
  ])('concurrent revocations of one grant’s access tokens %s all answer 200 and revoke every token', async (_, instances) => {
    errors.length = 0;
    const tokens = await accessTokensOfOneGrant(16);
    const responses = await Promise.all(
      tokens.map((token, index) =>
        postForm(hosts[index % instances]!.server, REVOKE_PATH, { token, token_type_hint: 'access_token', ...CLIENT }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(tokens.map(() => 200));
    expect(errors).toEqual([]);
    for (const token of tokens) expect(await isAccepted(sentinels[0]!, token)).toBe(false);
  });
});

describe.skipIf(skip)('DPoP nonces on two instances in the middle of a key rollout', () => {
  const prefix = `sentinel-oauth-test:${randomBytes(8).toString('hex')}:`;
  const TOKEN_HTU = `http://localhost${TOKEN_PATH}`;
  let client: Redis;
  let hosts: MountedHost[] = [];

  beforeAll(async () => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const store = new RedisStore(client, { prefix });
    const [old, rolledOut, foreign] = [generatePrivateJWK('ES256'), generatePrivateJWK('ES256'), generatePrivateJWK('ES256')];
    // docs/guides/deploying-instances-and-store.md: `[old, new]` everywhere, then `[new, old]` one instance at a time;
    // meanwhile the instances sign with different keys of one set. The third is another service on the same store.
    const keySets = [[old, rolledOut], [rolledOut, old], [foreign]];
    const sentinels = keySets.map((keys) => createSentinel(baseOptions({ store, keys, dpop: { nonce: true } })));
    hosts = await Promise.all(sentinels.map((sentinel) => HOSTS[0]!.mount(sentinel)));
  });

  afterAll(() => tearDown(hosts, client, prefix));

  async function clientCredentials(host: MountedHost, proof: string) {
    return postForm(host.server, TOKEN_PATH, { grant_type: 'client_credentials', ...CLIENT }).set('DPoP', proof);
  }

  it("each instance accepts the nonces the other hands out, and another service's instance refuses them", async () => {
    const key = await clientKey();
    for (const [from, to] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const asked = await clientCredentials(hosts[from]!, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }));
      expect(asked.body.error).toBe('use_dpop_nonce');
      const nonce = asked.headers['dpop-nonce'] as string;
      const elsewhere = await clientCredentials(hosts[to]!, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU, nonce }));
      expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
      expect(elsewhere.body.token_type).toBe('DPoP');
      const foreign = await clientCredentials(hosts[2]!, await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU, nonce }));
      expect(foreign.body.error).toBe('use_dpop_nonce');
    }
  });
});
