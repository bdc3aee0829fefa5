/**
 * Key ring writes against a writer that outlived its lock (issue 30, the read-await-act review). The ring's lock is
 * a lease: a writer that stalls past it (a paused process, a slow store) still writes the document it read before
 * the stall, over whatever the next lock holder stored meanwhile. When that was an emergency revocation, the revoked
 * key came back. The stall is made deterministic: the store runs the lease's expiry and a whole second write (a
 * revocation) right after the first writer read the document. MemoryStore and a real Redis.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Store } from '../src/index.js';
import type { RingDocument, RingEntry } from '../src/keys/keyring/document.js';
import { readRing, ringKey, updateRing } from '../src/keys/keyring/storage.js';
import { racingStore } from './helpers/racing-store.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';

function entry(kid: string, now: number): RingEntry {
  return { kid, alg: 'ES256', createdAt: now, activatesAt: now, publicJwk: { kty: 'EC', kid } };
}

function seed(now: number): RingDocument {
  return { v: 1, revision: 1, prePublishSeconds: 0, keys: [entry('k-old', now)] };
}

/** The rotation the stalled writer was doing: add a key. */
const addKey = (kid: string) => (current: RingDocument | null) =>
  current === null ? null : { ...current, keys: [...current.keys, entry(kid, Date.now())] };

/** The emergency revocation of the CLI, as the ring stores it. */
const revoke = (kid: string) => (current: RingDocument | null) =>
  current === null
    ? null
    : { ...current, keys: current.keys.map((key) => (key.kid === kid ? { ...key, revokedAt: Date.now(), sealed: undefined } : key)) };

function cases(name: string, storeOf: () => Store): void {
  describe(`${name}: a writer that outlived its lock loses no change`, () => {
    it('a revocation written while a stalled rotation held a stale document stays revoked (10 rounds)', async () => {
      for (let round = 0; round < 10; round += 1) {
        const inner = storeOf();
        const ringName = `race-${randomBytes(6).toString('hex')}`;
        await inner.set(ringKey(ringName), JSON.stringify(seed(Date.now())), 3_600_000);
        const store = racingStore(inner, (key) => key === ringKey(ringName));
        let revoked: RingDocument | null | undefined;
        store.arm(async () => {
          // The stalled writer's lease runs out, and the CLI's revocation takes the lock and writes.
          await inner.delete(`keyring-lock:${ringName}`);
          revoked = await updateRing(inner, ringName, revoke('k-old'));
        });
        const rotated = await updateRing(store, ringName, addKey('k-new'));
        expect(revoked?.keys.find((key) => key.kid === 'k-old')?.revokedAt, 'the revocation ran inside the stall').toBeTypeOf('number');
        const stored = (await readRing(inner, ringName)) as RingDocument;
        expect(stored.keys.map((key) => key.kid)).toEqual(['k-old', 'k-new']);
        expect(stored.keys[0]?.revokedAt, 'the revoked key came back').toBeTypeOf('number');
        expect(stored.revision).toBe(3);
        expect(rotated).toEqual(stored);
      }
    });

    it('without contention a write is one compare-and-set and bumps the revision once', async () => {
      const inner = storeOf();
      const ringName = `race-${randomBytes(6).toString('hex')}`;
      expect(await updateRing(inner, ringName, (current) => current ?? seed(Date.now()))).toMatchObject({ revision: 1 });
      expect(await updateRing(inner, ringName, addKey('k-2'))).toMatchObject({ revision: 2 });
      expect(await updateRing(inner, ringName, () => null)).toMatchObject({ revision: 2 });
    });
  });
}

cases('MemoryStore', () => new MemoryStore());

await describeOnSharedRedis('race-keyring', 'RedisStore', (newStore) => cases('RedisStore', newStore));
