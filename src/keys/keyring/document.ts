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
    if (typeof entry?.kid !== 'string' || typeof entry.activatesAt !== 'number' || typeof entry.publicJwk !== 'object') {
      throw new Error('the key ring in the store has a malformed entry');
    }
  }
  return value;
}

function sameAlg(document: RingDocument, alg: SigningAlgorithm): RingEntry[] {
  return document.keys.filter((entry) => entry.alg === alg && entry.revokedAt === undefined);
}

/** The key of `alg` that signs at `now`: the live one that activated last. */
export function activeEntry(document: RingDocument, alg: SigningAlgorithm, now: number): RingEntry | undefined {
  let active: RingEntry | undefined;
  for (const entry of sameAlg(document, alg)) {
    if (entry.activatesAt <= now && (active === undefined || entry.activatesAt > active.activatesAt)) active = entry;
  }
  return active;
}

/** When `entry` stopped signing: the activation of the next live key of its algorithm, if that has happened. */
export function supersededAt(document: RingDocument, entry: RingEntry, now: number): number | undefined {
  let next: number | undefined;
  for (const other of sameAlg(document, entry.alg)) {
    if (other.activatesAt > entry.activatesAt && other.activatesAt <= now && (next === undefined || other.activatesAt < next)) {
      next = other.activatesAt;
    }
  }
  return next;
}

/**
 * Whether the entry is still in the JWKS at `now`: live, and not superseded longer ago than the retention (the
 * longest lifetime of a token it may have signed).
 */
export function isPublished(document: RingDocument, entry: RingEntry, now: number, retainMs: number): boolean {
  if (entry.revokedAt !== undefined) return false;
  const superseded = supersededAt(document, entry, now);
  return superseded === undefined || superseded + retainMs > now;
}

/** Drops entries nobody needs any more: retired past retention, or revoked past retention (kept that long for `keys list`). */
export function prune(document: RingDocument, now: number, retainMs: number): RingEntry[] {
  return document.keys.filter((entry) =>
    entry.revokedAt !== undefined ? entry.revokedAt + retainMs > now : isPublished(document, entry, now, retainMs),
  );
}

/**
 * Whether `alg` needs a new key at `now`: none signs, or none is pending and the active one reaches the end of its
 * period within the pre-publication delay.
 */
export function rotationDue(
  document: RingDocument,
  alg: SigningAlgorithm,
  now: number,
  rotateEveryMs: number,
  prePublishMs: number,
): boolean {
  const active = activeEntry(document, alg, now);
  if (active === undefined) return !sameAlg(document, alg).some((entry) => entry.activatesAt > now);
  if (sameAlg(document, alg).some((entry) => entry.activatesAt > now)) return false;
  return active.activatesAt + rotateEveryMs - prePublishMs <= now;
}

/**
 * The next instant after `now` at which the derived state changes by itself (an activation, or a retired key
 * leaving the JWKS), so a derived key set can be recomputed exactly then.
 */
export function nextChange(document: RingDocument, now: number, retainMs: number): number {
  let next = Number.POSITIVE_INFINITY;
  for (const entry of document.keys) {
    if (entry.revokedAt !== undefined) continue;
    if (entry.activatesAt > now) next = Math.min(next, entry.activatesAt);
    // Once its successor activates, this entry leaves the JWKS retainMs later.
    for (const other of sameAlg(document, entry.alg)) {
      if (other.activatesAt > entry.activatesAt) {
        const leaves = other.activatesAt + retainMs;
        if (leaves > now) next = Math.min(next, leaves);
      }
    }
  }
  return next;
}
