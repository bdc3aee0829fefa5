/**
 * A pushed request whose validation fails inside (the store failing while an `id_token_hint` reloads the key ring)
 * is a `500 server_error` JSON answer at the PAR endpoint, reported to `onError`, with nothing stored: the redirect
 * the authorization endpoint would send instead has no place in a JSON answer to the client (RFC 9126 §2.3).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { ACCOUNT_PATH, postForm } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';

/** A memory store whose reads fail once `failing` is set (the key ring's reload is a read); it records writes then. */
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

describe('a pushed request whose validation fails inside', () => {
  it('answers 500 server_error as JSON, reports the cause to onError and stores nothing', async () => {
    const store = new FailingReadStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      keys: undefined,
      store,
      keyRotation: { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360 },
      onError: (error) => void errors.push(error),
    });
    await sentinel.ready();
    // An unknown kid: the hint's check reloads the ring from the store, which fails.
    const hint = `${part({ alg: 'ES256', typ: 'JWT', kid: 'not-loaded-here' })}.${part({ sub: 'u' })}.${randomBytes(64).toString('base64url')}`;
    store.failing = true;
    const response = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/par`,
      new URLSearchParams({
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state: 'st-1',
        id_token_hint: hint,
      }).toString(),
    );
    expect(response.status, response.body).toBe(500);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ error: 'server_error' });
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
    expect(store.writes.filter((key) => key.startsWith('par:'))).toEqual([]);
  });
});
