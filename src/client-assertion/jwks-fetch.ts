/**
 * Fetches the public key set of a `private_key_jwt` app from its `jwks_uri` (RFC 7591 §2), defensively: the URL
 * is the client's, so it may hang, redirect, answer megabytes, or point into the service's own network.
 *
 * - The fetch itself is `guarded-fetch.ts`'s: addresses checked and pinned, one deadline, capped body, no redirects.
 * - Sets are cached per URL; concurrent requests for one URL share one fetch; failures are cached briefly, so a
 *   hanging `jwks_uri` costs one timeout per few seconds, not one per request.
 */
import { LRUCache } from 'lru-cache';
import { publicKeyProblem } from '../keys/jwk-public.js';
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

type Entry = { keys: FetchedKeySet } | { error: JwksFetchError };

/** A per-service cache of fetched key sets. */
export class JwksFetcher {
  readonly #options: ClientJwksOptions;
  readonly #cache = new LRUCache<string, Entry>({ max: 1000 });
  readonly #inFlight = new Map<string, Promise<FetchedKeySet>>();
  // When each URL was last fetched on request of a refresh, for the callers that rate-limit refreshes.
  readonly #refreshedAt = new LRUCache<string, number>({ max: 1000 });

  constructor(options: ClientJwksOptions) {
    this.#options = options;
  }

  /**
   * The key set at `url`, from the cache when fresh. `refresh` fetches anew (a `kid` the cached set lacks may be a
   * rotation); with `minRefreshIntervalMs`, at most once per that interval per URL, so a stream of JWTs naming
   * made-up `kid`s cannot turn into a stream of fetches against the key set's host.
   * @throws JwksFetchError when it cannot be fetched safely.
   */
  async get(url: string, options: { refresh?: boolean; minRefreshIntervalMs?: number } = {}): Promise<FetchedKeySet> {
    let refresh = options.refresh === true;
    if (refresh && options.minRefreshIntervalMs !== undefined) {
      const last = this.#refreshedAt.get(url);
      const now = Date.now();
      if (last !== undefined && now - last < options.minRefreshIntervalMs) refresh = false;
      else this.#refreshedAt.set(url, now);
    }
    const held = this.#cache.get(url);
    const cached = refresh ? undefined : held;
    if (cached !== undefined) {
      if ('error' in cached) throw cached.error;
      return cached.keys;
    }
    // A forced refresh that fails keeps the good set it was meant to renew: one JWT naming a made-up kid while the
    // key host hiccups must not cost the client its keys (stale-if-error).
    const good = held !== undefined && 'keys' in held ? held : undefined;
    let pending = this.#inFlight.get(url);
    if (pending === undefined) {
      pending = fetchKeySet(url, this.#options).then(
        (keys) => {
          if (this.#options.cacheSeconds > 0) this.#cache.set(url, { keys }, { ttl: this.#options.cacheSeconds * 1000 });
          return keys;
        },
        (error: unknown) => {
          const failure = error instanceof JwksFetchError ? error : new JwksFetchError('the key set could not be fetched');
          if (good === undefined) this.#cache.set(url, { error: failure }, { ttl: FAILURE_TTL_MS });
          throw failure;
        },
      );
      const settled = pending.finally(() => this.#inFlight.delete(url));
      settled.catch(() => {});
      this.#inFlight.set(url, pending);
    }
    return pending;
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
 * One guarded fetch of a key set ({@link guardedFetch}).
 * @throws JwksFetchError for a refused address, redirect, non-200, timeout, oversized or malformed body.
 */
export async function fetchKeySet(url: string, options: ClientJwksOptions): Promise<FetchedKeySet> {
  try {
    const { body } = await guardedFetch(url, {
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      allowPrivateAddresses: options.allowPrivateAddresses,
      label: 'the jwks_uri',
      accept: 'application/json, application/jwk-set+json',
    });
    return parseKeySet(body);
  } catch (error) {
    throw error instanceof GuardedFetchError ? new JwksFetchError(error.message) : error;
  }
}
