/**
 * The login throttle's digest key (`throttle:digest-key`, kept in the store when neither `throttle.digestKey` nor
 * `keyRotation` gives one) across a restart of Redis that loses it: an instance that read it before and one that
 * reads it only after must still count one username under one counter, so guesses alternating between them reach
 * the user store `maxFailures` times in all, not per instance. A private redis-server without persistence,
 * started, killed and started again here.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Sentinel, SentinelOptions } from '../src/index.js';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel, USERNAME } from './helpers/fixtures.js';
import { redisServerBinary, usePrivateRedis } from './helpers/redis.js';

const binary = redisServerBinary('throttle-digest-redis');
const LIMITS = { maxFailures: 5, maxFailuresPerIp: 50, windowSeconds: 900 };
const DIGEST_KEY = 'digest:throttle:digest-key';

describe.skipIf(binary.skip)('the throttle digest key after Redis restarts empty', () => {
  const { server, connect } = usePrivateRedis(binary, [], redisClientOptions());

  /** Waits until `client` is connected (its offline queue is off, as `redisClientOptions()` asks). */
  async function reconnected(client: Redis): Promise<void> {
    for (let tries = 0; ; tries++) {
      try {
        await client.ping();
        return;
      } catch (error) {
        if (tries >= 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** A wrong password at `sentinel` from its own address, so that only the username counter can refuse it. */
  async function guess(sentinel: Sentinel, index: number): Promise<number> {
    const ip = `198.51.100.${index + 1}`;
    const { interaction } = await startInteraction(sentinel, undefined, ip);
    const csrf = await openLogin(sentinel, interaction);
    return (await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: `guess-${index}` }, ip)).status;
  }

  it('instances converge on one key: alternating guesses reach the user store maxFailures times in all', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const options = (client: Redis): Partial<SentinelOptions> => ({
      store: new RedisStore(client, { prefix: 'digest:' }),
      throttle: LIMITS,
      onError: (error) => errors.push(error),
      users: {
        authenticate: async () => {
          calls += 1;
          return null;
        },
      },
    });
    const [clientA, clientB, admin] = [connect(), connect(), connect()];
    await Promise.all([clientA, clientB, admin].map(reconnected));
    const a = makeSentinel(options(clientA));

    const b = makeSentinel(options(clientB));
    // A reads (makes) the stored key before the restart; B, which has not needed it yet, reads it only after.
    expect(await guess(a, 100)).toBe(200);
    const before = await admin.get(DIGEST_KEY);
    expect(before).not.toBeNull();

    await server.kill();
    await server.start();
    await Promise.all([clientA, clientB, admin].map(reconnected));
    expect(await admin.get(DIGEST_KEY)).toBeNull();

    calls = 0;
    const statuses: number[] = [];
    for (let index = 0; index < 4 * LIMITS.maxFailures; index++) statuses.push(await guess(index % 2 === 0 ? a : b, index));
    expect(calls).toBe(LIMITS.maxFailures);
    expect(statuses.slice(LIMITS.maxFailures)).toEqual(Array(3 * LIMITS.maxFailures).fill(429));
    // The instance that found it missing put back the key it held, so counting goes on under the same key.
    expect(await admin.get(DIGEST_KEY)).toBe(before);
    expect(errors).toEqual([]);

    // A new instance after the restart agrees with both: it counts on the same counter and is refused at once.
    const clientC = connect();
    await reconnected(clientC);
    const c = makeSentinel(options(clientC));
    expect(await guess(c, 200)).toBe(429);
    expect(calls).toBe(LIMITS.maxFailures);
  });
});
