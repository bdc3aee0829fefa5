/**
 * `sentinel.jwks()` and `sentinel.jwksAsync()` on an instance whose traffic never passes through its own routes (a
 * host serving the JWKS from a route of its own): a key revoked, or pre-published, by another instance of the store
 * must show there too, as on the service's own `jwks_uri`. Time moves with a faked `Date` only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { ringInstance, fakeRingDate } from './helpers/ring-instance.js';

const kids = (jwks: { keys: { kid?: string }[] }): (string | undefined)[] => jwks.keys.map((key) => key.kid);

afterEach(() => {
  vi.useRealTimers();
});

describe('jwks() on an instance that serves no route', () => {
  it('drops a key revoked on another instance once refreshSeconds have passed, and jwksAsync() at once then', async () => {
    const advance = fakeRingDate();
    const store = new MemoryStore();
    const [a, b, c] = [ringInstance(store), ringInstance(store), ringInstance(store)];
    await Promise.all([a.ready(), b.ready(), c.ready()]);
    const [kid] = kids(b.jwks());
    expect(await a.revokeKey(kid as string)).toBe(true);
    advance(10);
    // jwks() cannot wait: it answers from the ring it holds and reloads it behind, for its next call.
    await vi.waitFor(() => expect(kids(b.jwks())).not.toContain(kid));
    // jwksAsync() waits for the reload: its first answer is already without the key.
    expect(kids(await c.jwksAsync())).not.toContain(kid);
  });

  it('publishes a key pre-published on another instance', async () => {
    const advance = fakeRingDate();
    const store = new MemoryStore();
    const [a, b] = [ringInstance(store), ringInstance(store)];
    await Promise.all([a.ready(), b.ready()]);
    const ring = await a.rotateKeys();
    const next = ring.map((entry) => entry.kid).find((kid) => !kids(b.jwks()).includes(kid));
    expect(next).toBeDefined();
    advance(10);
    await vi.waitFor(() => expect(kids(b.jwks())).toContain(next));
    expect(kids(await b.jwksAsync())).toContain(next);
  });

  it('reports a failed background reload to onError and still answers the ring it holds', async () => {
    const advance = fakeRingDate();
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const b = ringInstance(store, { onError: (error) => errors.push(error) });
    await b.ready();
    const before = kids(b.jwks());
    store.get = () => Promise.reject(new Error('store down'));
    advance(10);
    expect(kids(b.jwks())).toEqual(before);
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    await expect(b.jwksAsync()).rejects.toThrow('store down');
  });
});
