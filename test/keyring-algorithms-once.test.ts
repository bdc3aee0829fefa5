/**
 * `keyRotation.algorithms` naming an algorithm twice: a rotation makes one key per algorithm, so the ring got the
 * same key twice under one kid, and every instance then failed to load it (a duplicate kid) from the first rotation
 * on. Such options are refused at start, and a ring already written that way loads again.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../src/config.js';
import { ConfigurationError, MemoryStore, type SentinelOptions, type Store } from '../src/index.js';
import { ACCOUNT, baseOptions, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { consumerToken } from './helpers/direct-flow.js';
import { kidOf } from './helpers/jwt.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64url');

function rotation(algorithms: ('ES256' | 'RS256')[]): NonNullable<SentinelOptions['keyRotation']> {
  return { encryptionKey: ENCRYPTION_KEY, algorithms, rotateEverySeconds: 600, prePublishSeconds: 20, refreshSeconds: 10 };
}

function options(store: Store, algorithms: ('ES256' | 'RS256')[]): Partial<SentinelOptions> {
  return { keys: undefined, store, jwksMaxAge: 10, accessTokenTtl: 120, idTokenTtl: 60, keyRotation: rotation(algorithms) };
}

describe('keyRotation.algorithms names each algorithm once', () => {
  it('refuses an algorithm named twice at start, naming the field', () => {
    const twice = options(new MemoryStore(), ['ES256', 'RS256', 'ES256']);
    expect(() => makeSentinel(twice)).toThrow(ConfigurationError);
    expect(() => makeSentinel(twice)).toThrow(/keyRotation\.algorithms: must name each algorithm once/);
    expect(configProblems(baseOptions(twice))).toContainEqual({
      field: 'keyRotation.algorithms',
      message: 'must name each algorithm once',
    });
  });

  it('loads a ring that holds a key twice under one kid, as such options wrote it, and publishes it once', async () => {
    const store = new MemoryStore();
    const first = makeSentinel(options(store, ['ES256']));
    await first.ready();
    await first.rotateKeys();
    const stored = JSON.parse((await store.get('keyring:default')) as string) as { revision: number; keys: unknown[] };
    // Each entry written a second time, as a rotation of ['ES256', 'ES256'] did.
    await store.set(
      'keyring:default',
      JSON.stringify({ ...stored, revision: stored.revision + 1, keys: [...stored.keys, ...stored.keys] }),
      60_000,
    );
    const second = makeSentinel(options(store, ['ES256']));
    await second.ready();
    expect(second.jwks().keys).toHaveLength(2);
    const token = await consumerToken(second);
    expect(first.jwks().keys.map((key) => key.kid)).toContain(kidOf(token));
    expect((await second.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
  });
});
