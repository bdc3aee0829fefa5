import { generateSecret } from 'otplib';
import { expect, it } from 'vitest';
import type { SentinelOptions } from '../src/index.js';
import { makeSentinel } from './helpers/fixtures.js';
import { flood, legitimateSignIn, totpUsers } from './helpers/security-state-flow.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

await describeOnSharedRedis(
  'hardening-security-state-redis',
  'a flood of public-client requests with self-made DPoP proofs, on RedisStore',
  (newStore, block) => {
    async function keysUnder(name: string): Promise<number> {
      const { client, prefix } = block();
      return (await client.keys(`${prefix}${name}:*`)).length;
    }

    it('leaves no marker for made-up codes, at most pushProofsPerAddress for pushes, and sign-in still works', async () => {
      const secret = generateSecret();
      const errors: unknown[] = [];
      const sentinel = makeSentinel({
        store: newStore(),
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
      const { client, prefix } = block();
      const ttl = await client.pttl((await client.keys(`${prefix}dpop-jti:*`))[0] as string);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(71_000);
      expect(errors).toEqual([]);
    });
  },
);
