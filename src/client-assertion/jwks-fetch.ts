/**
 * Fetches the public key set of a `private_key_jwt` app from its `jwks_uri` (RFC 7591 §2), defensively: the URL
 * is the client's, so it may hang, redirect, answer megabytes, or point into the service's own network.
 *
 * - The fetch itself is `guarded-fetch.ts`'s: addresses checked and pinned, one deadline, capped body, no redirects.
 * - Sets are cached per URL; concurrent requests for one URL share one fetch; failures are cached briefly, so a
 *   hanging `jwks_uri` costs one timeout per few seconds, not one per request.
 * - Stale-if-error (RFC 5861's idea): a set past its `cacheSeconds` is fetched anew, and when that fetch fails the
 *   last good set keeps serving for at most `staleIfErrorSeconds` more, so a short outage of the client's host does
 *   not lock the client out. The window is bounded because a key the client removed while its host was unreachable
 *   stays usable until then; a fetch that succeeds replaces the set at once, removed keys and all.
 * - At most `maxConcurrentFetches` fetches run at once per fetcher (`src/lib/fetch-slots.ts`); one more is refused.
 */
import { LRUCache } from 'lru-cache';
import { publicKeyProblem } from '../keys/jwk-public.js';
import { FetchSlots } from '../lib/fetch-slots.js';
import { GuardedFetchError, guardedFetch } from './guarded-fetch.js';
import type { ClientJwksOptions } from './options.js';

/** A fetched key set: the public keys only. */
export interface FetchedKeySet {
  keys: Record<string, unknown>[];
}

/** Why a key set could not be fetched; the message names the reason, never the response. */
export class JwksFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwksFetchError';
  }
}

/** How long a failed fetch is remembered before the next attempt. */
const FAILURE_TTL_MS = 5000;

/** The last set fetched from a URL: served until `freshUntil`, and after it, while fetches fail, until `staleUntil`. */
interface GoodSet {
  keys: FetchedKeySet;
  /** Milliseconds since the epoch. */
  freshUntil: number;
  /** Milliseconds since the epoch. */
  staleUntil: number;
}

/** The last failed fetch of a URL, in its pause: no new fetch before `until` (milliseconds since the epoch). */
interface Failure {
  error: JwksFetchError;
  until: number;
}

/** What a fetcher tells the host: a key set served stale because its refetch failed. */
export type StaleWarning = (message: string) => void;

/** A cache of fetched key sets; a service has one for apps' and one for trusted issuers' (`jwksFetcherOf`). */
export class JwksFetcher {
  readonly #options: ClientJwksOptions;
  readonly #warn: StaleWarning | undefined;
  // Expiry is the entries' own (fresh, stale, failure pause), so the LRUs bound only how many URLs are kept. Failures
  // apart from the sets: a stream of failing URLs (a registration per made-up jwks_uri) must not push good sets out,
  // which would cost every client of them a refetch.
  readonly #sets = new LRUCache<string, GoodSet>({ max: 1000 });
  readonly #failures = new LRUCache<string, Failure>({ max: 1000 });
  readonly #inFlight = new Map<string, Promise<FetchedKeySet>>();
  // When each URL was last fetched on request of a refresh, for the callers that rate-limit refreshes.
  readonly #refreshedAt = new LRUCache<string, number>({ max: 1000 });

  readonly #slots: FetchSlots;
  /** Whose turn this fetcher's DNS lookups take (outbound-lookups.ts): apps' and trusted issuers' take their own. */
  readonly #lookupPurpose: string | undefined;
  // The refusal of every fetch beyond the limit until a slot is given back: one error per such spell, so that a
  // caller that reports each error once (brand-jwt.ts) reports the spell once, not once per request.
  #busy: JwksFetchError | undefined;

  constructor(options: ClientJwksOptions, warn?: StaleWarning, lookupPurpose?: string) {
    this.#options = options;
    this.#warn = warn;
    this.#lookupPurpose = lookupPurpose;
    this.#slots = new FetchSlots(options.maxConcurrentFetches);
  }

  /**
   * The key set at `url`, from the cache when fresh. `refresh` fetches anew (a `kid` the cached set lacks may be a
   * rotation); with `minRefreshIntervalMs`, at most once per that interval per URL, so a stream of JWTs naming
   * made-up `kid`s cannot turn into a stream of fetches against the key set's host. A set past its freshness whose
   * refetch fails is served stale, within `staleIfErrorSeconds`; a failed forced refresh throws and keeps the set.
   * @throws JwksFetchError when it cannot be fetched safely and no usable set is held.
   * @example const { keys } = await fetcher.get('https://client.example.com/jwks.json');
   */
  async get(url: string, options: { refresh?: boolean; minRefreshIntervalMs?: number } = {}): Promise<FetchedKeySet> {
    let refresh = options.refresh === true;
    const now = Date.now();
    if (refresh && options.minRefreshIntervalMs !== undefined) {
      const last = this.#refreshedAt.get(url);
      if (last !== undefined && now - last < options.minRefreshIntervalMs) refresh = false;
      else this.#refreshedAt.set(url, now);
    }
    const held = this.#sets.get(url);
    const good = held !== undefined && held.staleUntil > now ? held : undefined;
    if (!refresh) {
      if (good !== undefined && good.freshUntil > now) return good.keys;
      const failure = this.#failures.get(url);
      if (failure !== undefined && failure.until > now) {
        if (good !== undefined) return good.keys;
        throw failure.error;
      }
    }
    let pending = this.#inFlight.get(url);
    if (pending === undefined) {
      const release = this.#slots.take();
      // Refused at once and not remembered: the URL is not at fault, and a queue would grow as fast as requests come.
      // A set held past its freshness serves on meanwhile, as when its refetch fails.
      if (release === null) {
        if (!refresh && good !== undefined) return good.keys;
        this.#busy ??= new JwksFetchError(`${this.#options.maxConcurrentFetches} key sets are being fetched already; try again shortly`);
        throw this.#busy;
      }
      pending = this.#fetch(url, good).finally(() => {
        release();
        this.#busy = undefined;
      });
      const settled = pending.finally(() => this.#inFlight.delete(url));
      settled.catch(() => {});
      this.#inFlight.set(url, pending);
    }
    try {
      return await pending;
    } catch (error) {
      // A forced refresh that fails keeps the good set it was meant to renew (one JWT naming a made-up kid while the
      // key host hiccups must not cost the client its keys), but answers with the failure: the kid was not found.
      // A refetch of an expired set that fails serves the set stale instead, within its window.
      if (!refresh && good !== undefined) return good.keys;
      throw error;
    }
  }

  /** One fetch of `url`; `good` is the set held when it started (kept on failure). */
  async #fetch(url: string, good: GoodSet | undefined): Promise<FetchedKeySet> {
    const { cacheSeconds, staleIfErrorSeconds } = this.#options;
    try {
      const keys = await fetchKeySet(url, this.#options, this.#lookupPurpose);
      const fetchedAt = Date.now();
      const freshUntil = fetchedAt + cacheSeconds * 1000;
      this.#failures.delete(url);
      // cacheSeconds 0 keeps nothing, so nothing is served stale either.
      if (cacheSeconds > 0) this.#sets.set(url, { keys, freshUntil, staleUntil: freshUntil + staleIfErrorSeconds * 1000 });
      else this.#sets.delete(url);
      return keys;
    } catch (error) {
      const failure = error instanceof JwksFetchError ? error : new JwksFetchError('the key set could not be fetched');
      const now = Date.now();
      this.#failures.set(url, { error: failure, until: now + FAILURE_TTL_MS });
      if (good !== undefined && good.freshUntil <= now) {
        this.#warn?.(
          `sentinel-idp: the key set at ${url} could not be fetched anew (${failure.message}); its last good copy is ` +
            `used until ${new Date(good.staleUntil).toISOString()} unless a fetch succeeds before (clientJwks.staleIfErrorSeconds)`,
        );
      }
      throw failure;
    }
  }
}

function parseKeySet(body: Buffer): FetchedKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new JwksFetchError('the jwks_uri response is not JSON');
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new JwksFetchError('the jwks_uri response is not a JWK set');
  // A set that carries private keys was published by mistake: use none of it.
  if (keys.some((key) => publicKeyProblem(key) === 'must not contain private key material')) {
    throw new JwksFetchError('the jwks_uri publishes private key material');
  }
  // Any other unusable key (a symmetric one, an RSA key under 2048 bits) is dropped and the rest kept: a legacy key
  // beside the client's current ones verifies nothing, and must not reach a verifier that would throw on it.
  return { keys: keys.filter((key) => publicKeyProblem(key) === null) as Record<string, unknown>[] };
}

/**
 * One guarded fetch of a key set ({@link guardedFetch}); `lookupPurpose` names whose turn its DNS lookup takes
 * (`GuardedFetchOptions.lookupPurpose`).
 * @throws JwksFetchError for a refused address, redirect, non-200, timeout, oversized or malformed body.
 */
export async function fetchKeySet(url: string, options: ClientJwksOptions, lookupPurpose?: string): Promise<FetchedKeySet> {
  try {
    const { body } = await guardedFetch(url, {
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      allowPrivateAddresses: options.allowPrivateAddresses,
      label: 'the jwks_uri',
      accept: 'application/json, application/jwk-set+json',
      lookupPurpose,
    });
    return parseKeySet(body);
  } catch (error) {
    throw error instanceof GuardedFetchError ? new JwksFetchError(error.message) : error;
  }
}
