/**
 * The bearer guard's cache of verified access tokens. A resource server sees the same token many times within its
 * lifetime; re-checking an ES256 signature each time is most of the guard's cost. This cache remembers only what
 * cannot change for a given token: that its signature, `typ`, `iss`, `nbf` and `iat` were valid, and which key
 * verified it. Everything that can change is still checked on every request by the caller (`verifyAccessToken`):
 * account, audience and consumer match, grant liveness, app presence and the DPoP proof with its `ath`.
 *
 * - Keyed by the SHA-256 of the token, never the token itself, so a heap dump does not hand out usable tokens.
 * - A hit is served only while the key that verified it is still the key of that `kid` in the current key set: a
 *   revoked or rotated-out key (src/keys.ts, src/keyring/) makes the entry a miss, and full verification refuses.
 * - An entry lives until the token's `exp` and never longer than `maxAgeSeconds`; a hit past `exp` is a miss.
 * - Bounded in entries and in bytes (an estimate of each entry's heap cost), least recently used evicted first.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SentinelContext } from './context.js';
import { verifyJWTIn, type JWTClaims, type VerifyJWTOptions } from './jwt.js';
import type { KeySet, SigningKey } from './keys.js';

/** Bounds of the cache (the `verifiedTokens` option). */
export interface VerifiedTokenLimits {
  maxEntries: number;
  maxBytes: number;
  maxAgeSeconds: number;
}

interface Entry {
  claims: JWTClaims;
  key: SigningKey;
}

// Heap cost of an entry besides its payload: the digest string, the entry and claims objects, the LRU's slots.
const ENTRY_OVERHEAD_BYTES = 320;

/** A bounded map from token digest to the claims its verification produced. */
export class VerifiedTokenCache {
  readonly #entries: LRUCache<string, Entry>;
  readonly #maxAgeMs: number;

  constructor(limits: VerifiedTokenLimits) {
    this.#maxAgeMs = limits.maxAgeSeconds * 1000;
    this.#entries = new LRUCache<string, Entry>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      // The decoded claims cost roughly twice their base64url length (UTF-16 strings plus object slots).
      sizeCalculation: (entry, digest) => digest.length * 2 + ENTRY_OVERHEAD_BYTES + JSON.stringify(entry.claims).length * 2,
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

  /** The digests held now, most recently used first. */
  digests(): string[] {
    return [...this.#entries.keys()];
  }

  /** The claims of an earlier verification of `token`, if still valid against `keys` at `nowMs`. */
  get(digest: string, keys: KeySet, nowMs: number): JWTClaims | undefined {
    const entry = this.#entries.get(digest);
    if (entry === undefined) return undefined;
    // The key must still be in the key set, as the same key: after a revocation the token is verified afresh
    // (and refused). An expired token is never served from here.
    if (keys.byKid.get(entry.key.kid) !== entry.key || (entry.claims.exp as number) * 1000 <= nowMs) {
      this.#entries.delete(digest);
      return undefined;
    }
    return entry.claims;
  }

  /** Remembers a verified token until its `exp`, at most `maxAgeSeconds`. */
  set(digest: string, claims: JWTClaims, key: SigningKey, nowMs: number): void {
    const ttl = Math.min(this.#maxAgeMs, (claims.exp as number) * 1000 - nowMs);
    if (ttl <= 0) return;
    this.#entries.set(digest, { claims, key }, { ttl });
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

/** The digest a token is cached under. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * The signature and time checks of an access token, served from the cache when this token verified before with a
 * key still current; otherwise verified (on the thread pool or the main thread, the `verification` option) and
 * remembered. Returns a copy of the claims: callers may decorate what they get.
 */
export async function verifySignedToken(context: SentinelContext, token: string, options: VerifyJWTOptions): Promise<JWTClaims> {
  const cache = cacheOf(context);
  const { keys } = context;
  if (cache === undefined) return (await verifyJWTIn(context.config.verification, keys, token, options)).claims;
  const digest = tokenDigest(token);
  const nowMs = Date.now();
  const hit = cache.get(digest, keys, nowMs);
  if (hit !== undefined) return { ...hit };
  const { claims, key } = await verifyJWTIn(context.config.verification, keys, token, options);
  cache.set(digest, claims, key, Date.now());
  return { ...claims };
}

/** The cache of a service instance (for tests and the bench's memory figures); undefined when turned off. */
export function verifiedTokenCache(context: SentinelContext): VerifiedTokenCache | undefined {
  return cacheOf(context);
}
