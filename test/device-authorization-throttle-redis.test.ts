/**
 * The per-address bound on public clients' device authorization requests (`deviceFlow.publicAuthorizationsPerAddress`)
 * across two instances sharing Redis: a concurrent burst split between them stores exactly the limit of device
 * records, and both then refuse the address.
 */
import { expect, it } from 'vitest';
import { DEVICE_AUTHORIZATION_PATH, DEVICE_CLIENT_ID, deviceApps } from './helpers/device-drive.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

function publicRequest(sentinel: ReturnType<typeof makeSentinel>, ip: string) {
  const form = new URLSearchParams({ client_id: DEVICE_CLIENT_ID });
  return postForm(sentinel, DEVICE_AUTHORIZATION_PATH, form.toString(), { ip });
}

await describeOnSharedRedis(
  'device-authorization-throttle-redis',
  'public device authorizations per address, two instances on RedisStore',
  (newStore, block) => {
    it('a concurrent burst through both instances stores exactly the limit; then both refuse with 429', async () => {
      const options = { apps: deviceApps(), deviceFlow: { publicAuthorizationsPerAddress: 5 } };
      const instances = [makeSentinel({ store: newStore(), ...options }), makeSentinel({ store: newStore(), ...options })];
      const burst = await Promise.all(
        Array.from({ length: 20 }, (_, index) => publicRequest(instances[index % 2] as (typeof instances)[0], '198.51.100.80')),
      );
      const counts = new Map<number, number>();
      for (const response of burst) counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
      expect(Object.fromEntries(counts)).toEqual({ 200: 5, 429: 15 });
      const { client, prefix } = block();
      expect(await client.keys(`${prefix}device:*`)).toHaveLength(5);
      expect(await client.keys(`${prefix}device-user:*`)).toHaveLength(5);
      for (const instance of instances) {
        const refused = await publicRequest(instance, '198.51.100.80');
        expect(refused.status).toBe(429);
        expect(jsonOf(refused).error).toBe('temporarily_unavailable');
      }
      expect((await publicRequest(instances[1] as (typeof instances)[0], '198.51.100.81')).status).toBe(200);
      // The window is the device records' retention, 2 × expiresIn (600 s by default).
      const ttl = await client.pttl(`${prefix}throttle-device:ip:198.51.100.80`);
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(1_200_000);
    });
  },
);
