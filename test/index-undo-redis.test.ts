import { describe, expect, it } from 'vitest';
import type { Store, SwapEntry } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { grantIdForCode } from '../src/token/code-records.js';
import { jsonOf } from './helpers/direct-flow.js';
import { writesIndex } from './helpers/failing-swaps.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { codeThroughSession, MAIN_APP, redeemCode, signInWithSession, tokensOf } from './helpers/logout-flow.js';
import { redisServerBinary, usePrivateRedis } from './helpers/redis.js';

const binary = redisServerBinary('index-undo-redis');
const OOM = /OOM command not allowed/;

describe.skipIf(binary.skip)('a session-index write refused by a full Redis', () => {
  const { connect } = usePrivateRedis(binary, ['--maxmemory-policy', 'noeviction'], { maxRetriesPerRequest: 1 });

  /**
   * A RedisStore whose next index write once armed meets a Redis with no room: `maxmemory` drops to 1 byte just
   * before it, and comes back at once after it (`roomForUndo`) or only when the test calls `room()`.
   */
  function fullAtIndexWrite(prefix: string, roomForUndo: boolean) {
    const admin = connect();
    const inner = new RedisStore(connect(), { prefix });
    let armed = false;
    const room = () => admin.config('SET', 'maxmemory', '0');
    const store = new Proxy(inner, {
      get(target, property) {
        if (property === 'swap') {
          return async (entries: readonly SwapEntry[]) => {
            if (!armed || !writesIndex(entries)) return target.swap(entries);
            armed = false;
            await admin.config('SET', 'maxmemory', '1');
            try {
              return await target.swap(entries);
            } finally {
              if (roomForUndo) await room();
            }
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const arm = () => {
      armed = true;
    };
    return { store, admin, arm, room };
  }

  async function exchangeOnFullRedis(prefix: string, roomForUndo: boolean) {
    const { store, admin, arm, room } = fullAtIndexWrite(prefix, roomForUndo);
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => errors.push(error) });
    const { cookie } = await signInWithSession(sentinel);
    const { code, verifier } = await codeThroughSession(sentinel, MAIN_APP, cookie);
    arm();
    const failed = await redeemCode(sentinel, MAIN_APP, code, verifier);
    await room();
    const grantLeft = await admin.get(`${prefix}grant:{${grantIdForCode(code)}}`);
    const retried = await redeemCode(sentinel, MAIN_APP, code, verifier);
    return { sentinel, errors, failed, grantLeft, retried };
  }

  it('answers 500 and puts the code back: the retry gets tokens, listed with their session', async () => {
    const { sentinel, errors, failed, grantLeft, retried } = await exchangeOnFullRedis('undo:', true);
    expect([failed.status, jsonOf(failed).error]).toEqual([500, 'server_error']);
    expect(grantLeft).toBeNull();
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toMatch(OOM);
    expect(retried.status, retried.body).toBe(200);
    const tokens = tokensOf(MAIN_APP, jsonOf(retried));
    expect((await sentinel.checkBearer(`Bearer ${tokens.accessToken}`, { accountId: ACCOUNT })).ok).toBe(true);
    expect(await sentinel.listUserGrants({ accountId: ACCOUNT, userId: USER_ID })).toMatchObject([{ grants: 2 }]);
  });

  it('loses the code when Redis is still full at the undo, reports both refusals, and leaves no grant', async () => {
    const { errors, failed, grantLeft, retried } = await exchangeOnFullRedis('lost:', false);
    expect([failed.status, jsonOf(failed).error]).toEqual([500, 'server_error']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AggregateError);
    const both = (errors[0] as AggregateError).errors as Error[];
    expect(both.map((error) => OOM.test(error.message))).toEqual([true, true]);
    expect([retried.status, jsonOf(retried).error]).toEqual([400, 'invalid_grant']);
    // Revoked all the same (a DEL needs no memory): no grant lives outside the index.
    expect(grantLeft).toBeNull();
  });
});
