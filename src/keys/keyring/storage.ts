/**
 * Reading and writing the ring document in a {@link Store}. Writers serialise on a lock key taken with the
 * Store's atomic `increment` (the first caller of a window sees 1), so two instances that decide to rotate at the
 * same moment produce one new key: the second one re-reads the document under the lock and finds the rotation done.
 *
 * The lock is a lease (it frees itself after {@link LOCK_MS}), so it cannot by itself keep a writer that stalled
 * past it from writing over what the next writer stored — a revocation among them. The write is therefore a
 * compare-and-set on the document as read: a writer whose document changed meanwhile reads it again and re-applies
 * its change, so no change is ever lost; the lock only saves duplicate work.
 */
import type { Store } from '../../stores/store.js';
import { parseDocument, type RingDocument } from './document.js';

/** The ring never expires by itself; Store.set needs a lifetime, so give it ten years. */
const FOREVER_MS = 10 * 365 * 86_400_000;
/** A crashed writer's lock frees itself after this long; a write takes milliseconds (an RSA key generation ~0.1 s). */
const LOCK_MS = 10_000;
const LOCK_POLL_MS = 25;
/** How often a write whose document changed under it is re-applied before it gives up. */
const WRITE_ATTEMPTS = 5;

/** Store key of the ring document. */
export const ringKey = (name: string): string => `keyring:${name}`;
const lockKey = (name: string): string => `keyring-lock:${name}`;

/** The stored document, or `null` when the store has none. */
export async function readRing(store: Store, name: string): Promise<RingDocument | null> {
  const text = await store.get(ringKey(name));
  return text === null ? null : parseDocument(text);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `mutate` on the current document under the ring's lock and stores what it returns (with the revision
 * bumped); `null` means nothing to change. With `wait: false`, a lock held elsewhere returns `undefined` at once
 * (someone else is writing; the next refresh will see their result).
 */
export async function updateRing(
  store: Store,
  name: string,
  mutate: (current: RingDocument | null) => RingDocument | null,
  options: { wait: boolean } = { wait: true },
): Promise<RingDocument | null | undefined> {
  const deadline = Date.now() + LOCK_MS;
  while ((await store.increment(lockKey(name), LOCK_MS)) !== 1) {
    if (!options.wait) return undefined;
    if (Date.now() > deadline) throw new Error('the key ring lock stayed held by another writer');
    await sleep(LOCK_POLL_MS);
  }
  try {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const text = await store.get(ringKey(name));
      const current = text === null ? null : parseDocument(text);
      const next = mutate(current);
      if (next === null) return current;
      const written: RingDocument = { ...next, revision: (current?.revision ?? 0) + 1 };
      const value = JSON.stringify(written);
      if (await store.swap([{ key: ringKey(name), expect: text, value, ttlMs: FOREVER_MS }])) return written;
    }
    throw new Error('the key ring document kept changing while it was being written');
  } finally {
    await store.delete(lockKey(name)).catch(() => {
      // The lock expires by itself; a failed release only delays the next writer.
    });
  }
}
