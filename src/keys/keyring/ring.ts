/**
 * The managed key ring of one service: loads the shared document from the Store, keeps a derived {@link KeySet}
 * (the signing key per algorithm, the keys that verify, the JWKS), refreshes it at least every `refreshSeconds`,
 * and starts the scheduled rotations.
 *
 * Reads are lock-free (one GET); writes go through {@link updateRing}. The derived key set changes by itself at
 * the instants written in the document (an activation, a retired key leaving the JWKS), so instances that hold the
 * same document switch keys at the same moment without talking to each other.
 */
import { ConfigurationError } from '../../errors.js';
import {
  generatePrivateJWKInPool,
  importKey,
  keySetOf,
  type JWK,
  type KeySet,
  type SigningAlgorithm,
  type SigningKey,
} from '../signing-keys.js';
import { decodeJsonPart } from '../../lib/compact-jwt.js';
import type { Store } from '../../stores/store.js';
import { activeEntry, indexRing, isPublished, nextChange, prune, rotationDue, type RingDocument, type RingEntry } from './document.js';
import { type RingPolicy, revokeEntry, startRotation } from './mutations.js';
import type { KeyRotationOptions } from './options.js';
import { open, parseEncryptionKey } from './seal.js';
import { readRing, updateRing } from './storage.js';

/**
 * A ring entry as `sentinel.rotateKeys()` and `sentinel-idp keys list` show it: kid (RFC 7517 §4.5), algorithm,
 * state and times; never a private part.
 * @example const pending = (await sentinel.rotateKeys()).filter((key) => key.state === 'pending');
 */
export interface RingKeyInfo {
  kid: string;
  alg: SigningAlgorithm;
  state: 'pending' | 'active' | 'retired' | 'revoked';
  createdAt: string;
  activatesAt: string;
  revokedAt?: string;
}

/**
 * Describes the entries of a document at `now`.
 * @example for (const key of describeRing(document, Date.now())) console.log(key.kid, key.state);
 */
export function describeRing(document: RingDocument, now: number): RingKeyInfo[] {
  const index = indexRing(document);
  return document.keys.map((entry) => {
    const state =
      entry.revokedAt !== undefined
        ? 'revoked'
        : entry.activatesAt > now
          ? 'pending'
          : activeEntry(index, entry.alg, now)?.kid === entry.kid
            ? 'active'
            : 'retired';
    return {
      kid: entry.kid,
      alg: entry.alg,
      state,
      createdAt: new Date(entry.createdAt).toISOString(),
      activatesAt: new Date(entry.activatesAt).toISOString(),
      ...(entry.revokedAt === undefined ? {} : { revokedAt: new Date(entry.revokedAt).toISOString() }),
    };
  });
}

interface Derived {
  signer: SigningKey;
  byAlg: ReadonlyMap<SigningAlgorithm, SigningKey>;
  byKid: ReadonlyMap<string, SigningKey>;
  jwks: { keys: JWK[] };
  /** Recompute at or after this instant. */
  until: number;
}

/** Timings of the ring in milliseconds, validated against the rest of the configuration. */
export interface RingTimings {
  rotateEveryMs: number;
  prePublishMs: number;
  retainMs: number;
  refreshMs: number;
}

/**
 * Checks the rotation timings against the JWKS caching and the token lifetimes:
 * - a new key must be in every instance's JWKS (≤ `refreshSeconds`) and then in every cache of it (≤ `jwksMaxAge`)
 *   before it signs, so `prePublishSeconds ≥ jwksMaxAge + refreshSeconds`;
 * - a retired key must stay published while a token it signed can be valid, so `retainSeconds` is at least the
 *   longest token lifetime plus the clock tolerance (that is its default).
 * @throws ConfigurationError naming the field.
 */
export function ringTimings(
  rotation: KeyRotationOptions,
  config: { jwksMaxAge: number; accessTokenTtl: number; idTokenTtl: number; clockTolerance: number },
): RingTimings {
  const minimumRetain = Math.max(config.accessTokenTtl, config.idTokenTtl) + config.clockTolerance;
  const retainSeconds = rotation.retainSeconds ?? minimumRetain;
  if (retainSeconds < minimumRetain) {
    throw new ConfigurationError(
      'keyRotation.retainSeconds',
      `must be at least ${minimumRetain} (the longest token lifetime plus clockTolerance)`,
    );
  }
  const minimumPrePublish = config.jwksMaxAge + rotation.refreshSeconds;
  if (rotation.prePublishSeconds < minimumPrePublish) {
    throw new ConfigurationError(
      'keyRotation.prePublishSeconds',
      `must be at least ${minimumPrePublish} (jwksMaxAge + refreshSeconds), so that every cached JWKS has a key before it signs`,
    );
  }
  if (rotation.rotateEverySeconds <= rotation.prePublishSeconds) {
    throw new ConfigurationError('keyRotation.rotateEverySeconds', 'must be longer than prePublishSeconds');
  }
  return {
    rotateEveryMs: rotation.rotateEverySeconds * 1000,
    prePublishMs: rotation.prePublishSeconds * 1000,
    retainMs: retainSeconds * 1000,
    refreshMs: rotation.refreshSeconds * 1000,
  };
}

/** What this instance's rotations write into the ring, so the CLI pre-publishes and prunes alike. */
function policyOf(rotation: KeyRotationOptions, timings: RingTimings): RingPolicy {
  return { prePublishSeconds: rotation.prePublishSeconds, retainSeconds: timings.retainMs / 1000 };
}

/** Whether `document` is no ring to use: missing, or without a live key (every token signed so far would be orphaned). */
function isLost(document: RingDocument | null): boolean {
  return document === null || document.keys.every((entry) => entry.revokedAt !== undefined);
}

/**
 * The private keys of a rotation, made on the thread pool before the ring's lock is taken: a 2048-bit RSA key costs
 * 100 ms or more of CPU, which would otherwise stall every request of the instance that rotates. Keys that end up
 * unused (another instance rotated first) are dropped.
 */
async function generateKeys(algorithms: readonly SigningAlgorithm[]): Promise<Map<SigningAlgorithm, JWK>> {
  return new Map(await Promise.all(algorithms.map(async (alg) => [alg, await generatePrivateJWKInPool(alg)] as const)));
}

/** Least time between two refreshes forced by tokens with an unknown kid, so random kids cannot hammer the store. */
const UNKNOWN_KID_REFRESH_MS = 1000;

/**
 * The ring of one service. `keys` is a {@link KeySet} view that always reflects the latest loaded document.
 * @example
 * const ring = new KeyRing(options.keyRotation, store, timings, (error) => log(error));
 * await ring.ready();
 */
export class KeyRing {
  readonly #rotation: KeyRotationOptions;
  /** The ring's name in the store: `keyRotation.name`, or a per-account name. */
  readonly #name: string;
  readonly #store: Store;
  readonly #timings: RingTimings;
  readonly #encryptionKey: Buffer;
  readonly #report: (error: unknown) => void;
  #document: RingDocument | undefined;
  #loadedAt = Number.NEGATIVE_INFINITY;
  #derived: Derived | undefined;
  #inflight: Promise<void> | undefined;
  #forcedAt = Number.NEGATIVE_INFINITY;
  /** Imported private keys by kid, so a refresh that finds the same entries decrypts nothing. */
  #imported = new Map<string, { sealed: string; key: SigningKey }>();
  /**
   * Bumped by every adoption. A read that saw an older revision than the one held is stale (it raced a write)
   * unless nothing was adopted since it started: then the store really went back (it was reset) and it wins.
   */
  #epoch = 0;

  /** The key set handlers read; each property reflects the current document. */
  readonly keys: KeySet;

  constructor(rotation: KeyRotationOptions, store: Store, timings: RingTimings, report: (error: unknown) => void, name = rotation.name) {
    this.#rotation = rotation;
    this.#name = name;
    this.#store = store;
    this.#timings = timings;
    this.#encryptionKey = parseEncryptionKey(rotation.encryptionKey);
    this.#report = report;
    const ring = this;
    this.keys = {
      get signer() {
        return ring.#current().signer;
      },
      get byAlg() {
        return ring.#current().byAlg;
      },
      get byKid() {
        return ring.#current().byKid;
      },
      get jwks() {
        return ring.#current().jwks;
      },
    };
  }

  /** Resolves once the ring is loaded (creating its first keys if the store has none); rejects with the reason. */
  ready(): Promise<void> {
    return this.#derived === undefined ? this.refresh() : Promise.resolve();
  }

  /**
   * `undefined` when the loaded ring is recent enough to use as is (the hot path: no promise, no await);
   * otherwise the refresh to wait for. Past half the refresh period a refresh starts in the background.
   */
  fresh(): Promise<void> | undefined {
    const age = Date.now() - this.#loadedAt;
    if (age >= this.#timings.refreshMs || this.#derived === undefined) return this.refresh();
    if (age >= this.#timings.refreshMs / 2 && this.#inflight === undefined) {
      this.refresh().catch((error: unknown) => this.#report(error));
    }
    return undefined;
  }

  /**
   * Reloads once for a token whose kid is unknown (it may come from a key another instance created in an
   * emergency); at most once a second. Resolves `true` when it reloaded.
   */
  async refreshForUnknownKid(): Promise<boolean> {
    if (Date.now() - this.#forcedAt < UNKNOWN_KID_REFRESH_MS) return false;
    this.#forcedAt = Date.now();
    await this.refresh();
    return true;
  }

  /** Reloads the document now (concurrent callers share one load), rotating first when a rotation is due. */
  refresh(): Promise<void> {
    this.#inflight ??= this.#load().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  /** Starts a rotation now (unless one is under way); resolves with the ring afterwards. */
  async rotate(): Promise<RingKeyInfo[]> {
    const generated = await generateKeys(this.#rotation.algorithms);
    const startedAt = Date.now();
    const read = this.#epoch;
    // Dated under the lock, when it is written (published): time spent waiting for the lock must not count as
    // pre-publication, or the key would sign before every cached JWKS has it.
    const written = await updateRing(this.#store, this.#name, (current) =>
      startRotation(
        current,
        this.#rotation.algorithms,
        this.#encryptionKey,
        Date.now(),
        policyOf(this.#rotation, this.#timings),
        generated,
      ),
    );
    if (written !== null && written !== undefined) this.#adopt(written, startedAt, read);
    return this.list();
  }

  /** Revokes `kid` in the shared ring; `false` when it is not a live key of the ring. */
  async revoke(kid: string): Promise<boolean> {
    // A revoked signing key without a pending successor is replaced at once; an RSA replacement is made on the
    // thread pool first rather than under the lock on the main thread (the algorithm as this instance knows it).
    const alg = this.#document?.keys.find((entry) => entry.kid === kid)?.alg;
    const replacement = alg === 'RS256' || alg === 'PS256' ? await generatePrivateJWKInPool(alg) : undefined;
    const startedAt = Date.now();
    const read = this.#epoch;
    let found = false;
    const written = await updateRing(this.#store, this.#name, (current) => {
      const next = revokeEntry(current, kid, Date.now(), this.#encryptionKey, replacement);
      found = next !== null;
      return next;
    });
    if (written !== null && written !== undefined) this.#adopt(written, startedAt, read);
    return found;
  }

  /** The ring as last loaded. */
  list(): RingKeyInfo[] {
    return this.#document === undefined ? [] : describeRing(this.#document, Date.now());
  }

  async #load(): Promise<void> {
    const now = Date.now();
    const read = this.#epoch;
    let document = await readRing(this.#store, this.#name);
    const held = this.#document;
    if (isLost(document) && held !== undefined && !isLost(held)) {
      // The store lost the ring (a bounded MemoryStore evicted it, a Redis was replaced), or holds one without a live
      // key (emptied by hand or by a broken writer): put back the one this instance holds rather than start afresh,
      // which would orphan every token signed so far. An emptied ring is not a store's ordinary loss: reported.
      if (document !== null) {
        this.#report(new Error(`the key ring "${this.#name}" in the store has no live key: the keys this instance holds are put back`));
      }
      document = (await updateRing(this.#store, this.#name, (current) => (isLost(current) ? this.#restored(held, current) : null))) ?? held;
    }
    if (document !== null && this.#document !== undefined) document = await this.#keepRevocations(document, this.#document);
    const algorithms = this.#rotation.algorithms;
    const { rotateEveryMs, prePublishMs } = this.#timings;
    const due = (doc: RingDocument | null) => {
      if (doc === null) return true;
      const index = indexRing(doc);
      return algorithms.some((alg) => rotationDue(index, alg, now, rotateEveryMs, prePublishMs));
    };
    if (due(document)) {
      const generated = await generateKeys(algorithms);
      // The keys are published from the moment they are written (Date.now() below, under the lock), so their
      // pre-publication counts from then, not from before the generation, which takes a while for RSA.
      // Whoever holds the lock may be doing this very rotation: wait for it and decide again on what it wrote, so
      // racing instances add one key and all of them leave with the new document.
      const written = await updateRing(this.#store, this.#name, (current) =>
        due(current)
          ? startRotation(current, algorithms, this.#encryptionKey, Date.now(), policyOf(this.#rotation, this.#timings), generated)
          : null,
      );
      if (written !== undefined) document = written;
    }
    if (document === null) throw new Error('the key ring could not be created');
    this.#adopt(document, now, read);
  }

  /**
   * `held`, to put back in place of the lost ring `current`, with the revocations `current` still records: a key
   * revoked there while this instance held it live must not come back usable.
   */
  #restored(held: RingDocument, current: RingDocument | null): RingDocument {
    let next = held;
    for (const entry of current?.keys ?? []) {
      if (entry.revokedAt !== undefined) next = revokeEntry(next, entry.kid, Date.now(), this.#encryptionKey) ?? next;
    }
    return next;
  }

  /**
   * Revokes again what `held` has revoked and the stored `document` still has live. The store goes back when it loses
   * the ring and an instance that had not seen a revocation yet puts back its older copy (or a failover serves an old
   * replica): a revocation this instance saw must not come undone that way, so the key stays refused.
   */
  async #keepRevocations(document: RingDocument, held: RingDocument): Promise<RingDocument> {
    const revived = (current: RingDocument) =>
      held.keys
        .filter((entry) => entry.revokedAt !== undefined)
        .filter((entry) => current.keys.some((stored) => stored.kid === entry.kid && stored.revokedAt === undefined))
        .map((entry) => entry.kid);
    if (revived(document).length === 0) return document;
    const written = await updateRing(this.#store, this.#name, (current) => {
      if (current === null) return null;
      let next = current;
      for (const kid of revived(current)) next = revokeEntry(next, kid, Date.now(), this.#encryptionKey) ?? next;
      return next === current ? null : next;
    });
    return written ?? document;
  }

  #adopt(document: RingDocument, loadedAt: number, read: number): void {
    const held = this.#document;
    if (held !== undefined && document.revision < held.revision && read !== this.#epoch) return;
    // Decrypt everything first: a wrong encryptionKey fails here, before anything changes.
    const now = Date.now();
    const imported = new Map<string, { sealed: string; key: SigningKey }>();
    for (const entry of prune(document, now, this.#timings.retainMs)) {
      if (entry.revokedAt !== undefined || entry.sealed === undefined) continue;
      const previous = this.#imported.get(entry.kid);
      if (previous !== undefined && previous.sealed === entry.sealed.data) {
        imported.set(entry.kid, previous);
        continue;
      }
      const privateJwk = JSON.parse(open(this.#encryptionKey, entry.kid, entry.sealed)) as JWK;
      imported.set(entry.kid, {
        sealed: entry.sealed.data,
        key: importKey({ ...privateJwk, kid: entry.kid, alg: entry.alg }, `keyRing.${entry.kid}`),
      });
    }
    const derived = this.#derive(document, imported, now);
    this.#imported = imported;
    this.#document = document;
    this.#derived = derived;
    this.#loadedAt = loadedAt;
    this.#epoch += 1;
  }

  #derive(document: RingDocument, imported: ReadonlyMap<string, { key: SigningKey }>, now: number): Derived {
    const index = indexRing(document);
    const published: SigningKey[] = [];
    const byAlg = new Map<SigningAlgorithm, SigningKey>();
    for (const entry of document.keys) {
      const key = imported.get(entry.kid)?.key;
      if (key === undefined || !isPublished(index, entry, now, this.#timings.retainMs)) continue;
      published.push(key);
    }
    for (const alg of this.#rotation.algorithms) {
      const active: RingEntry | undefined = activeEntry(index, alg, now);
      const key = active === undefined ? undefined : imported.get(active.kid)?.key;
      if (key !== undefined) byAlg.set(alg, key);
    }
    const first = byAlg.get(this.#rotation.algorithms[0] as SigningAlgorithm);
    if (first === undefined || published.length === 0) throw new Error('the key ring has no signing key');
    // The signer first: KeySet's contract is "the first signs".
    const ordered = [first, ...published.filter((key) => key !== first)];
    const set = keySetOf(ordered, 'keyRing');
    return { signer: first, byAlg, byKid: set.byKid, jwks: set.jwks, until: nextChange(index, now, this.#timings.retainMs) };
  }

  #current(): Derived {
    const derived = this.#derived;
    if (derived === undefined || this.#document === undefined) throw new Error('the key ring is not loaded yet');
    if (Date.now() < derived.until) return derived;
    this.#derived = this.#derive(this.#document, this.#imported, Date.now());
    return this.#derived;
  }
}

/** The `kid` of a compact JWS's header, without verifying anything; `undefined` when there is none to read. */
export function kidOf(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 1024) return undefined;
  const kid = decodeJsonPart(token.slice(0, dot))?.kid;
  return typeof kid === 'string' ? kid : undefined;
}
