/**
 * An access-token revocation whose every compare-and-set on the grant loses to other writers (here: the client's own
 * refreshes, landing between each read and swap) is contention, not a failure: RFC 7009 §2.2.1's 503 with
 * Retry-After (the client assumes the token still exists and retries), not a 500 reported to onError; the retry
 * revokes it.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { exchangeCode, jsonOf, postForm, signIn, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';

describe('access token revocation under contention', () => {
  it('answers 503 with Retry-After when every write loses; the token stays live until the retry revokes it', async () => {
    const store = racingStore(new MemoryStore(), (key) => key.startsWith('grant:'));
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => errors.push(error) });
    const { code, verifier } = await signIn(sentinel);
    const first = jsonOf(await exchangeCode(sentinel, code, verifier));
    const accessToken = first.access_token as string;
    let refreshToken = first.refresh_token as string;
    // Each read of the grant lets one of the client's refreshes land before the revocation's swap.
    const refreshes: Promise<unknown>[] = [];
    let more = true;
    const refreshOnce = async (): Promise<void> => {
      const sent = useRefreshToken(sentinel, refreshToken);
      refreshes.push(sent);
      refreshToken = jsonOf(await sent).refresh_token as string;
      if (more) store.arm(refreshOnce);
    };
    store.arm(refreshOnce);
    const revoke = () =>
      postForm(
        sentinel,
        `${TOKEN_PATH}/revoke`,
        new URLSearchParams({ token: accessToken, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      );
    const busy = await revoke();
    more = false;
    const statuses = (await Promise.all(refreshes)).map((response) => (response as { status: number }).status);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(busy.status, busy.body).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    // Not a safelisted response header: a browser app (a public client signing out) reads it only when exposed.
    expect(String(busy.headers['access-control-expose-headers'])).toMatch(/(^|, )Retry-After(,|$)/);
    expect(jsonOf(busy).error).toBe('temporarily_unavailable');
    expect(errors).toEqual([]);
    // Not revoked, as RFC 7009 §2.2.1 tells the client to assume; the retry revokes it.
    await sentinel.verifyAccessToken(accessToken, { accountId: ACCOUNT });
    expect((await revoke()).status).toBe(200);
    await expect(sentinel.verifyAccessToken(accessToken, { accountId: ACCOUNT })).rejects.toThrow();
  });
});
