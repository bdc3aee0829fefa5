/**
 * A right user code's device sign-in counts on the interaction bound across two instances sharing Redis: a burst of
 * entries of one live code, split between them, stores exactly `interactionsPerAddress` interactions; the rest are
 * refused with 429 on either instance.
 */
import { expect, it } from 'vitest';
import { deviceApps, enterCode, requestCodes } from './helpers/device-drive.js';
import { makeSentinel } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

await describeOnSharedRedis('device-entry-bound-redis', 'device sign-ins per address, two instances on RedisStore', (newStore, block) => {
  it('a concurrent burst of one right code through both instances stores exactly the limit', async () => {
    const options = { apps: deviceApps(), interactionsPerAddress: 4, interactionTtl: 300 };
    const instances = [makeSentinel({ store: newStore(), ...options }), makeSentinel({ store: newStore(), ...options })];
    const pick = (index: number) => instances[index % 2] as (typeof instances)[0];
    const codes = await requestCodes(pick(0));
    const burst = await Promise.all(Array.from({ length: 12 }, (_, index) => enterCode(pick(index), {}, codes.user_code, '198.51.100.90')));
    const statuses = burst.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array<number>(4).fill(303), ...Array<number>(8).fill(429)]);
    const { client, prefix } = block();
    expect(await client.keys(`${prefix}interaction:*`)).toHaveLength(4);
    for (const instance of instances) expect((await enterCode(instance, {}, codes.user_code, '198.51.100.90')).status).toBe(429);
  });
});
