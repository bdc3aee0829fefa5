/**
 * `keysPerAccount`: each account's issuer signs with its own key ring and publishes it at its own `jwks_uri`, so a
 * resource server trusting one account's JWKS cannot be handed another account's tokens (tenant isolation).
 *
 * Handlers read `context.keys` as always; during a request for an account, that view resolves to the account's
 * ring through AsyncLocalStorage, so no signing or verifying call site needs to know which ring it uses.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { decodeJsonPart, splitCompactJwt } from '../../lib/compact-jwt.js';
import type { KeySet } from '../signing-keys.js';
import type { Store } from '../../stores/store.js';
import type { KeyRotationOptions } from './options.js';
import { KeyRing } from './ring.js';
import type { RingTimings } from './timings.js';

/**
 * The store name of an account's ring. A digest keeps any account id (any characters, any length) a valid, bounded
 * store key; the CLI's `--account` computes the same name.
 * @example accountRingName('default', '123456') // 'default.account.…'
 */
export function accountRingName(name: string, accountId: string): string {
  return `${name}.account.${createHash('sha256').update(accountId).digest('base64url').slice(0, 22)}`;
}

/** Rings kept loaded at once; an evicted one is simply read from the store again when its account returns. */
const MAX_RINGS = 10_000;

/** The rings of all accounts, and the key set view that follows the request's account. */
export class AccountRings {
  readonly #rotation: KeyRotationOptions;
  readonly #store: Store;
  readonly #timings: RingTimings;
  readonly #report: (error: unknown) => void;
  readonly #rings = new Map<string, KeyRing>();
  readonly #current = new AsyncLocalStorage<KeyRing>();
  readonly #fallback: KeyRing;

  /** `context.keys`: the current account's ring, or `fallback` outside an account's request. */
  readonly keys: KeySet;

  constructor(rotation: KeyRotationOptions, store: Store, timings: RingTimings, report: (error: unknown) => void, fallback: KeyRing) {
    this.#rotation = rotation;
    this.#store = store;
    this.#timings = timings;
    this.#report = report;
    this.#fallback = fallback;
    const keysOf = () => this.current().keys;
    this.keys = {
      get signer() {
        return keysOf().signer;
      },
      get byAlg() {
        return keysOf().byAlg;
      },
      get byKid() {
        return keysOf().byKid;
      },
      get jwks() {
        return keysOf().jwks;
      },
    };
  }

  /** The ring `keys` resolves to now: the account's during its request, else the shared one. */
  current(): KeyRing {
    return this.#current.getStore() ?? this.#fallback;
  }

  /** The ring of `accountId` (created in the store on first use: call only for accounts that exist). */
  ring(accountId: string): KeyRing {
    let ring = this.#rings.get(accountId);
    if (ring === undefined) {
      ring = new KeyRing(this.#rotation, this.#store, this.#timings, this.#report, accountRingName(this.#rotation.name, accountId));
      if (this.#rings.size >= MAX_RINGS) this.#rings.delete(this.#rings.keys().next().value as string);
      this.#rings.set(accountId, ring);
    }
    return ring;
  }

  /** Runs `work` with `context.keys` resolving to `ring`, after making sure the ring is loaded and recent. */
  async run<T>(ring: KeyRing, work: () => Promise<T>): Promise<T> {
    const loaded = ring.fresh();
    if (loaded !== undefined) await loaded;
    return this.#current.run(ring, work);
  }
}

/**
 * The account a token claims through its `iss` (`{prefix}{accountId}`), read without verifying anything: it only
 * picks the ring to verify with, and the signature then has to hold under that account's keys.
 */
export function accountOfToken(token: string, issuerPrefix: string): string | undefined {
  const parts = splitCompactJwt(token);
  if (parts === null || parts.payload.length > 8192) return undefined;
  const iss = decodeJsonPart(parts.payload)?.iss;
  if (typeof iss !== 'string' || !iss.startsWith(issuerPrefix)) return undefined;
  try {
    const accountId = decodeURIComponent(iss.slice(issuerPrefix.length));
    return accountId === '' ? undefined : accountId;
  } catch {
    // a malformed percent-escape names no account
    return undefined;
  }
}
