/**
 * The bearer guard's cache of verified access tokens. A resource server sees the same token many times within its
 * lifetime; re-checking an ES256 signature each time is most of the guard's cost. This cache remembers only what
 * cannot change for a given token: that its signature, `typ`, `iss`, `nbf` and `iat` were valid, and which key
 * verified it. Everything that can change is still checked on every request by the caller (`verifyAccessTokenJWT`):
 * account, audience and consumer match, grant liveness, app presence and the DPoP proof with its `ath`.
 *
 * - Keyed by the token string itself. A SHA-256 digest of each presented token cost as much as every other step of
 *   a cache hit together (bench/RESULTS.md, findings); a Map lookup by string compares the token instead. The price: a heap
 *   dump of the process holds the tokens verified in the last `maxAgeSeconds` (at most `maxBytes` of them), as it
 *   holds the headers of the requests in flight. They are access tokens of at most an hour, never refresh tokens.
 * - A hit is served only while the key that verified it is still the key of that `kid` in the current key set: a
 *   revoked or rotated-out key (src/keys/signing-keys.ts, src/keys/keyring/) makes the entry a miss, and full verification refuses.
 * - An entry lives until the token's `exp` and never longer than `maxAgeSeconds`; a hit past either is a miss.
 * - Bounded in entries and in bytes (an estimate of each entry's heap cost, the token included), least recently
 *   used evicted first.
 */
import { LRUCache } from 'lru-cache';
import type { SentinelContext } from '../http/context.js';
import { verifyJWTIn, type JWTClaims, type VerifyJWTOptions } from '../keys/jws.js';
import type { KeySet, SigningKey } from '../keys/signing-keys.js';

/** Bounds of the cache (the `verifiedTokens` option). */
export interface VerifiedTokenLimits {
  maxEntries: number;
  maxBytes: number;
  maxAgeSeconds: number;
}

/**
 * A verified token: its claims, the key that verified it and until when a hit may serve it. `facts` is a slot for
 * what the access-token checks derive from the claims once per entry instead of once per request.
 */
export interface VerifiedToken<Facts = unknown> {
  readonly claims: JWTClaims;
  readonly key: SigningKey;
  /** Epoch milliseconds: the token's `exp`, or `maxAgeSeconds` after the verification if that is sooner. */
  readonly expiresAtMs: number;
  facts: Facts | undefined;
}

// Heap cost of an entry besides the token and its claims: the entry object, the LRU's slots, the derived facts.
const ENTRY_OVERHEAD_BYTES = 320;

/** A bounded map from token to what its verification produced. */
export class VerifiedTokenCache {
  readonly #entries: LRUCache<string, VerifiedToken>;
  readonly #maxAgeMs: number;

  constructor(limits: VerifiedTokenLimits) {
    this.#maxAgeMs = limits.maxAgeSeconds * 1000;
    // No ttl in the LRU itself: its timers would cost a clock read per lookup, and `get` checks expiresAtMs anyway.
    // An entry that expired unseen stays until evicted, within the same bounds.
    this.#entries = new LRUCache<string, VerifiedToken>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      // Tokens are one-byte strings. The decoded claims cost about twice their JSON length (UTF-16, object slots),
      // and their JSON is about half the token (three quarters of the base64url payload, most of the token): so
      // the token's length once more, without serializing the claims on every miss.
      sizeCalculation: (_entry, token) => token.length * 2 + ENTRY_OVERHEAD_BYTES,
    });
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Estimated bytes held now (what `maxBytes` bounds). */
  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  /** Whether `token` is held now (expired or not). */
  has(token: string): boolean {
    return this.#entries.has(token);
  }

  /** An earlier verification of `token`, if still valid against `keys` at `nowMs`. */
  get(token: string, keys: KeySet, nowMs: number): VerifiedToken | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    // The key must still be in the key set, as the same key: after a revocation the token is verified afresh
    // (and refused). An expired token is never served from here.
    if (entry.expiresAtMs <= nowMs || keys.byKid.get(entry.key.kid) !== entry.key) {
      this.#entries.delete(token);
      return undefined;
    }
    return entry;
  }

  /** Remembers a verified token until its `exp`, at most `maxAgeSeconds`; returns the entry (also when not kept). */
  set(token: string, claims: JWTClaims, key: SigningKey, nowMs: number): VerifiedToken {
    const expiresAtMs = Math.min(nowMs + this.#maxAgeMs, (claims.exp as number) * 1000);
    // `facts` is filled in by the first check; present from the start, so that filling it does not give every entry
    // a second hidden class (a map migration per verified token, seen in `perf`).
    const entry: VerifiedToken = { claims, key, expiresAtMs, facts: undefined };
    if (expiresAtMs > nowMs) this.#entries.set(token, entry);
    return entry;
  }
}

// One cache per service instance: request-scoped contexts share the resolved config object.
const byConfig = new WeakMap<SentinelContext['config'], VerifiedTokenCache>();

function cacheOf(context: SentinelContext): VerifiedTokenCache | undefined {
  const limits = context.config.verifiedTokens;
  if (limits === false) return undefined;
  let cache = byConfig.get(context.config);
  if (cache === undefined) {
    cache = new VerifiedTokenCache(limits);
    byConfig.set(context.config, cache);
  }
  return cache;
}

/**
 * The cached verification of `token` if there is a valid one, without verifying anything: the guard's synchronous
 * fast path. `undefined` on a miss (or with the cache off).
 */
export function cachedToken(context: SentinelContext, token: string): VerifiedToken | undefined {
  return cacheOf(context)?.get(token, context.keys, Date.now());
}

/**
 * The signature and time checks of an access token, served from the cache when this token verified before with a
 * key still current; otherwise verified (on the thread pool or the main thread, the `verification` option) and
 * remembered. The entry's claims are shared with later hits: callers copy before decorating.
 */
export async function verifySignedToken(context: SentinelContext, token: string, options: VerifyJWTOptions): Promise<VerifiedToken> {
  const cache = cacheOf(context);
  const { keys } = context;
  const hit = cache?.get(token, keys, Date.now());
  if (hit !== undefined) return hit;
  const { claims, key } = await verifyJWTIn(context.config.verification, keys, token, options);
  if (cache === undefined) return { claims, key, expiresAtMs: (claims.exp as number) * 1000, facts: undefined };
  return cache.set(token, claims, key, Date.now());
}

/** The cache of a service instance (for tests and the bench's memory figures); undefined when turned off. */
export function verifiedTokenCache(context: SentinelContext): VerifiedTokenCache | undefined {
  return cacheOf(context);
}
