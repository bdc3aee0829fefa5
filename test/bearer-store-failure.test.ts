/**
 * A bearer guard whose store fails, in every framework: the request gets a stack-free `503 server_error`, the cause
 * reaches `onError` (route `bearer`), and the framework's own error handling never sees it.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../src/token/access-token.js';
import { MemoryStore, type Store } from '../src/index.js';
import { ACCOUNT, CLIENT_ID, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { contextOf } from '../src/http/context.js';

const running: MountedHost[] = [];
afterEach(async () => {
  for (const host of running.splice(0)) await host.close();
});

/** A store whose reads fail while `down.on` is set; the failure message names no key. */
function flakyStore(down: { on: boolean }): Store {
  const inner = new MemoryStore();
  return {
    get: (key) => (down.on ? Promise.reject(new Error('store unreachable')) : inner.get(key)),
    set: (key, value, ttl) => inner.set(key, value, ttl),
    take: (key) => inner.take(key),
    delete: (key) => inner.delete(key),
    increment: (key, ttl) => inner.increment(key, ttl),
    swap: (entries) => inner.swap(entries),
  };
}

describe.each(HOSTS)('bearer guard with a failing store on $name', (host) => {
  it('answers 503 server_error without a stack, reports the cause to onError, and leaves the host alone', async () => {
    const down = { on: true };
    const reported: Array<{ error: unknown; route: string }> = [];
    const hostErrors: unknown[] = [];
    const sentinel = makeSentinel({ store: flakyStore(down), onError: (error, context) => reported.push({ error, route: context.route }) });
    const mounted = await host.mount(sentinel, { onHostError: (error) => hostErrors.push(error) });
    running.push(mounted);
    // A consumer-bound token that also names a grant: the guard must read the store to check that grant.
    const { token } = await issueAccessToken(contextOf(sentinel), {
      accountId: ACCOUNT,
      clientId: CLIENT_ID,
      subject: CONSUMER_UUID,
      grantType: 'client_credentials',
      grantId: 'grant-under-check',
    });
    const path = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`;
    const response = await request(mounted.server).get(path).set('authorization', `Bearer ${token}`);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: 'server_error', error_description: 'the access token could not be checked' });
    expect(response.text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(response.text).not.toContain('store unreachable');
    expect(reported).toHaveLength(1);
    expect(reported[0]?.route).toBe('bearer');
    expect(reported[0]?.error).toBeInstanceOf(Error);
    expect((reported[0]?.error as Error | undefined)?.message).toBe('store unreachable');
    expect(hostErrors).toEqual([]);

    // Store back: the grant does not exist, so the token is refused (fail closed), with the usual 401.
    down.on = false;
    const refused = await request(mounted.server).get(path).set('authorization', `Bearer ${token}`);
    expect(refused.status).toBe(401);
  });
});
