/**
 * The key ring as one document in the store, and the pure rules over it: which key signs, which keys are
 * published, when the next rotation is due, which entries are gone for good.
 *
 * Times are epoch milliseconds stored in the document, so every instance derives the same answer from the same
 * document: a pre-published key starts signing at `activatesAt` everywhere, with no message between instances.
 */
import type { JWK, SigningAlgorithm } from '../signing-keys.js';
import type { Sealed } from './seal.js';

/** One key of the ring. */
export interface RingEntry {
  kid: string;
  alg: SigningAlgorithm;
  /** Published in the JWKS from then on. */
  createdAt: number;
  /** Signs from then on, until a newer key of its algorithm activates. */
  activatesAt: number;
  /** Set by an emergency revocation: unpublished and refused at once. */
  revokedAt?: number;
  /**
   * Set when the instance that wrote the ring no longer lists the key's algorithm (`keyRotation.algorithms`): from
   * then on the key counts as superseded, so it leaves the JWKS and the ring after the retention like any retired
   * key. An instance that still lists the algorithm takes the mark off (dropped.ts).
   */
  retiresAt?: number;
  publicJwk: JWK;
  /** The private JWK, sealed; dropped on revocation. */
  sealed?: Sealed;
}

/** The document kept under the ring's store key. */
export interface RingDocument {
  v: 1;
  /** Bumped by every write, so an instance can tell a changed ring from the one it holds. */
  revision: number;
  /** The pre-publication delay of the instances that last wrote, so the CLI rotates with the same delay. */
  prePublishSeconds: number;
  /**
   * The retention of the instances that last rotated, so every writer (the CLI too) drops the same entries; absent
   * in rings written before it was stored (nothing is dropped from them until an instance rotates).
   */
  retainSeconds?: number;
  keys: RingEntry[];
}

/**
 * Parses the stored JSON; anything else than a ring document is an error (never silently replaced: that would
 * discard keys whose tokens are still in use).
 */
export function parseDocument(text: string): RingDocument {
  const value = JSON.parse(text) as RingDocument;
  if (value === null || typeof value !== 'object' || value.v !== 1 || !Array.isArray(value.keys)) {
    throw new Error('the key ring in the store is not a key ring document');
  }
  for (const entry of value.keys) {
    if (
      typeof entry?.kid !== 'string' ||
      typeof entry.activatesAt !== 'number' ||
      typeof entry.publicJwk !== 'object' ||
      (entry.retiresAt !== undefined && typeof entry.retiresAt !== 'number')
    ) {
      throw new Error('the key ring in the store has a malformed entry');
    }
  }
  return value;
}

/**
 * The live entries of each algorithm, in activation order. Built once per derivation, so that each rule below looks
 * at one algorithm's keys by position instead of scanning the whole ring for every entry (a ring read every
 * `refreshSeconds` must cost the same after years of rotations).
 */
export type RingIndex = ReadonlyMap<SigningAlgorithm, readonly RingEntry[]>;

/** Indexes the live entries of `document` by algorithm (see {@link RingIndex}). */
export function indexRing(document: RingDocument): RingIndex {
  const index = new Map<SigningAlgorithm, RingEntry[]>();
  for (const entry of document.keys) {
    if (entry.revokedAt !== undefined) continue;
    const list = index.get(entry.alg);
    if (list === undefined) index.set(entry.alg, [entry]);
    else list.push(entry);
  }
  // Stable: entries activating at the same instant keep their document order. Rings are written in activation
  // order, so this is one linear pass in practice.
  for (const list of index.values()) list.sort((a, b) => a.activatesAt - b.activatesAt);
  return index;
}

/** Position in `list` (sorted by activation) of the first entry activating after `at`; `list.length` when none. */
function firstAfter(list: readonly RingEntry[], at: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((list[middle] as RingEntry).activatesAt > at) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The key of `alg` that signs at `now`: the live one that activated last (of several at that instant, the first written). */
export function activeEntry(index: RingIndex, alg: SigningAlgorithm, now: number): RingEntry | undefined {
  const list = index.get(alg) ?? [];
  let at = firstAfter(list, now) - 1;
  while (at > 0 && (list[at - 1] as RingEntry).activatesAt === (list[at] as RingEntry).activatesAt) at--;
  return list[at];
}

/** When `entry` stopped signing: the activation of the next live key of its algorithm, if that has happened. */
export function supersededAt(index: RingIndex, entry: RingEntry, now: number): number | undefined {
  const list = index.get(entry.alg) ?? [];
  const next = list[firstAfter(list, entry.activatesAt)]?.activatesAt;
  return next !== undefined && next <= now ? next : undefined;
}

/**
 * When `entry` stopped signing for good, if that has happened: superseded by the next key of its algorithm, or its
 * algorithm dropped by every instance ({@link RingEntry.retiresAt}), whichever came first.
 */
function stoppedAt(index: RingIndex, entry: RingEntry, now: number): number | undefined {
  const superseded = supersededAt(index, entry, now);
  const dropped = entry.retiresAt !== undefined && entry.retiresAt <= now ? entry.retiresAt : undefined;
  if (superseded === undefined || dropped === undefined) return superseded ?? dropped;
  return Math.min(superseded, dropped);
}

/**
 * Whether a token `entry` signed may still be valid at `now`, by the rule of the ring: it did not stop signing longer
 * ago than the retention (the longest lifetime of a token it may have signed). Revocation is not looked at.
 */
function retained(index: RingIndex, entry: RingEntry, now: number, retainMs: number): boolean {
  const stopped = stoppedAt(index, entry, now);
  return stopped === undefined || stopped + retainMs > now;
}

/** Whether the entry is still in the JWKS at `now`: live, and retained (see above). */
export function isPublished(index: RingIndex, entry: RingEntry, now: number, retainMs: number): boolean {
  return entry.revokedAt === undefined && retained(index, entry, now, retainMs);
}

/**
 * The entries still needed at `now`; the others are gone for good and are dropped from the stored ring at its next
 * write (with their sealed private keys), so the document stays the size of a few rotations.
 *
 * - A retired key goes once it left the JWKS: no token it signed can still be valid.
 * - A revoked key stays while an instance may still hold it live, so that the revocation is there to re-apply if
 *   such a copy comes back (the store lost the ring and that instance puts back what it holds; see
 *   `KeyRing#keepRevocations`): a copy from before the revocation keeps the key by the ring's own retention rule,
 *   so it is kept as long as it would be without the revocation, and never less than `retainMs` after it (which
 *   also leaves it in `keys list` that long). Dropped earlier, a revoked key put back live would verify again.
 */
export function prune(document: RingDocument, now: number, retainMs: number): RingEntry[] {
  const index = indexRing(document);
  return document.keys.filter((entry) =>
    entry.revokedAt === undefined
      ? retained(index, entry, now, retainMs)
      : entry.revokedAt + retainMs > now || retained(index, entry, now, retainMs),
  );
}

/**
 * `document` without what {@link prune} drops, by the `retainSeconds` written in it. A document without one (written
 * before it was stored) is kept whole: how long its tokens live is not known here.
 */
export function pruned(document: RingDocument, now: number): RingDocument {
  const { retainSeconds } = document;
  if (typeof retainSeconds !== 'number' || !(retainSeconds > 0)) return document;
  const keys = prune(document, now, retainSeconds * 1000);
  return keys.length === document.keys.length ? document : { ...document, keys };
}

/**
 * Whether `alg` needs a new key at `now`: none signs, or none is pending and the active one reaches the end of its
 * period within the pre-publication delay.
 */
export function rotationDue(index: RingIndex, alg: SigningAlgorithm, now: number, rotateEveryMs: number, prePublishMs: number): boolean {
  const list = index.get(alg) ?? [];
  if (firstAfter(list, now) < list.length) return false; // one is pending
  const active = activeEntry(index, alg, now);
  return active === undefined || active.activatesAt + rotateEveryMs - prePublishMs <= now;
}

/**
 * The next instant after `now` at which the derived state changes by itself (an activation, or a retired key
 * leaving the JWKS), so a derived key set can be recomputed exactly then.
 */
export function nextChange(index: RingIndex, now: number, retainMs: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const list of index.values()) {
    const first = list[0]?.activatesAt;
    for (const entry of list) {
      if (entry.activatesAt > now) next = Math.min(next, entry.activatesAt);
      // The keys activated before this one leave the JWKS retainMs after it activates.
      const leaves = entry.activatesAt + retainMs;
      if (first !== undefined && entry.activatesAt > first && leaves > now) next = Math.min(next, leaves);
      // A key of a dropped algorithm leaves retainMs after its mark's instant.
      if (entry.retiresAt !== undefined && entry.retiresAt + retainMs > now) next = Math.min(next, entry.retiresAt + retainMs);
    }
  }
  return next;
}
