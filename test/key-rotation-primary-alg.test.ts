/**
 * A key ring whose first algorithm (the one that signs access tokens) changes: the new algorithm's key is published
 * for `prePublishSeconds` before it signs, like any rotated-in key, and the algorithm that signed so far keeps signing
 * meanwhile. Instances share one MemoryStore; time moves with a faked `Date` only.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelOptions, type SigningAlgorithm, type Store } from '../src/index.js';
import { consumerToken } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { kidOf } from './helpers/jwt.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64url');
const PRE_PUBLISH_SECONDS = 20;

function instance(store: Store, algorithms: SigningAlgorithm[]): Sentinel {
  const keyRotation: NonNullable<SentinelOptions['keyRotation']> = {
    encryptionKey: ENCRYPTION_KEY,
    algorithms,
    rotateEverySeconds: 600,
    prePublishSeconds: PRE_PUBLISH_SECONDS,
    refreshSeconds: 10,
  };
  return makeSentinel({ keys: undefined, store, jwksMaxAge: 10, accessTokenTtl: 120, idTokenTtl: 60, keyRotation });
}

let now = Date.UTC(2026, 0, 1);
function advance(seconds: number): void {
  now += seconds * 1000;
  vi.setSystemTime(now);
}

afterEach(() => {
  vi.useRealTimers();
});

/** The kid of the ring's key of `alg`, as the instance publishes it. */
function kidOfAlg(sentinel: Sentinel, alg: SigningAlgorithm): string | undefined {
  return sentinel.jwks().keys.find((key) => key.alg === alg)?.kid;
}

describe('keyRotation: a new first algorithm', () => {
  it('is published before it signs; the algorithm that signed so far signs meanwhile', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const store = new MemoryStore();
    const before = instance(store, ['ES256']);
    await before.ready();
    const es256 = kidOf(await consumerToken(before));
    advance(60);

    // A deployment that makes EdDSA the first algorithm: its key is new to every cached JWKS.
    const after = instance(store, ['EdDSA', 'ES256']);
    await after.ready();
    const eddsa = kidOfAlg(after, 'EdDSA');
    expect(eddsa).toBeDefined();
    expect(kidOf(await consumerToken(after))).toBe(es256);
    advance(PRE_PUBLISH_SECONDS - 1);
    expect(kidOf(await consumerToken(after))).toBe(es256);
    advance(1);
    expect(kidOf(await consumerToken(after))).toBe(eddsa);
  });

  it('an instance whose first algorithm is pending (added second elsewhere) starts and signs with the next one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const store = new MemoryStore();
    const first = instance(store, ['ES256']);
    await first.ready();
    advance(60);
    // EdDSA joins as a second algorithm: pending for prePublishSeconds.
    const second = instance(store, ['ES256', 'EdDSA']);
    await second.ready();
    const es256 = kidOfAlg(second, 'ES256');
    const eddsa = kidOfAlg(second, 'EdDSA');
    // Then a deployment makes it the first before it activated: it starts, and signs with ES256 until then.
    const third = instance(store, ['EdDSA', 'ES256']);
    await third.ready();
    expect(kidOf(await consumerToken(third))).toBe(es256);
    advance(PRE_PUBLISH_SECONDS);
    expect(kidOf(await consumerToken(third))).toBe(eddsa);
  });
});

describe('keyRotation: an algorithm dropped from `algorithms`', () => {
  // retainSeconds defaults to max(accessTokenTtl, idTokenTtl) + clockTolerance = 125.
  const RETAIN_SECONDS = 125;

  it('retires its last key once the instances that dropped it rotate, after the retention', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const store = new MemoryStore();
    const before = instance(store, ['ES256', 'EdDSA']);
    await before.ready();
    const eddsa = kidOfAlg(before, 'EdDSA');
    expect(eddsa).toBeDefined();

    // A deployment without EdDSA replaces every instance; the next scheduled rotation marks the EdDSA key.
    const after = instance(store, ['ES256']);
    await after.ready();
    advance(600);
    await after.jwksAsync();
    const kids = () => after.jwksAsync().then((jwks) => jwks.keys.map((key) => key.kid));
    // An instance of the old deployment may still sign with it until its next read: it stays past that and the retention.
    advance(10 + RETAIN_SECONDS - 1);
    expect(await kids()).toContain(eddsa);
    // Listed as retired from the mark's instant on, as its JWKS entry counts down the retention.
    expect((await after.rotateKeys()).find((key) => key.kid === eddsa)?.state).toBe('retired');
    advance(1);
    expect(await kids()).not.toContain(eddsa);
    // And it leaves the stored ring, sealed private key and all, at its next write (the next scheduled rotation).
    advance(600);
    await after.jwksAsync();
    const ring = JSON.parse((await store.get('keyring:default')) as string) as { keys: { kid: string }[] };
    expect(ring.keys.map((key) => key.kid)).not.toContain(eddsa);
  });

  it('keeps it while an instance that still lists it runs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    const store = new MemoryStore();
    const marks = async () => {
      const ring = JSON.parse((await store.get('keyring:default')) as string) as { keys: { alg: string; retiresAt?: number }[] };
      return ring.keys.filter((key) => key.retiresAt !== undefined).map((key) => key.alg);
    };
    const old = instance(store, ['ES256', 'EdDSA']);
    await old.ready();
    const eddsa = kidOfAlg(old, 'EdDSA');
    const current = instance(store, ['ES256']);
    await current.ready();
    advance(600);
    await current.jwksAsync(); // rotates, marking the EdDSA key
    expect(await marks()).toEqual(['EdDSA']);
    advance(10);
    await old.jwksAsync(); // reads the ring again: it signs with EdDSA, so it takes the mark off
    expect(await marks()).toEqual([]);
    // Its EdDSA key rotated meanwhile: the one it replaced retires by the ordinary rule, no earlier.
    advance(10 + RETAIN_SECONDS - 1);
    expect((await current.jwksAsync()).keys.map((key) => key.kid)).toContain(eddsa);
  });
});
