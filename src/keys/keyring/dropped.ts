/**
 * Retiring the keys of an algorithm dropped from `keyRotation.algorithms`. Such a key is superseded by no newer key of
 * its algorithm, so by the ring's own rule it would stay published (and its sealed private key stored) for ever.
 *
 * An instance writing a rotation marks the live keys of the algorithms it does not list with `retiresAt`: its time
 * plus its refresh period. An instance that still lists the algorithm (one of an older deployment) may have loaded the
 * ring just before the mark and signs with the key until its next read, at most `refreshSeconds` later; there it
 * takes the mark off again, so the key retires only once no instance signs with it. From `retiresAt` the key counts
 * as superseded: it verifies for `retainSeconds` more, then leaves the JWKS and, at the next write, the ring.
 */
import type { SigningAlgorithm } from '../signing-keys.js';
import type { Store } from '../../stores/store.js';
import type { RingDocument, RingEntry } from './document.js';
import { updateRing } from './storage.js';

/** `entry` without its mark. */
function unmarked(entry: RingEntry): RingEntry {
  const { retiresAt: _cleared, ...rest } = entry;
  return rest;
}

/**
 * `document` as an instance listing `algorithms` writes it: the marks of listed algorithms taken off and, when
 * `retiresAt` is given, the live keys of the other algorithms marked (a mark already there is kept). The same object
 * when nothing changes.
 */
export function markDropped(document: RingDocument, algorithms: readonly SigningAlgorithm[], retiresAt?: number): RingDocument {
  let changed = false;
  const keys = document.keys.map((entry) => {
    if (entry.revokedAt !== undefined) return entry;
    const listed = algorithms.includes(entry.alg);
    if (listed && entry.retiresAt !== undefined) {
      changed = true;
      return unmarked(entry);
    }
    if (!listed && entry.retiresAt === undefined && retiresAt !== undefined) {
      changed = true;
      return { ...entry, retiresAt };
    }
    return entry;
  });
  return changed ? { ...document, keys } : document;
}

/**
 * Takes off the store's ring the marks of the algorithms this instance lists (it signs with them), before it adopts
 * the ring; resolves with what the store holds afterwards. A failed write rejects: the instance must not sign with a
 * key the ring says will leave the JWKS.
 */
export async function keepListedAlgorithms(
  store: Store,
  name: string,
  document: RingDocument,
  algorithms: readonly SigningAlgorithm[],
): Promise<RingDocument> {
  if (markDropped(document, algorithms) === document) return document;
  const written = await updateRing(store, name, (current) => {
    if (current === null) return null;
    const next = markDropped(current, algorithms);
    return next === current ? null : next;
  });
  return written ?? document;
}

/** The algorithms of `document` with a live key that is not marked: those the CLI's `keys rotate` renews. */
export function listedAlgorithms(document: RingDocument): SigningAlgorithm[] {
  const live = document.keys.filter((entry) => entry.revokedAt === undefined && entry.retiresAt === undefined);
  return [...new Set(live.map((entry) => entry.alg))];
}
