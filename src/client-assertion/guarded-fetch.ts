/**
 * One outbound GET made on a client's behalf (a `jwks_uri`, a client ID metadata document), defensively: the URL is
 * the client's, so it may hang, redirect, answer megabytes, or point into the service's own network.
 *
 * - DNS is resolved once and every address checked ({@link isForbiddenAddress}); the connection is pinned to the
 *   checked address, so a second resolution cannot swap in a private one (DNS rebinding). The lookup takes one of
 *   the process's few outbound lookup slots (outbound-lookups.ts) and waits for one no longer than the deadline.
 * - One deadline covers connect, headers and body; bodies are capped while streaming; redirects are refused.
 *
 * Caching is the caller's: what may be kept, and for how long, depends on what was fetched.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isForbiddenAddress } from './address-guard.js';
import { boundedLookup } from './outbound-lookups.js';

/**
 * Why a document could not be fetched; the message names the reason (and the document), never the response. A
 * socket or TLS failure keeps the error it came from as `cause`, for the operator's log, not for the message.
 */
export class GuardedFetchError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'GuardedFetchError';
  }
}

/** How one fetch is guarded. */
export interface GuardedFetchOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Loopback, private and link-local addresses, and plain http: development and tests only. */
  allowPrivateAddresses: boolean;
  /** The document as error messages name it, e.g. `the jwks_uri`. */
  label: string;
  /** The `Accept` header. */
  accept: string;
  /** Whose turn the DNS lookup takes among the process's outbound lookups (outbound-lookups.ts); `label` unless told. */
  lookupPurpose?: string | undefined;
  /** Trust anchors in place of the system's (PEM): tests that serve https on loopback with their own certificate. */
  ca?: string | undefined;
  /**
   * Told of the host name's DNS lookup, which goes on past the deadline: `getaddrinfo` cannot be cancelled, and holds
   * a thread of libuv's pool until the name server answers (a lookup still waiting for a slot at the deadline is given
   * up then). A caller that bounds its fetches (`src/lib/fetch-slots.ts`) gives a slot back only once it has settled,
   * so that its fetches hold no more lookups, running or waiting, than its bound.
   */
  onLookup?: ((lookup: Promise<unknown>) => void) | undefined;
}

/** What a fetch brought back: the body and the response headers (for the caller's caching). */
export interface FetchedDocument {
  body: Buffer;
  headers: IncomingHttpHeaders;
}

async function resolveAllowed(
  hostname: string,
  options: GuardedFetchOptions,
  deadline: AbortSignal,
): Promise<{ address: string; family: number }> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  let addresses: { address: string; family: number }[];
  try {
    addresses =
      isIP(bare) !== 0
        ? [{ address: bare, family: isIP(bare) }]
        : await boundedLookup(bare, options.lookupPurpose ?? options.label, deadline);
  } catch {
    // ENOTFOUND, EINVAL (a name too long), a resolver's failure: the URL's fault as far as the caller can tell, never
    // a server error (a client_id URL is anyone's to make up). No lookup slot before the deadline: the deadline's own
    // rejection has answered the caller by then.
    addresses = [];
  }
  if (addresses.length === 0) throw new GuardedFetchError(`${options.label} host does not resolve`);
  if (!options.allowPrivateAddresses && addresses.some((entry) => isForbiddenAddress(entry.address))) {
    throw new GuardedFetchError(`${options.label} points at a private, loopback or link-local address`);
  }
  return addresses[0] as { address: string; family: number };
}

function readCapped(response: IncomingMessage, options: GuardedFetchOptions): Promise<Buffer> {
  const { maxBytes, label } = options;
  return new Promise((resolve, reject) => {
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new GuardedFetchError(`${label} response is too large`));
      response.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Rejected before the destroy: destroying emits 'aborted', which must not win with a vaguer reason.
        reject(new GuardedFetchError(`${label} response is too large`));
        response.destroy();
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', () => reject(new GuardedFetchError(`${label} response was cut off`)));
    response.on('aborted', () => reject(new GuardedFetchError(`${label} response was cut off`)));
  });
}

/**
 * One guarded GET of `url`.
 * @throws GuardedFetchError for a refused address or scheme, a redirect, a non-200, a timeout or an oversized body.
 * @example const { body, headers } = await guardedFetch(url, { timeoutMs: 2000, maxBytes: 5120, allowPrivateAddresses: false, label: 'the client metadata document', accept: 'application/json' });
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<FetchedDocument> {
  const { label } = options;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new GuardedFetchError(`${label} is not a URL`);
  }
  const https = target.protocol === 'https:';
  if (!https && !(target.protocol === 'http:' && options.allowPrivateAddresses)) {
    throw new GuardedFetchError(`${label} must use https`);
  }
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const timedOut = new Promise<never>((_, reject) => {
    deadline.addEventListener('abort', () => reject(new GuardedFetchError(`${label} did not answer in time`)), { once: true });
  });
  timedOut.catch(() => {});
  const resolving = resolveAllowed(target.hostname, options, deadline);
  options.onLookup?.(resolving);
  const pinned = await Promise.race([resolving, timedOut]);
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
        headers: { accept: options.accept },
        lookup: pinnedLookup,
        signal: deadline,
        agent: false,
        ...(options.ca === undefined ? {} : { ca: options.ca }),
      });
      outgoing.on('response', resolve);
      outgoing.on('error', (error) => reject(new GuardedFetchError(`${label} could not be reached`, { cause: error })));
      outgoing.end();
    }),
    timedOut,
  ]);
  if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400) {
    response.destroy();
    throw new GuardedFetchError(`${label} redirects; redirects are not followed`);
  }
  if (response.statusCode !== 200) {
    response.destroy();
    throw new GuardedFetchError(`${label} answered ${String(response.statusCode)}`);
  }
  const body = await Promise.race([readCapped(response, options), timedOut]).finally(() => {
    if (!response.complete) response.destroy();
  });
  return { body, headers: response.headers };
}
