/**
 * An `id_token_hint` signed by a key this instance has not loaded reloads the key ring once (unknown-kid.ts). When
 * the store fails during that reload, the redirect URI is already validated: the browser goes back to the app with
 * `server_error`, `state` and `iss`, as for every other failure after that point, the failure goes to `onError`, and
 * nothing is issued or stored (no interaction, no code).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';

/** A memory store whose reads fail once `failing` is set (the key ring's reload is a read). */
class FailingReadStore extends MemoryStore {
  failing = false;
  readonly writes: string[] = [];

  override async get(key: string): Promise<string | null> {
    if (this.failing) throw new Error('store unavailable');
    return super.get(key);
  }

  override async set(key: string, value: string, ttlMs: number): Promise<void> {
    if (this.failing) this.writes.push(key);
    return super.set(key, value, ttlMs);
  }
}

const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('id_token_hint when the key ring cannot be reloaded', () => {
  it('redirects server_error with state and iss, reports to onError, issues nothing', async () => {
    const store = new FailingReadStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      keys: undefined,
      store,
      keyRotation: { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360 },
      onError: (error) => void errors.push(error),
    });
    await sentinel.ready();
    // Only the unknown kid matters: the reload runs before any signature is checked.
    const hint = `${part({ alg: 'ES256', typ: 'JWT', kid: 'not-loaded-here' })}.${part({ sub: 'u' })}.${randomBytes(64).toString('base64url')}`;
    store.failing = true;
    const response = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: authorizeQuery({ scope: 'openid', id_token_hint: hint }),
    });
    expect(response.status, response.body).toBe(302);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('server_error');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('iss')).toBeTruthy();
    expect(location.searchParams.get('code')).toBeNull();
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
    expect(store.writes).toEqual([]);
  });
});
