/**
 * `sentinel-idp keys rotate` of the built CLI, run as a child process, on a ring in a real Redis whose every key is
 * revoked (emptied by hand or by a broken writer): there is nothing to rotate and no key signs, so the command says
 * so on stderr and exits 1 without writing, and an instance starting on the ring then creates the keys, as the
 * message tells the operator.
 *
 * Skipped (with the reason printed) when no Redis answers at REDIS_URL, unless SENTINEL_REQUIRE_REDIS=1.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RingDocument } from '../src/keys/keyring/document.js';
import { createSentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ensureBuilt, runCli } from './helpers/dist.js';
import { baseOptions } from './helpers/fixtures.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('cli-keys-redis');
const PREFIX = `sentinel-cli-keys-test:${randomBytes(8).toString('hex')}:`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64url');
const RING_KEY = `${PREFIX}keyring:default`;

/** Runs the built CLI with the ring's encryption key in its environment. */
const cli = (args: string[]) => runCli(args, { ...process.env, SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });

/** A service with keyRotation on the test's prefix; `ready()` loads (or creates) the ring. */
function instance(client: Redis) {
  return createSentinel(
    baseOptions({
      keys: undefined,
      store: new RedisStore(client, { prefix: PREFIX }),
      keyRotation: { encryptionKey: ENCRYPTION_KEY, rotateEverySeconds: 3600, prePublishSeconds: 600, refreshSeconds: 60 },
    }),
  );
}

describe.skipIf(redis.skip)('sentinel-idp keys rotate on a ring without a live key', () => {
  let client: Redis;

  beforeAll(async () => {
    requireAvailable(redis);
    ensureBuilt();
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  }, 180_000);

  afterAll(async () => {
    if (client === undefined) return;
    await deleteByPrefix(client, PREFIX);
    client.disconnect();
  });

  it('exits 1 with the reason on stderr and writes nothing; an instance starting on the ring creates new keys', async () => {
    const first = instance(client);
    await first.ready();
    await first.close();
    // Every key revoked (private parts erased), as a broken writer or a hand edit leaves it.
    const ring = JSON.parse((await client.get(RING_KEY)) as string) as RingDocument;
    const revokedAt = Date.now();
    const emptied: RingDocument = {
      ...ring,
      revision: ring.revision + 1,
      keys: ring.keys.map(({ sealed: _erased, ...entry }) => ({ ...entry, revokedAt })),
    };
    await client.set(RING_KEY, JSON.stringify(emptied));
    const args = ['keys', 'rotate', '--redis', REDIS_URL, '--prefix', PREFIX];

    const rotate = await cli(args);
    expect(rotate.code, rotate.stdout).toBe(1);
    expect(rotate.stdout).toBe('');
    expect(rotate.stderr).toMatch(/^sentinel-idp: the key ring has no live key \(every key in it is revoked\): nothing rotated/);
    expect(JSON.parse((await client.get(RING_KEY)) as string)).toEqual(emptied);

    // What the message says: an instance that reads the ring next replaces it (here one starting, with no copy).
    const second = instance(client);
    await second.ready();
    await second.close();
    const list = await cli(['keys', 'list', '--redis', REDIS_URL, '--prefix', PREFIX]);
    expect(list.code, list.stderr).toBe(0);
    const states = (JSON.parse(list.stdout) as { alg: string; state: string }[]).filter((key) => key.state === 'active');
    expect(states.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    // And with live keys again, the command rotates.
    const again = await cli(args);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { state: string }[]).filter((key) => key.state === 'pending')).toHaveLength(2);
  }, 60_000);
});
