/**
 * The boundary between the core and the adapters: plain objects in, plain objects out.
 *
 * Adapters translate their framework's request into a {@link SentinelRequest}, call `sentinel.handle()`, and
 * write the {@link SentinelResponse} back unchanged. The core decides everything (status, every header, cookies,
 * body) so that every framework behaves byte-for-byte the same. No WHATWG Request/Response on the hot path: the
 * cost of a Web round trip on Node is larger than an ES256 signature.
 */

/**
 * A request body as the host may hand it over: raw text/bytes, or an object a host body parser produced
 * (RFC 6749 §4.1.3 and §4.4.2 bodies are `application/x-www-form-urlencoded`, Appendix B).
 *
 * @example
 * const body: SentinelBody = 'grant_type=client_credentials&client_id=c-1&client_secret=…'; // or express.urlencoded()'s object
 */
export type SentinelBody = string | Uint8Array | Record<string, unknown>;

/**
 * A request in framework-neutral form (the HTTP request of RFC 9110 §9 that an adapter received). Header names are
 * lower-case.
 *
 * @example
 * const response = await sentinel.handle({
 *   method: 'POST',
 *   path: '/sentinel/api/v2/account/123456/app/token',
 *   query: new URLSearchParams({ state: consumerId }),
 *   headers: { 'content-type': 'application/x-www-form-urlencoded' },
 *   body: 'grant_type=client_credentials&client_id=…&client_secret=…',
 * });
 */
export interface SentinelRequest {
  method: string;
  /** Path relative to the host's mount point, without the query string. */
  path: string;
  query: URLSearchParams;
  /**
   * The query string exactly as received, without the `?` ('' for none), when the adapter has it: `query` re-encoded
   * (`toString()`) may differ, and a `private_key_jwt` assertion may name the URL with the query as the client sent
   * it. Without it, the core uses `query.toString()`.
   */
  rawQuery?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /**
   * The body: already parsed by the host, raw, or a function that reads it on demand. A lazy body lets the core
   * leave the stream untouched for paths that are not its own and refuse oversized bodies before reading them. The
   * function may answer at once when the body has already arrived (the Node adapters do for a small form that came
   * with its headers), or with a promise.
   */
  body?: SentinelBody | (() => SentinelBody | undefined | Promise<SentinelBody | undefined>) | undefined;
  /** Client address as the host sees it (used for login throttling). */
  ip?: string | undefined;
  /** Whether the connection is TLS as the host sees it. */
  secure?: boolean | undefined;
  /** The prefix the host stripped before handing the request over ('' or e.g. '/idp'). */
  mountPath?: string | undefined;
}

/**
 * A complete HTTP outcome (RFC 9110 §15 status, headers, body). `Set-Cookie` may carry several values.
 *
 * @example
 * const response = await sentinel.handle(request);
 * if (response === null) return next(); // not the service's path
 * res.writeHead(response.status, response.headers).end(response.body);
 */
export interface SentinelResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body?: string | undefined;
}

/*
 * Every response says `nosniff` (`x-content-type-options`), not only the HTML pages: a browser that sniffs a JSON
 * error or a redirect body as HTML or script would run what an attacker managed to reflect into it.
 *
 * The header objects below are written out as literals in each function: a response's headers are its own (hosts
 * and adapters add to them), and V8 copies a literal from its boilerplate, where a spread of a shared frozen object
 * took its slow clone path on every token response.
 */

/**
 * The headers every token-endpoint response carries (RFC 6749 §5.1), a new object per call.
 * @example return { status: 200, headers: noStoreJSONHeaders(), body };
 */
export function noStoreJSONHeaders(): Record<string, string> {
  return {
    'content-type': 'application/json;charset=UTF-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'x-content-type-options': 'nosniff',
  };
}

/** {@link noStoreJSONHeaders} as a constant, for comparisons. */
export const NO_STORE_JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze(noStoreJSONHeaders());

/** A JSON response that must never be cached (token, introspection, errors). */
export function noStoreJSON(status: number, payload: unknown, headers?: Record<string, string | string[]>): SentinelResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json;charset=UTF-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'x-content-type-options': 'nosniff',
      ...headers,
    },
    body: JSON.stringify(payload),
  };
}

/** A cacheable JSON response (JWKS, metadata). */
export function cacheableJSON(status: number, payload: unknown, maxAgeSeconds: number): SentinelResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json;charset=UTF-8',
      'cache-control': `public, max-age=${maxAgeSeconds}`,
      'x-content-type-options': 'nosniff',
    },
    body: JSON.stringify(payload),
  };
}

/** A redirect; `Cache-Control: no-store` so a browser never replays a code-bearing Location. */
export function redirect(status: 302 | 303, location: string, headers?: Record<string, string | string[]>): SentinelResponse {
  // One literal, the caller's headers spread last: measured cheaper through Fastify than assigning them afterwards
  // (bench/RESULTS.md, "Authorize through Fastify and the redirect's headers").
  return {
    status,
    headers: { location, 'cache-control': 'no-store', pragma: 'no-cache', 'x-content-type-options': 'nosniff', ...headers },
  };
}

/** First value of a header, whatever shape the host gave it. */
export function headerValue(request: SentinelRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
