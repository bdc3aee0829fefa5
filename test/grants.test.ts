import { describe, expect, it } from 'vitest';
import { issueAccessToken } from '../src/access-token.js';
import { MemoryStore, type Store } from '../src/index.js';
import { isGrantRevoked, revokeGrant, storeRefreshToken, refreshKey } from '../src/token/grants.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, USER_ID } from './fixtures.js';

/** A store that records every operation and can be switched to fail. */
function recordingStore(): Store & { log: string[]; failing: boolean } {
  const inner = new MemoryStore();
  const store = {
    log: [] as string[],
    failing: false,
    async get(key: string) {
      store.log.push(`get ${key.split(':')[0]}`);
      if (store.failing) throw new Error('store down');
      return inner.get(key);
    },
    set: (key: string, value: string, ttl: number) => inner.set(key, value, ttl),
    take: (key: string) => inner.take(key),
    delete: (key: string) => inner.delete(key),
    increment: (key: string, ttl: number) => inner.increment(key, ttl),
  };
  return store;
}

describe('grants', () => {
  it('revokeGrant marks the grant and deletes its live refresh token', async () => {
    const sentinel = makeSentinel();
    const { context } = sentinel;
    const absoluteExpiresAt = Math.floor(Date.now() / 1000) + 600;
    const input = { grantId: 'g-1', accountId: ACCOUNT, clientId: CLIENT_ID, userId: USER_ID, authTime: 1, absoluteExpiresAt };
    const first = await storeRefreshToken(context, input);
    const second = await storeRefreshToken(context, input);
    expect(await context.store.get(refreshKey(second!))).not.toBeNull();
    await revokeGrant(context, 'g-1');
    expect(await isGrantRevoked(context, 'g-1')).toBe(true);
    expect(await isGrantRevoked(context, 'g-2')).toBe(false);
    expect(await context.store.get(refreshKey(second!))).toBeNull();
    expect(first).not.toBe(second);
  });

  it('gives no refresh token once the absolute lifetime is over', async () => {
    const { context } = makeSentinel();
    const past = Math.floor(Date.now() / 1000) - 1;
    expect(
      await storeRefreshToken(context, {
        grantId: 'g',
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        userId: USER_ID,
        authTime: 1,
        absoluteExpiresAt: past,
      }),
    ).toBeNull();
  });

  it('verifyAccessToken leaves the store alone for consumer tokens and checks it for user tokens', async () => {
    const store = recordingStore();
    const sentinel = makeSentinel({ store });
    const consumer = await issueAccessToken(sentinel.context, {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      subject: 'c',
      grantType: 'client_credentials',
    });
    const user = await issueAccessToken(sentinel.context, {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      subject: USER_ID,
      grantType: 'authorization_code',
      grantId: 'g-9',
    });
    store.failing = true;
    await expect(sentinel.verifyAccessToken(consumer.token)).resolves.toMatchObject({ sub: 'c' });
    expect(store.log).toEqual([]);
    await expect(sentinel.verifyAccessToken(user.token)).rejects.toThrow('store down');
    store.failing = false;
    await expect(sentinel.verifyAccessToken(user.token)).resolves.toMatchObject({ sub: USER_ID });
    await revokeGrant(sentinel.context, 'g-9');
    await expect(sentinel.verifyAccessToken(user.token)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('refuses a refresh token stored after its grant was revoked (a redemption that lost a race with a replay)', async () => {
    const sentinel = makeSentinel();
    const absoluteExpiresAt = Math.floor(Date.now() / 1000) + 600;
    await revokeGrant(sentinel.context, 'g-late');
    const late = await storeRefreshToken(sentinel.context, {
      grantId: 'g-late',
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      userId: USER_ID,
      authTime: 1,
      absoluteExpiresAt,
    });
    const live = await storeRefreshToken(sentinel.context, {
      grantId: 'g-live',
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      userId: USER_ID,
      authTime: 1,
      absoluteExpiresAt,
    });
    const post = (token: string) =>
      sentinel.handle({
        method: 'POST',
        path: `/sentinel/api/account/${ACCOUNT}/token`,
        query: new URLSearchParams(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: token,
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      });
    const refused = await post(late!);
    expect(refused?.status).toBe(400);
    expect(JSON.parse(refused?.body ?? '{}').error).toBe('invalid_grant');
    expect((await post(live!))?.status).toBe(200);
  });
});
