/**
 * The managed key ring of one service: loads the shared document from the Store, keeps a derived {@link KeySet}
 * (the signing key per algorithm, the keys that verify, the JWKS), refreshes it at least every `refreshSeconds`,
 * and starts the scheduled rotations.
 *
 * Reads are lock-free (one GET); writes go through {@link updateRing}. The derived key set changes by itself at
 * the instants written in the document (an activation, a retired key leaving the JWKS), so instances that hold the
 * same document switch keys at the same moment without talking to each other.
 *
 * What the ring is made of is filed apart: the key set derived from a document (key-set.ts), what a rotation needs
 * (rotation.ts), putting back a lost ring and keeping revocations (restore.ts), its timings (timings.ts) and how its
 * entries are shown (describe.ts).
 */
import { generatePrivateJWKInPool, type KeySet } from '../signing-keys.js';
import type { Store } from '../../stores/store.js';
import { describeRing, type RingKeyInfo } from './describe.js';
import type { RingDocument } from './document.js';
import { keepListedAlgorithms, markDropped } from './dropped.js';
import { type Derived, deriveKeys, type ImportedKey, importKeys } from './key-set.js';
import { revokeEntry, startRotation } from './mutations.js';
import type { KeyRotationOptions } from './options.js';
import { isLost, keepHeldKeys, keepRevocations, restoreRing, ringToChange } from './restore.js';
import { generateKeys, policyOf, rotationDueIn } from './rotation.js';
import { parseEncryptionKey } from './seal.js';
import { readRing, updateRing } from './storage.js';
import type { RingTimings } from './timings.js';

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
  #imported = new Map<string, ImportedKey>();
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
   * For a synchronous reader (`sentinel.jwks()`), which cannot wait: starts a refresh when the ring is older than
   * half its refresh period (or not loaded), and reports a failure instead of throwing it. The reader answers from
   * the ring it holds; its next read sees the refreshed one.
   */
  refreshIfStale(): void {
    // A refresh under way is awaited (and its failure handled) by whoever started it.
    if (this.#inflight !== undefined) return;
    this.fresh()?.catch((error: unknown) => this.#report(error));
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
    const written = await updateRing(this.#store, this.#name, (current) => {
      // A ring the store lost is put back first: rotated from nothing, it would orphan every token signed so far.
      const base = ringToChange(current, this.#document, this.#encryptionKey);
      const now = Date.now();
      const next = startRotation(
        base,
        this.#rotation.algorithms,
        this.#encryptionKey,
        now,
        policyOf(this.#rotation, this.#timings),
        generated,
      );
      if (next === null) return base === current ? null : base;
      return markDropped(next, this.#rotation.algorithms, now + this.#timings.refreshMs);
    });
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
      const next = revokeEntry(
        ringToChange(current, this.#document, this.#encryptionKey),
        kid,
        Date.now(),
        this.#encryptionKey,
        replacement,
      );
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
      document = await restoreRing(this.#store, this.#name, document, held, this.#encryptionKey, this.#report);
    }
    if (document !== null && this.#document !== undefined) {
      document = await keepRevocations(this.#store, this.#name, document, this.#document, this.#encryptionKey);
      document = await keepHeldKeys(this.#store, this.#name, document, this.#document, now, this.#timings.retainMs, this.#encryptionKey);
    }
    const algorithms = this.#rotation.algorithms;
    // This instance signs with its algorithms: none of their keys may be left to retire as dropped (dropped.ts).
    if (document !== null) document = await keepListedAlgorithms(this.#store, this.#name, document, algorithms);
    const due = (doc: RingDocument | null) => rotationDueIn(doc, algorithms, this.#timings, now);
    if (due(document)) {
      const generated = await generateKeys(algorithms);
      // The keys are published from the moment they are written (Date.now() below, under the lock), so their
      // pre-publication counts from then, not from before the generation, which takes a while for RSA.
      // Whoever holds the lock may be doing this very rotation: wait for it and decide again on what it wrote, so
      // racing instances add one key and all of them leave with the new document.
      // A rotation also marks the keys of algorithms this instance no longer lists, so that they retire (dropped.ts).
      const written = await updateRing(this.#store, this.#name, (current) => {
        if (!due(current)) return null;
        const at = Date.now();
        const next = startRotation(current, algorithms, this.#encryptionKey, at, policyOf(this.#rotation, this.#timings), generated);
        return next === null ? null : markDropped(next, algorithms, at + this.#timings.refreshMs);
      });
      if (written !== undefined) document = written;
    }
    if (document === null) throw new Error('the key ring could not be created');
    this.#adopt(document, now, read);
  }

  #adopt(document: RingDocument, loadedAt: number, read: number): void {
    const held = this.#document;
    if (held !== undefined && document.revision < held.revision && read !== this.#epoch) return;
    // Decrypt everything first: a wrong encryptionKey fails here, before anything changes.
    const now = Date.now();
    const imported = importKeys(document, this.#imported, this.#encryptionKey, now, this.#timings.retainMs);
    const derived = deriveKeys(document, imported, now, this.#rotation.algorithms, this.#timings.retainMs);
    this.#imported = imported;
    this.#document = document;
    this.#derived = derived;
    this.#loadedAt = loadedAt;
    this.#epoch += 1;
  }

  #current(): Derived {
    const derived = this.#derived;
    if (derived === undefined || this.#document === undefined) throw new Error('the key ring is not loaded yet');
    if (Date.now() < derived.until) return derived;
    this.#derived = deriveKeys(this.#document, this.#imported, Date.now(), this.#rotation.algorithms, this.#timings.retainMs);
    return this.#derived;
  }
}
