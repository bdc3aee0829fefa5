/**
 * RedisStore over an ioredis `Cluster` on a real 3-master Redis Cluster: the whole Store contract, plus the check
 * that a grant's keys really share a slot while other keys spread over the masters.
 *
 * No cluster and no binaries to start one: skipped with the reason printed, unless SENTINEL_REQUIRE_REDIS=1 (CI),
 * where the suite fails.
 */
import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/stores/redis.js';
import { clusterAvailability, connectCluster, type RunningCluster, startCluster } from './helpers/redis-cluster.js';
import { requireAvailable } from './helpers/redis.js';
import { runStoreContract } from './helpers/store-contract.js';

const available = clusterAvailability('store-redis-cluster');

describe.skipIf(available.skip)('RedisStore on a 3-master Redis Cluster', () => {
  const runPrefix = `sentinel-cluster-test:${randomBytes(8).toString('hex')}:`;
  let cluster: RunningCluster | undefined;
  let client: Cluster;
  let stores = 0;

  beforeAll(async () => {
    requireAvailable(available);
    cluster = await startCluster();
    client = await connectCluster(cluster);
  }, 60_000);

  afterAll(async () => {
    if (client !== undefined) {
      // One DEL per key on the master that holds it.
      for (const node of client.nodes('master')) {
        const keys = await node.keys(`${runPrefix}*`);
        for (const key of keys) await node.del(key);
      }
      await client.quit();
    }
    await cluster?.stop();
  });

  runStoreContract('RedisStore (Cluster)', async () => {
    const store = new RedisStore(client, { prefix: `${runPrefix}${++stores}:` });
    return { store, cleanup: async () => {} };
  });

  it('is really a cluster of three masters', async () => {
    expect(client.nodes('master')).toHaveLength(3);
  });

  it('keeps a grant and its code in one slot, and refuses a swap across hash tags before sending it', async () => {
    const prefix = `${runPrefix}slots:`;
    const store = new RedisStore(client, { prefix });
    const slotOf = async (key: string) => Number(await client.cluster('KEYSLOT', `${prefix}${key}`));
    expect(await slotOf('code:{g1}')).toBe(await slotOf('grant:{g1}'));
    expect(await slotOf('grant:{g1}')).not.toBe(await slotOf('grant:{g2}'));
    await expect(
      store.swap([
        { key: 'code:{g1}', expect: null, value: 'a', ttlMs: 60_000 },
        { key: 'grant:{g2}', expect: null, value: 'b', ttlMs: 60_000 },
      ]),
    ).rejects.toThrow(/hash tag/);
    await expect(store.get('grant:{g2}')).resolves.toBeNull();
  });
});
