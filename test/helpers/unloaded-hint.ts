/**
 * A service whose key ring lives in a store that can be made to fail its reads, and an `id_token_hint` naming a key
 * this instance has not loaded: checking the hint reloads the ring (unknown-kid.ts), so with the store failing the
 * check fails inside. Shared by the tests of what the authorization and PAR endpoints answer then.
 */
import { randomBytes } from 'node:crypto';
import { MemoryStore, type Sentinel } from '../../src/index.js';
import { makeSentinel } from './fixtures.js';

/** A memory store whose reads fail once `failing` is set (the key ring's reload is a read); it records writes then. */
export class FailingReadStore extends MemoryStore {
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

/**
 * A ready service on a {@link FailingReadStore} (still answering), what reached its `onError`, and a hint whose
 * unknown kid makes its check reload the ring. Only the kid matters: the reload runs before any signature is checked.
 * @example const { sentinel, store, errors, hint } = await unloadedHintSentinel(); store.failing = true;
 */
export async function unloadedHintSentinel(): Promise<{ sentinel: Sentinel; store: FailingReadStore; errors: unknown[]; hint: string }> {
  const store = new FailingReadStore();
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    keys: undefined,
    store,
    keyRotation: { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360 },
    onError: (error) => void errors.push(error),
  });
  await sentinel.ready();
  const hint = `${part({ alg: 'ES256', typ: 'JWT', kid: 'not-loaded-here' })}.${part({ sub: 'u' })}.${randomBytes(64).toString('base64url')}`;
  return { sentinel, store, errors, hint };
}
