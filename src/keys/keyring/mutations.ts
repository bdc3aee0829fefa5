/**
 * The changes made to a ring document: new keys (generated here, sealed before they leave this function) and
 * emergency revocation. Shared by the service and the `sentinel-idp keys` CLI, so both act on the ring alike.
 */
import { createPublicKey } from 'node:crypto';
import { generatePrivateJWK, type JWK, type SigningAlgorithm } from '../signing-keys.js';
import { activeEntry, indexRing, pruned, type RingDocument, type RingEntry } from './document.js';
import { open, seal } from './seal.js';

/**
 * Throws the `ConfigurationError` of a wrong encryption key unless `encryptionKey` opens every sealed entry: a writer
 * with another key would add keys no other instance can open (and that it could not open later either).
 */
export function assertOpens(document: RingDocument | null, encryptionKey: Buffer): void {
  for (const entry of document?.keys ?? []) {
    if (entry.sealed !== undefined) open(encryptionKey, entry.kid, entry.sealed);
  }
}

/**
 * Thrown by `revokeEntry` when the revoked key was signing, no successor waits and no encryption key was given: each
 * caller names where its key comes from (the CLI, its environment variable).
 */
export class EncryptionKeyNeededError extends Error {
  constructor() {
    super('revoking the signing key needs a new one: give the encryption key');
    this.name = 'EncryptionKeyNeededError';
  }
}

/**
 * A new entry of `alg`: a fresh key pair (`privateJwk` when one was generated beforehand, off the main thread), the
 * private JWK sealed under `encryptionKey`.
 */
export function newEntry(
  alg: SigningAlgorithm,
  encryptionKey: Buffer,
  now: number,
  activatesAt: number,
  privateJwk: JWK = generatePrivateJWK(alg),
): RingEntry {
  const kid = privateJwk.kid as string;
  const publicJwk = createPublicKey({ key: privateJwk as import('node:crypto').JsonWebKey, format: 'jwk' }).export({
    format: 'jwk',
  }) as JWK;
  return {
    kid,
    alg,
    createdAt: now,
    activatesAt,
    publicJwk: { ...publicJwk, kid, alg, use: 'sig' },
    sealed: seal(encryptionKey, kid, JSON.stringify(privateJwk)),
  };
}

/** Whether `alg` has a live key that is published but does not sign yet. */
export function hasPending(document: RingDocument, alg: SigningAlgorithm, now: number): boolean {
  return document.keys.some((entry) => entry.alg === alg && entry.revokedAt === undefined && entry.activatesAt > now);
}

/** What a rotation writes into the ring besides its keys, so that later writers (the CLI) act alike. */
export interface RingPolicy {
  /** How long a new key is published before it signs. */
  prePublishSeconds: number;
  /** How long a retired key stays after its successor activates (see {@link pruned}); unknown for old rings. */
  retainSeconds?: number | undefined;
}

/**
 * Starts a rotation of each of `algorithms` that has none under way: a new key published now that signs from
 * `now + prePublishSeconds` on. A new ring gets keys that sign at once (nothing was published before them, so nobody
 * can hold an outdated JWKS without them). An algorithm joining a ring already published (RS256 added to an ES256
 * ring, or EdDSA put first) waits `prePublishSeconds` like any new key, since relying parties may hold the JWKS
 * without it; meanwhile the next of `algorithms` with a key signs (key-set.ts). Only a first algorithm that no other
 * of `algorithms` can stand in for signs at once: without it nothing could be signed. `generated` holds private
 * keys made beforehand (off the main thread); a missing one is generated here. The ring is written with `policy`
 * and without the entries gone for good at `now` ({@link pruned}). `null` when nothing changes.
 */
export function startRotation(
  document: RingDocument | null,
  algorithms: readonly SigningAlgorithm[],
  encryptionKey: Buffer,
  now: number,
  policy: RingPolicy,
  generated: ReadonlyMap<SigningAlgorithm, JWK> = new Map(),
): RingDocument | null {
  assertOpens(document, encryptionKey);
  const { prePublishSeconds, retainSeconds } = policy;
  const base = pruned(
    {
      ...(document ?? { v: 1 as const, revision: 0, keys: [] }),
      prePublishSeconds,
      ...(retainSeconds === undefined ? {} : { retainSeconds }),
    },
    now,
  );
  const index = indexRing(base);
  const published = index.size > 0;
  const added: RingEntry[] = [];
  const othersSign = (alg: SigningAlgorithm) => algorithms.some((other) => other !== alg && activeEntry(index, other, now) !== undefined);
  algorithms.forEach((alg, position) => {
    if (hasPending(base, alg, now)) return;
    const signsAtOnce = activeEntry(index, alg, now) === undefined && (!published || (position === 0 && !othersSign(alg)));
    added.push(newEntry(alg, encryptionKey, now, signsAtOnce ? now : now + prePublishSeconds * 1000, generated.get(alg)));
  });
  return added.length === 0 ? null : { ...base, keys: [...base.keys, ...added] };
}

/**
 * Revokes `kid`: it leaves the JWKS and stops verifying, its private part is erased. When it was the signing key
 * of its algorithm, the pending key (if any) signs from now on, otherwise a new key signs at once: `replacement`
 * when one was generated beforehand (off the main thread) for that algorithm, else one generated here
 * (`encryptionKey` is needed only then). The ring is written without the entries gone for good at `now`, by its
 * `retainSeconds` ({@link pruned}). `null` when `kid` is not a live key of the ring.
 */
export function revokeEntry(
  document: RingDocument | null,
  kid: string,
  now: number,
  encryptionKey: Buffer | undefined,
  replacement?: JWK,
): RingDocument | null {
  if (document === null) return null;
  // What is gone for good goes first: a retired key past its retention is no longer a key of the ring. Kept, it would
  // count as superseded by the replacement instead of the revoked key, and be published again for the retention.
  const base = pruned(document, now);
  const target = base.keys.find((entry) => entry.kid === kid && entry.revokedAt === undefined);
  if (target === undefined) return null;
  if (encryptionKey !== undefined) assertOpens(document, encryptionKey);
  const wasActive = activeEntry(indexRing(base), target.alg, now)?.kid === kid;
  let keys: RingEntry[] = base.keys.map((entry) => {
    if (entry !== target) return entry;
    const { sealed: _erased, ...rest } = entry;
    return { ...rest, revokedAt: now };
  });
  if (wasActive) {
    const pending = keys
      .filter((entry) => entry.alg === target.alg && entry.revokedAt === undefined && entry.activatesAt > now)
      .sort((a, b) => a.activatesAt - b.activatesAt)[0];
    if (pending !== undefined) {
      keys = keys.map((entry) => (entry === pending ? { ...entry, activatesAt: now } : entry));
    } else {
      if (encryptionKey === undefined) throw new EncryptionKeyNeededError();
      const prepared = replacement?.alg === target.alg ? replacement : undefined;
      keys.push(newEntry(target.alg, encryptionKey, now, now, prepared));
    }
  }
  return { ...base, keys };
}
