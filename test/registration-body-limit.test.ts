/**
 * A registration body over `bodyLimit` is `413`, as the option says and every other endpoint answers (RFC 9110
 * §15.5.14), with the registration error code and `Connection: close`; nothing is stored.
 */
import { describe, expect, it } from 'vitest';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { BodyTooLargeError, type SentinelRequest } from '../src/index.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

const INITIAL = 'initial-access-token-for-tests';
const REGISTER = `/sentinel/api/account/${ACCOUNT}/register`;
const LIMIT = 1024;
const BIG = JSON.stringify({ grant_types: ['client_credentials'], client_name: 'x'.repeat(2 * LIMIT) });

function registration(headers: Record<string, string>, body: SentinelRequest['body']): SentinelRequest {
  return {
    method: 'POST',
    path: REGISTER,
    query: new URLSearchParams(),
    headers: { host: 'localhost', authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json', ...headers },
    body,
  };
}

describe('a registration body over bodyLimit', () => {
  it.each([
    ['declared by Content-Length', { 'content-length': String(BIG.length) }, () => BIG],
    ['handed over whole', {}, BIG],
    ['refused by the reader', {}, () => Promise.reject(new BodyTooLargeError(LIMIT))],
  ] as const)('is 413 invalid_client_metadata when %s, and registers nothing', async (_name, headers, body) => {
    const appStore = new MemoryAppStore([]);
    const sentinel = makeSentinel({ apps: [], appStore, bodyLimit: LIMIT, registration: { initialAccessToken: INITIAL } });
    const response = await sentinel.handle(registration(headers, body));
    expect(response?.status).toBe(413);
    expect(response?.headers.connection).toBe('close');
    expect(response?.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(response?.body ?? '{}')).toMatchObject({ error: 'invalid_client_metadata' });
    expect(await appStore.listApps(ACCOUNT)).toEqual([]);
  });
});
