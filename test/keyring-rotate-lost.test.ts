/**
 * `rotateKeys()` (and `revokeKey()`) on a store that lost the ring: the instance puts back the ring it holds before
 * changing it, as its scheduled refresh does, instead of writing a ring of new keys that orphans every token signed.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';
import { consumerToken } from './helpers/direct-flow.js';
import { kidOf } from './helpers/jwt.js';
import { acceptsConsumerToken, ringInstance } from './helpers/ring-instance.js';

/** Two instances on one store, a token signed by the first, then the store loses the ring. */
async function ringLostAfterAToken() {
  const store = new MemoryStore();
  const [a, b] = [ringInstance(store), ringInstance(store)];
  await Promise.all([a.ready(), b.ready()]);
  const token = await consumerToken(a);
  const kid = kidOf(token);
  await store.delete('keyring:default');
  return { store, a, b, token, kid };
}

describe('rotating a ring the store lost', () => {
  it('rotateKeys() puts back the keys the instance holds, so tokens signed so far still verify everywhere', async () => {
    const { store, a, b, token, kid } = await ringLostAfterAToken();
    const listed = await a.rotateKeys();
    expect(listed.find((key) => key.kid === kid)?.state).toBe('active');
    expect(listed.filter((key) => key.state === 'pending')).toHaveLength(1);
    expect(a.jwks().keys.map((key) => key.kid)).toContain(kid);
    expect(await acceptsConsumerToken(a, token)).toBe(true);
    const stored = JSON.parse((await store.get('keyring:default')) as string) as { keys: { kid: string }[] };
    expect(stored.keys.map((entry) => entry.kid)).toContain(kid);
    // Another instance reading the store next keeps the key too.
    await b.jwksAsync();
    expect(await acceptsConsumerToken(b, token)).toBe(true);
  });

  it('revokeKey() revokes the key in the ring it puts back, instead of finding no key and leaving it to come back live', async () => {
    const { store, a, token, kid } = await ringLostAfterAToken();
    expect(await a.revokeKey(kid)).toBe(true);
    expect(await acceptsConsumerToken(a, token)).toBe(false);
    const stored = JSON.parse((await store.get('keyring:default')) as string) as { keys: { kid: string; revokedAt?: number }[] };
    expect(stored.keys.find((entry) => entry.kid === kid)?.revokedAt).toBeTypeOf('number');
    expect(stored.keys.filter((entry) => entry.revokedAt === undefined)).toHaveLength(1);
  });
});
