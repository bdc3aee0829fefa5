/**
 * The per-address bound on interactions (`interactionsPerAddress`) across two instances sharing Redis: a concurrent
 * burst of unauthenticated /authorize requests split between them stores exactly the limit of interactions, both then
 * send the address back to the app with `temporarily_unavailable`, and the counter lives for `interactionTtl`.
 */
import { expect, it } from 'vitest';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

function authorize(sentinel: ReturnType<typeof makeSentinel>, ip: string) {
  return call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery(), ip });
}

function outcome(response: { headers: Record<string, unknown> }): string {
  const location = String(response.headers.location);
  if (/\/login\?interaction=/.test(location)) return 'login';
  return location.startsWith(`${REDIRECT_URI}?`) ? (new URL(location).searchParams.get('error') ?? 'code') : location;
}

await describeOnSharedRedis(
  'authorize-interaction-bound-redis',
  'interactions per address, two instances on RedisStore',
  (newStore, block) => {
    it('a concurrent burst through both instances stores exactly the limit; then both refuse', async () => {
      const options = { interactionsPerAddress: 5, interactionTtl: 300 };
      const instances = [makeSentinel({ store: newStore(), ...options }), makeSentinel({ store: newStore(), ...options })];
      const pick = (index: number) => instances[index % 2] as (typeof instances)[0];
      const burst = await Promise.all(Array.from({ length: 20 }, (_, index) => authorize(pick(index), '198.51.100.80')));
      const counts = new Map<string, number>();
      for (const response of burst) counts.set(outcome(response), (counts.get(outcome(response)) ?? 0) + 1);
      expect(Object.fromEntries(counts)).toEqual({ login: 5, temporarily_unavailable: 15 });
      const { client, prefix } = block();
      expect(await client.keys(`${prefix}interaction:*`)).toHaveLength(5);
      for (const instance of instances) expect(outcome(await authorize(instance, '198.51.100.80'))).toBe('temporarily_unavailable');
      expect(outcome(await authorize(pick(1), '198.51.100.81'))).toBe('login');
      // The window is an interaction's lifetime, interactionTtl.
      const ttl = await client.pttl(`${prefix}throttle-interaction:ip:198.51.100.80`);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
    });
  },
);
