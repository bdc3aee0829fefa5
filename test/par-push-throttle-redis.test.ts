/**
 * The per-address bound on public clients' pushes (`par.publicPushesPerAddress`) across two instances sharing
 * Redis: a concurrent burst split between them stores exactly the limit, and both then refuse the address.
 */
import { expect, it } from 'vitest';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { PAR_PATH } from './helpers/security-state-flow.js';

function publicPush(sentinel: ReturnType<typeof makeSentinel>, ip: string) {
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: PUBLIC_CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  });
  return postForm(sentinel, PAR_PATH, form.toString(), { ip });
}

await describeOnSharedRedis('par-push-throttle-redis', 'public pushes per address, two instances on RedisStore', (newStore, block) => {
  it('a concurrent burst through both instances stores exactly the limit; then both refuse with 429', async () => {
    const instances = [
      makeSentinel({ store: newStore(), par: { publicPushesPerAddress: 5 } }),
      makeSentinel({ store: newStore(), par: { publicPushesPerAddress: 5 } }),
    ];
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, index) => publicPush(instances[index % 2] as (typeof instances)[0], '198.51.100.80')),
    );
    const counts = new Map<number, number>();
    for (const response of burst) counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ 201: 5, 429: 15 });
    const { client, prefix } = block();
    expect(await client.keys(`${prefix}par:*`)).toHaveLength(5);
    for (const instance of instances) {
      const refused = await publicPush(instance, '198.51.100.80');
      expect(refused.status).toBe(429);
      expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    }
    expect((await publicPush(instances[1] as (typeof instances)[0], '198.51.100.81')).status).toBe(201);
    const ttl = await client.pttl(`${prefix}throttle-par:ip:198.51.100.80`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('counts the /64s of one IPv6 /48 together across both instances: exactly the network limit is stored', async () => {
    const options = { par: { publicPushesPerAddress: 1, publicPushesPerNetwork: 6 } };
    const instances = [makeSentinel({ store: newStore(), ...options }), makeSentinel({ store: newStore(), ...options })];
    const { client, prefix } = block();
    // The block is shared with the test above: count the pushed requests this burst adds.
    const before = (await client.keys(`${prefix}par:*`)).length;
    const burst = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        publicPush(instances[index % 2] as (typeof instances)[0], `2001:db8:7:${index.toString(16)}::1`),
      ),
    );
    const counts = new Map<number, number>();
    for (const response of burst) counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toEqual({ 201: 6, 429: 18 });
    expect(await client.keys(`${prefix}par:*`)).toHaveLength(before + 6);
    // A request its network refused created no counter for its /64.
    expect(await client.keys(`${prefix}throttle-par:ip:2001:db8:7:*`)).toHaveLength(6);
    expect((await publicPush(instances[0] as (typeof instances)[0], '2001:db8:8::1')).status).toBe(201);
    const ttl = await client.pttl(`${prefix}throttle-par:net:2001:db8:7`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
