/**
 * A code exchange whose swap landed (code spent, grant written) but whose grant then could not join the session
 * index because the store failed: the grant goes and the code comes back, so the 500 can simply be retried, as the
 * guides promise. A session that ended is no store failure: the code stays spent. An undo that fails too loses the
 * code, and both failures reach onError (MemoryStore; the same on a real Redis out of memory is in
 * index-undo-redis.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { jsonOf } from './helpers/direct-flow.js';
import { grantIdForCode } from '../src/token/code-records.js';
import { failingSwaps, writesIndex } from './helpers/failing-swaps.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { codeThroughSession, MAIN_APP, redeemCode, signInWithSession, tokenStanding, tokensOf } from './helpers/logout-flow.js';

const USER = { accountId: ACCOUNT, userId: USER_ID };
const LIVE = { guard: true, introspection: true, refresh: true };

/** A service on a MemoryStore whose swaps the test can fail, signed in once; a second code through that session. */
async function pendingCode() {
  const memory = new MemoryStore();
  const failing = failingSwaps(memory);
  const errors: unknown[] = [];
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ store: failing.store, onError: (error) => errors.push(error), onEvent: (event) => events.push(event) });
  const { cookie, tokens } = await signInWithSession(sentinel);
  const pending = await codeThroughSession(sentinel, MAIN_APP, cookie);
  return { sentinel, memory, failing, errors, events, sid: tokens.sid, ...pending };
}

/** Which of `gids` the store still holds a grant for. */
async function grantsHeld(memory: MemoryStore, gids: string[]): Promise<string[]> {
  const held: string[] = [];
  for (const gid of gids) if ((await memory.get(`grant:{${gid}}`)) !== null) held.push(gid);
  return held;
}

describe('a code whose grant could not join the session index', () => {
  it('answers 500 and is put back, so the retry gets tokens that work', async () => {
    const { sentinel, failing, errors, events, code, verifier } = await pendingCode();
    failing.fail(writesIndex);
    const failed = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect([failed.status, jsonOf(failed).error]).toEqual([500, 'server_error']);
    expect(errors).toEqual([failing.failed[0]]);
    const retried = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect(retried.status, retried.body).toBe(200);
    const tokens = tokensOf(MAIN_APP, jsonOf(retried));
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(LIVE);
    // Listed with its session (two grants of the app: the sign-in's and this one), and nothing read as a replay.
    expect(await sentinel.listUserGrants(USER)).toMatchObject([{ clientId: MAIN_APP.clientId, grants: 2 }]);
    expect(events.filter((event) => event.type === 'code.replayed' || event.type === 'grant.ended')).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('stays spent when the session ended: invalid_grant now and on every retry, and no grant', async () => {
    const { sentinel, memory, errors, sid, code, verifier } = await pendingCode();
    await sentinel.endSession({ accountId: ACCOUNT, sid });
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await redeemCode(sentinel, MAIN_APP, code, verifier);
      expect([refused.status, jsonOf(refused).error], `attempt ${attempt}`).toEqual([400, 'invalid_grant']);
    }
    expect(await sentinel.listUserGrants(USER)).toEqual([]);
    expect(await memory.get(`code:{${grantIdForCode(code)}}`)).toBeNull();
    expect(errors).toEqual([]);
  });

  it('is lost when putting it back fails as well: 500 with both failures reported, then invalid_grant, no grant', async () => {
    const { sentinel, memory, failing, errors, code, verifier } = await pendingCode();
    failing.fail(writesIndex);
    // The undo: the one swap that writes a code key back.
    failing.fail((entries) => entries.some((entry) => entry.key.startsWith('code:') && entry.value !== null));
    const failed = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect([failed.status, jsonOf(failed).error]).toEqual([500, 'server_error']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(AggregateError);
    expect((errors[0] as AggregateError).errors).toEqual(failing.failed);
    expect(failing.failed).toHaveLength(2);
    const retried = await redeemCode(sentinel, MAIN_APP, code, verifier);
    expect([retried.status, jsonOf(retried).error]).toEqual([400, 'invalid_grant']);
    // Revoked all the same: no grant lives outside the index.
    expect(await grantsHeld(memory, [grantIdForCode(code)])).toEqual([]);
  });
});
