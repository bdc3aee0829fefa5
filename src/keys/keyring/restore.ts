/**
 * Putting back a ring the store lost or emptied, and keeping the revocations this instance has seen: a key ring must
 * never go back to a state that orphans every token signed so far, nor bring a revoked key back into use.
 */
import type { Store } from '../../stores/store.js';
import { indexRing, isPublished, type RingDocument, type RingEntry } from './document.js';
import { assertOpens, revokeEntry } from './mutations.js';
import { updateRing } from './storage.js';

/** Whether `document` is no ring to use: missing, or without a live key (every token signed so far would be orphaned). */
export function isLost(document: RingDocument | null): boolean {
  return document === null || document.keys.every((entry) => entry.revokedAt !== undefined);
}

/**
 * Puts `held`, the live ring this instance holds, back in place of the lost ring `document` read from the store, and
 * resolves with what the store holds afterwards.
 */
export async function restoreRing(
  store: Store,
  name: string,
  document: RingDocument | null,
  held: RingDocument,
  encryptionKey: Buffer,
  report: (error: unknown) => void,
): Promise<RingDocument> {
  // The store lost the ring (a bounded MemoryStore evicted it, a Redis was replaced), or holds one without a live
  // key (emptied by hand or by a broken writer): put back the one this instance holds rather than start afresh,
  // which would orphan every token signed so far. An emptied ring is not a store's ordinary loss: reported.
  if (document !== null) {
    report(new Error(`the key ring "${name}" in the store has no live key: the keys this instance holds are put back`));
  }
  return (await updateRing(store, name, (current) => (isLost(current) ? restored(held, current, encryptionKey) : null))) ?? held;
}

/**
 * What a change made by this instance (`rotateKeys()`, `revokeKey()`) starts from: `current` as read under the lock,
 * or, when the store lost it and this instance holds a live ring, that ring put back (with the revocations `current`
 * records), as a refresh would. Started from nothing, a rotation would write a ring of new keys only, and every
 * instance would adopt it and drop the keys of every token signed so far; a revocation would find no key to revoke.
 */
export function ringToChange(current: RingDocument | null, held: RingDocument | undefined, encryptionKey: Buffer): RingDocument | null {
  return held !== undefined && !isLost(held) && isLost(current) ? restored(held, current, encryptionKey) : current;
}

/**
 * `held`, to put back in place of the lost ring `current`, with the revocations `current` still records: a key
 * revoked there while this instance held it live must not come back usable.
 */
function restored(held: RingDocument, current: RingDocument | null, encryptionKey: Buffer): RingDocument {
  let next = held;
  for (const entry of current?.keys ?? []) {
    if (entry.revokedAt !== undefined) next = revokeEntry(next, entry.kid, Date.now(), encryptionKey) ?? next;
  }
  return next;
}

/**
 * Revokes again what `held` has revoked and the stored `document` still has live. The store goes back when it loses
 * the ring and an instance that had not seen a revocation yet puts back its older copy (or a failover serves an old
 * replica): a revocation this instance saw must not come undone that way, so the key stays refused.
 */
export async function keepRevocations(
  store: Store,
  name: string,
  document: RingDocument,
  held: RingDocument,
  encryptionKey: Buffer,
): Promise<RingDocument> {
  const revived = (current: RingDocument) =>
    held.keys
      .filter((entry) => entry.revokedAt !== undefined)
      .filter((entry) => current.keys.some((stored) => stored.kid === entry.kid && stored.revokedAt === undefined))
      .map((entry) => entry.kid);
  if (revived(document).length === 0) return document;
  const written = await updateRing(store, name, (current) => {
    if (current === null) return null;
    let next = current;
    for (const kid of revived(current)) next = revokeEntry(next, kid, Date.now(), encryptionKey) ?? next;
    return next === current ? null : next;
  });
  return written ?? document;
}

/**
 * Puts back into the stored `document` the keys `held` (the ring this instance holds) has signed with and still
 * publishes, when the document lacks them. The store that lost the ring may be read first by an instance holding
 * none (one starting), which makes a ring of new keys, or by one holding an older copy, which puts that back: the
 * other instances would adopt it and drop the keys of every token signed so far. Put back, such a key is retired by
 * the new ring's key (it activated later), so it verifies its tokens for the retention and goes as any retired key.
 * A key the document records in any state (revoked too) is left as recorded, and a pending one is not put back: it
 * signed nothing, and the JWKS relying parties have cached since may lack it. Nothing is put into a ring this
 * instance's `encryptionKey` does not open: made by instances with another key, it would then open on none of them.
 */
export async function keepHeldKeys(
  store: Store,
  name: string,
  document: RingDocument,
  held: RingDocument,
  now: number,
  retainMs: number,
  encryptionKey: Buffer,
): Promise<RingDocument> {
  const index = indexRing(held);
  const kept = held.keys.filter(
    (entry) =>
      entry.revokedAt === undefined && entry.sealed !== undefined && entry.activatesAt <= now && isPublished(index, entry, now, retainMs),
  );
  const missing = (current: RingDocument): RingEntry[] => kept.filter((entry) => !current.keys.some((stored) => stored.kid === entry.kid));
  if (missing(document).length === 0) return document;
  const written = await updateRing(store, name, (current) => {
    if (current === null || isLost(current)) return null;
    const back = missing(current);
    if (back.length === 0 || !opens(current, encryptionKey)) return null;
    // After the document's own: of keys activated at the same instant, the first written signs (document.ts).
    return { ...current, keys: [...current.keys, ...back] };
  });
  return written ?? document;
}

function opens(document: RingDocument, encryptionKey: Buffer): boolean {
  try {
    assertOpens(document, encryptionKey);
    return true;
  } catch {
    return false;
  }
}
