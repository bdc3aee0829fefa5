/**
 * Fetches the public key set of a `private_key_jwt` app from its `jwks_uri` (RFC 7591 §2), defensively: the URL
 * is the client's, so it may hang, redirect, answer megabytes, or point into the service's own network.
 *
 * - DNS is resolved once and every address checked ({@link isForbiddenAddress}); the connection is pinned to the
 *   checked address, so a second resolution cannot swap in a private one (DNS rebinding).
 * - One deadline covers connect, headers and body; bodies are capped while streaming; redirects are refused.
 * - Sets are cached per URL; concurrent requests for one URL share one fetch; failures are cached briefly, so a
 *   hanging `jwks_uri` costs one timeout per few seconds, not one per request.
 */
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { publicKeyProblem } from '../keys/jwk-public.js';
import { isForbiddenAddress } from './address-guard.js';
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

  constructor(options: ClientJwksOptions) {
    this.#options = options;
  }

  /**
   * The key set at `url`, from the cache when fresh.
   * @throws JwksFetchError when it cannot be fetched safely.
   */
  async get(url: string, options: { refresh?: boolean } = {}): Promise<FetchedKeySet> {
    const cached = options.refresh === true ? undefined : this.#cache.get(url);
    if (cached !== undefined) {
      if ('error' in cached) throw cached.error;
      return cached.keys;
    }
    let pending = this.#inFlight.get(url);
    if (pending === undefined) {
      pending = fetchKeySet(url, this.#options).then(
        (keys) => {
          if (this.#options.cacheSeconds > 0) this.#cache.set(url, { keys }, { ttl: this.#options.cacheSeconds * 1000 });
          return keys;
        },
        (error: unknown) => {
          const failure = error instanceof JwksFetchError ? error : new JwksFetchError('the key set could not be fetched');
          this.#cache.set(url, { error: failure }, { ttl: FAILURE_TTL_MS });
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

async function resolveAllowed(hostname: string, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  const addresses = isIP(bare) !== 0 ? [{ address: bare, family: isIP(bare) }] : await lookup(bare, { all: true, verbatim: true });
  if (addresses.length === 0) throw new JwksFetchError('the jwks_uri host does not resolve');
  if (!allowPrivate && addresses.some((entry) => isForbiddenAddress(entry.address))) {
    throw new JwksFetchError('the jwks_uri points at a private, loopback or link-local address');
  }
  return addresses[0] as { address: string; family: number };
}

function readCapped(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new JwksFetchError('the jwks_uri response is too large'));
      response.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Rejected before the destroy: destroying emits 'aborted', which must not win with a vaguer reason.
        reject(new JwksFetchError('the jwks_uri response is too large'));
        response.destroy();
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', () => reject(new JwksFetchError('the jwks_uri response was cut off')));
    response.on('aborted', () => reject(new JwksFetchError('the jwks_uri response was cut off')));
  });
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
  return { keys: keys.filter((key) => publicKeyProblem(key) === null) as Record<string, unknown>[] };
}

/**
 * One guarded fetch of a key set.
 * @throws JwksFetchError for a refused address, redirect, non-200, timeout, oversized or malformed body.
 */
export async function fetchKeySet(url: string, options: ClientJwksOptions): Promise<FetchedKeySet> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new JwksFetchError('the jwks_uri is not a URL');
  }
  const https = target.protocol === 'https:';
  if (!https && !(target.protocol === 'http:' && options.allowPrivateAddresses)) {
    throw new JwksFetchError('the jwks_uri must use https');
  }
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const timedOut = new Promise<never>((_, reject) => {
    deadline.addEventListener('abort', () => reject(new JwksFetchError('the jwks_uri did not answer in time')), { once: true });
  });
  timedOut.catch(() => {});
  const pinned = await Promise.race([resolveAllowed(target.hostname, options.allowPrivateAddresses), timedOut]);
  const pinnedLookup: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
    } else {
      callback(null, pinned.address, pinned.family);
    }
  };
  const send = https ? httpsRequest : httpRequest;
  const response = await Promise.race([
    new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send(target, {
        method: 'GET',
        headers: { accept: 'application/json, application/jwk-set+json' },
        lookup: pinnedLookup,
        signal: deadline,
        agent: false,
      });
      outgoing.on('response', resolve);
      outgoing.on('error', () => reject(new JwksFetchError('the jwks_uri could not be reached')));
      outgoing.end();
    }),
    timedOut,
  ]);
  if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400) {
    response.destroy();
    throw new JwksFetchError('the jwks_uri redirects; redirects are not followed');
  }
  if (response.statusCode !== 200) {
    response.destroy();
    throw new JwksFetchError(`the jwks_uri answered ${String(response.statusCode)}`);
  }
  const body = await Promise.race([readCapped(response, options.maxBytes), timedOut]).finally(() => {
    if (!response.complete) response.destroy();
  });
  return parseKeySet(body);
}
