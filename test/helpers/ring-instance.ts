/**
 * Instances of one service sharing a key ring in a store: ES256 only, a rotation every 600 s pre-published 20 s
 * ahead, a ring refreshed every 10 s and short token lives, so the tests of a ring shared, rotated, revoked or lost
 * can move time past each step.
 */
import { randomBytes } from 'node:crypto';
import { vi } from 'vitest';
import type { Sentinel, SentinelOptions, Store } from '../../src/index.js';
import { ACCOUNT, CONSUMER_UUID, makeSentinel } from './fixtures.js';

/** The encryption key the instances seal their private keys with, unless a test gives another. */
export const RING_ENCRYPTION_KEY = randomBytes(32).toString('base64url');

/**
 * The ring's rotation settings: ES256 alone (so each case counts one key per rotation), a rotation every 600 s
 * pre-published 20 s ahead, refreshed every 10 s; `overrides` change any of them.
 * @example makeSentinel({ keys: undefined, store, keyRotation: ringRotation({ prePublishSeconds: 15 }) });
 */
export function ringRotation(
  overrides: Partial<NonNullable<SentinelOptions['keyRotation']>> = {},
): NonNullable<SentinelOptions['keyRotation']> {
  return {
    encryptionKey: RING_ENCRYPTION_KEY,
    algorithms: ['ES256'],
    rotateEverySeconds: 600,
    prePublishSeconds: 20,
    refreshSeconds: 10,
    ...overrides,
  };
}

/**
 * One instance on `store`; `overrides` replace any option last.
 * @example const [a, b] = [ringInstance(store), ringInstance(store)]; await Promise.all([a.ready(), b.ready()]);
 */
export function ringInstance(
  store: Store,
  options: { encryptionKey?: string; onError?: (error: unknown) => void } = {},
  overrides: Partial<SentinelOptions> = {},
): Sentinel {
  return makeSentinel({
    keys: undefined,
    store,
    jwksMaxAge: 10,
    accessTokenTtl: 120,
    idTokenTtl: 60,
    keyRotation: ringRotation(options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...overrides,
  });
}

/** Whether `sentinel`'s guard accepts a consumer-bound token of the fixtures' account and consumer. */
export async function acceptsConsumerToken(sentinel: Sentinel, token: string): Promise<boolean> {
  return (await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok;
}

/**
 * Fakes `Date` alone (timers keep real time, so the ring's reloads still run) from 2026-01-01 and returns what moves
 * it on; the test's `afterEach` ends it with `vi.useRealTimers()`. The ring's timings (pre-publication, refresh,
 * retention) all read `Date`.
 * @example const advance = fakeRingDate(); advance(10); // past refreshSeconds
 */
export function fakeRingDate(): (seconds: number) => void {
  let now = Date.UTC(2026, 0, 1);
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now);
  return (seconds) => {
    now += seconds * 1000;
    vi.setSystemTime(now);
  };
}
