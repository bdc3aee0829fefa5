/**
 * Retrieving a client ID metadata document so that a failure tells the client nothing about the network behind the
 * URL. The URL is anyone's to make up: were a closed port, a port that speaks no TLS, a host that does not resolve,
 * a private address, a timeout and a web page each answered differently (in words, or in how soon), every
 * `client_id` would be a probe of what the service can reach. So every way of not getting a document is one
 * {@link DocumentRetrievalError}, whose message is for the operator alone, and none comes sooner than the fetch
 * deadline: a refused connection takes as long as one that hangs.
 *
 * Retrieved means: a 200 from a public https host, within the deadline and the size cap, that is a JSON object
 * whose `client_id` is the URL. Only such a document is the client's own, to be judged with a description of what
 * is wrong with it; anything short of that is what the URL happened to point at.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { GuardedFetchError, guardedFetch } from '../client-assertion/guarded-fetch.js';

/** The largest document read (the draft's suggestion: a metadata document is a few hundred bytes). */
const MAX_DOCUMENT_BYTES = 5 * 1024;

/**
 * Why a document could not be retrieved, for the operator: the URL and the precise reason (with the socket or TLS
 * error as `cause`). Never shown to the client.
 */
export class DocumentRetrievalError extends Error {
  readonly clientId: string;

  constructor(clientId: string, reason: string, options?: ErrorOptions) {
    super(`the client metadata document ${clientId} could not be retrieved: ${reason}`, options);
    this.name = 'DocumentRetrievalError';
    this.clientId = clientId;
  }
}

/** How one document is retrieved. */
export interface RetrievalOptions {
  /** One deadline for the whole fetch, and the least time a failure takes. */
  timeoutMs: number;
  allowPrivateAddresses: boolean;
  /** Trust anchors in place of the system's (PEM), for tests. */
  ca?: string | undefined;
  /** Told of the DNS lookup, which outlives the deadline (`GuardedFetchOptions.onLookup`). */
  onLookup?: ((lookup: Promise<unknown>) => void) | undefined;
}

/** A retrieved document: a JSON object naming its URL as `client_id`, and the response headers (for caching). */
export interface RetrievedDocument {
  document: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/** The socket or TLS error code under a fetch failure (`ECONNREFUSED`, `ERR_SSL_WRONG_VERSION_NUMBER`, …), if any. */
function codeOf(error: GuardedFetchError): string {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? ` (${code})` : '';
}

async function fetchDocument(clientId: string, options: RetrievalOptions): Promise<RetrievedDocument> {
  let fetched: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    fetched = await guardedFetch(clientId, {
      timeoutMs: options.timeoutMs,
      maxBytes: MAX_DOCUMENT_BYTES,
      allowPrivateAddresses: options.allowPrivateAddresses,
      label: 'the client metadata document',
      accept: 'application/json',
      ca: options.ca,
      onLookup: options.onLookup,
    });
  } catch (error) {
    if (error instanceof GuardedFetchError)
      throw new DocumentRetrievalError(clientId, `${error.message}${codeOf(error)}`, { cause: error });
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fetched.body.toString('utf8'));
  } catch {
    throw new DocumentRetrievalError(clientId, 'the response is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new DocumentRetrievalError(clientId, 'the response is not a JSON object');
  }
  const document = parsed as Record<string, unknown>;
  if (document.client_id === undefined) throw new DocumentRetrievalError(clientId, 'the response has no client_id');
  if (document.client_id !== clientId) throw new DocumentRetrievalError(clientId, 'the response names another client_id than its URL');
  return { document, headers: fetched.headers };
}

/**
 * Fetches the document at `clientId` through the guarded fetcher (public addresses pinned, one deadline, 5 KiB, no
 * redirects) and checks that it is a JSON object naming `clientId`.
 * @throws DocumentRetrievalError when it cannot, never sooner than `timeoutMs` after the call.
 * @example const { document, headers } = await retrieveDocument(clientId, { timeoutMs: 2000, allowPrivateAddresses: false });
 */
export async function retrieveDocument(clientId: string, options: RetrievalOptions): Promise<RetrievedDocument> {
  const started = performance.now();
  try {
    return await fetchDocument(clientId, options);
  } catch (error) {
    // Held to the deadline: how soon a failure comes would otherwise tell a refused port from a filtered one.
    const remaining = options.timeoutMs - (performance.now() - started);
    if (remaining > 0) await sleep(remaining);
    throw error;
  }
}
