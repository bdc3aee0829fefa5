/**
 * The store loses the ring and an instance that holds none (one starting) reads it first: it makes a ring of new
 * keys. The running instances then adopted that ring and dropped the keys of every token signed so far; now they put
 * the keys they hold back into it, which stay (and verify) as long as the ring's retention keeps a retired key.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { consumerToken } from './helpers/direct-flow.js';
import { kidOf } from './helpers/jwt.js';
import { acceptsConsumerToken, ringInstance, fakeRingDate } from './helpers/ring-instance.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('a ring the store lost, replaced by a starting instance', () => {
  it('keeps the keys of the running instances, which verify their tokens until the retention ends', async () => {
    const advance = fakeRingDate();
    const store = new MemoryStore();
    const running = ringInstance(store);
    await running.ready();
    const token = await consumerToken(running);
    const kid = kidOf(token);
    await store.delete('keyring:default');
    advance(1);
    // A new instance starts before the running one looked again: it finds no ring and makes one.
    const starting = ringInstance(store);
    await starting.ready();
    advance(10);
    expect(await acceptsConsumerToken(running, token)).toBe(true);
    expect(running.jwks().keys.map((key) => key.kid)).toContain(kid);
    // The new key signs (it was made to sign at once); the old one is retired, kept for its tokens.
    const newer = await consumerToken(running);
    expect(kidOf(newer)).not.toBe(kid);
    expect(await acceptsConsumerToken(running, newer)).toBe(true);
    advance(10);
    expect(await acceptsConsumerToken(starting, token)).toBe(true);
    // Past the retention (the longest token lifetime plus clockTolerance), the old key is gone everywhere.
    advance(130);
    expect(running.jwks().keys.map((key) => key.kid)).not.toContain(kid);
  });

  it('puts nothing into a ring made under another encryption key, which its own instances then could not open', async () => {
    const advance = fakeRingDate();
    const store = new MemoryStore();
    const running = ringInstance(store);
    await running.ready();
    await store.delete('keyring:default');
    advance(1);
    const starting = ringInstance(store, { encryptionKey: randomBytes(32).toString('base64url') });
    await starting.ready();
    const token = await consumerToken(starting);
    advance(10);
    // The running instance cannot open the new ring (another encryptionKey): it fails closed, and writes nothing.
    await expect(acceptsConsumerToken(running, token)).rejects.toThrow(/keyRotation\.encryptionKey/);
    advance(10);
    expect(await acceptsConsumerToken(starting, token)).toBe(true);
    expect(await consumerToken(starting)).toBeTypeOf('string');
  });
});
