/**
 * A refresh whose every compare-and-set on the grant loses to the client's own concurrent writes (here: revocations of
 * the grant's access tokens landing between each read and swap) is contention, not a failure: the client hears a
 * retryable 503 with Retry-After, never invalid_grant (its token is still good) nor a 500 reported to onError, and
 * the same refresh token works once the writes stop.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { exchangeCode, jsonOf, postForm, signIn, TOKEN_PATH, useRefreshToken } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';
import { racingStore } from './helpers/racing-store.js';

describe('refresh_token grant under contention', () => {
  it('answers 503 temporarily_unavailable with Retry-After when every rotation loses; the token stays usable', async () => {
    const store = racingStore(new MemoryStore(), (key) => key.startsWith('grant:'));
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => errors.push(error) });
    const { code, verifier } = await signIn(sentinel);
    let tokens = jsonOf(await exchangeCode(sentinel, code, verifier));
    const accessTokens = [tokens.access_token as string];
    for (let i = 0; i < 7; i++) {
      tokens = jsonOf(await useRefreshToken(sentinel, tokens.refresh_token as string));
      accessTokens.push(tokens.access_token as string);
    }
    const revoke = (token: string) =>
      postForm(
        sentinel,
        `${TOKEN_PATH}/revoke`,
        new URLSearchParams({ token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      );
    // Each read of the grant lets one of the client's revocations land before the refresh's swap.
    const pending = [...accessTokens];
    const revocations: Promise<unknown>[] = [];
    const next = async (): Promise<void> => {
      const token = pending.shift();
      if (token === undefined) return;
      const revoked = revoke(token);
      revocations.push(revoked);
      await revoked;
      if (pending.length > 0) store.arm(next);
    };
    store.arm(next);
    const refreshed = await useRefreshToken(sentinel, tokens.refresh_token as string);
    const statuses = (await Promise.all(revocations)).map((response) => (response as { status: number }).status);
    // The refresh's first read and each of its five swaps' re-reads: six of the client's revocations, all done.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(refreshed.status, refreshed.body).toBe(503);
    expect(jsonOf(refreshed).error).toBe('temporarily_unavailable');
    expect(refreshed.headers['retry-after']).toBe('1');
    expect(refreshed.headers['cache-control']).toBe('no-store');
    expect(errors).toEqual([]);
    // Nothing was spent: the same refresh token rotates once the client's writes are over.
    const retried = await useRefreshToken(sentinel, tokens.refresh_token as string);
    expect(retried.status, retried.body).toBe(200);
  });
});
