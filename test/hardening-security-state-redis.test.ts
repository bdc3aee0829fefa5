/**
 * The security-state flood of issue 30 item 3 against RedisStore. Redis has no per-prefix budget: markers are
 * ordinary keys with a TTL, so what a flood fills is Redis memory (and with `maxmemory` and `noeviction` every
 * write then fails, sign-ins included; with an evicting policy markers and throttle counters may be dropped). What
 * holds here is therefore the part of the fix that lives in the core: no marker for a request that is not good, and
 * a bound per address on public pushes — counted as keys in a private prefix of the shared Redis.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { generateSecret } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/stores/redis.js';
import type { SentinelOptions } from '../src/index.js';
import { makeSentinel } from './helpers/fixtures.js';
import { flood, legitimateSignIn, totpUsers } from './helpers/security-state-flow.js';
import { REDIS_URL, deleteByPrefix, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('hardening-security-state-redis');

describe.skipIf(redis.skip)('a flood of public-client requests with self-made DPoP proofs, on RedisStore', () => {
  const prefix = `sentinel-hardening-state-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis;

  beforeAll(() => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    if (client === undefined) return;
    await deleteByPrefix(client, prefix);
    client.disconnect();
  });

  async function keysUnder(name: string): Promise<number> {
    return (await client.keys(`${prefix}${name}:*`)).length;
  }

  it('leaves no marker for made-up codes, at most pushProofsPerAddress for pushes, and sign-in still works', async () => {
    const secret = generateSecret();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      store: new RedisStore(client, { prefix }),
      users: totpUsers(secret),
      onError: (error) => errors.push(error),
      dpop: { pushProofsPerAddress: 20 },
    } as Partial<SentinelOptions>);
    const statuses = await flood(sentinel, 300, () => '198.51.100.66');
    expect(Object.fromEntries(statuses)).toEqual({ 400: 150, 201: 20, 429: 130 });
    expect(await keysUnder('dpop-jti')).toBe(0);
    expect(await keysUnder('dpop-push-jti')).toBe(20);
    await legitimateSignIn(sentinel, secret, { ip: '203.0.113.7', push: true });
    // The legitimate sign-in left one marker of each kind: its push and its code exchange.
    expect(await keysUnder('dpop-jti')).toBe(1);
    expect(await keysUnder('dpop-push-jti')).toBe(21);
    const ttl = await client.pttl((await client.keys(`${prefix}dpop-jti:*`))[0] as string);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(71_000);
    expect(errors).toEqual([]);
  });
});
