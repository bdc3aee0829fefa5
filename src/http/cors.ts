/**
 * Cross-origin reads (the Fetch standard's CORS protocol) for the endpoints a browser app calls with `fetch`:
 * discovery and the JWKS, which any client reads, and the endpoints a public client (an app with no secret, such as
 * a single-page app) uses — token, revocation, pushed authorization and UserInfo.
 *
 * Every answer of such a route, errors included, allows any origin (`*`) so the app can read why it was refused; the
 * preflight (`OPTIONS`) is answered before the route's own method check. Credentials are never allowed: these
 * endpoints authenticate by what the request carries (a client id, an `Authorization` header, a DPoP proof, a bearer
 * token), never by cookies, so `*` lets a page on another origin do nothing a script outside a browser could not.
 * Introspection and the app-token paths stay same-origin: only confidential clients (servers) may call them.
 */
import type { SentinelResponse } from './messages.js';

/** How one route answers cross-origin requests. */
export interface CorsPolicy {
  /** `Access-Control-Allow-Methods` of the preflight: the route's methods. */
  readonly methods: string;
  /**
   * `Access-Control-Allow-Headers` of the preflight: the non-safelisted request headers the route reads
   * (`Authorization`, `DPoP`, a non-form `Content-Type`); none for routes a browser reads with a plain GET.
   */
  readonly requestHeaders?: string;
  /** `Access-Control-Expose-Headers`: the response headers a browser app needs to read (a challenge, a nonce). */
  readonly exposeHeaders?: string;
}

/** How long a browser may reuse a preflight answer, in seconds: long enough to spare a round trip per call. */
const PREFLIGHT_MAX_AGE = '600';

/** The headers every answer of a route with this policy carries; built once per policy. */
const ANSWER_HEADERS = new WeakMap<CorsPolicy, Readonly<Record<string, string>>>();

function answerHeaders(policy: CorsPolicy): Readonly<Record<string, string>> {
  let headers = ANSWER_HEADERS.get(policy);
  if (headers === undefined) {
    headers = Object.freeze({
      'access-control-allow-origin': '*',
      ...(policy.exposeHeaders === undefined ? {} : { 'access-control-expose-headers': policy.exposeHeaders }),
    });
    ANSWER_HEADERS.set(policy, headers);
  }
  return headers;
}

/**
 * A route's answer with the CORS headers added: a new object, since answers may be shared (the cached JWKS and
 * metadata responses).
 *
 * @example return withCors(renderJSONError(error), TOKEN_CORS);
 */
export function withCors(response: SentinelResponse, policy: CorsPolicy): SentinelResponse {
  // Object.assign, not `{ ...headers, ...cors }`: V8 takes a slow path for the second spread, measured at about ten
  // times the cost (several microseconds per answer) on Node 20.
  return { status: response.status, headers: Object.assign({}, response.headers, answerHeaders(policy)), body: response.body };
}

/**
 * The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`): 204 with what the route allows.
 * No `Access-Control-Allow-Credentials`, ever (see the module comment).
 *
 * @example if (request.method === 'OPTIONS') return corsPreflight(route.cors);
 */
export function corsPreflight(policy: CorsPolicy): SentinelResponse {
  return {
    status: 204,
    headers: {
      ...answerHeaders(policy),
      'access-control-allow-methods': policy.methods,
      ...(policy.requestHeaders === undefined ? {} : { 'access-control-allow-headers': policy.requestHeaders }),
      'access-control-max-age': PREFLIGHT_MAX_AGE,
      'x-content-type-options': 'nosniff',
    },
  };
}

/** Discovery documents and key sets: read with a plain GET by any client (OpenID Connect Discovery §4, RFC 8414 §3). */
export const PUBLIC_DOCUMENT_CORS: CorsPolicy = Object.freeze({ methods: 'GET' });

/**
 * The token endpoint and pushed authorization requests: a public client posts a form, maybe with HTTP Basic
 * `Authorization` (RFC 6749 §2.3.1) and a `DPoP` proof (RFC 9449 §5), and reads `DPoP-Nonce` when the server
 * asks for one (RFC 9449 §8), `WWW-Authenticate` on a refused client, and `Retry-After` on a `429` (a public
 * client's pushes over its address's bound, DPoP proofs the server has no room to remember): no response header
 * but the safelisted few reaches a script unless exposed, and without it the app cannot tell how long to wait.
 */
export const TOKEN_CORS: CorsPolicy = Object.freeze({
  methods: 'POST',
  requestHeaders: 'Authorization, Content-Type, DPoP',
  exposeHeaders: 'WWW-Authenticate, DPoP-Nonce, Retry-After',
});

/**
 * Revocation (RFC 7009): a public client revokes its own tokens on sign-out; no DPoP proof is read there. A revocation
 * whose every write lost to concurrent writers is a `503` with `Retry-After` (RFC 7009 §2.2.1: the client retries
 * after a delay), which a script reads only when exposed, as at the token endpoint.
 */
export const REVOCATION_CORS: CorsPolicy = Object.freeze({
  methods: 'POST',
  requestHeaders: 'Authorization, Content-Type',
  exposeHeaders: 'WWW-Authenticate, Retry-After',
});

/**
 * UserInfo (OpenID Connect Core §5.3): a bearer or DPoP-bound token in the header, or a form body; `Retry-After` of
 * a `429` for a DPoP proof the server has no room to remember, as at the token endpoint.
 */
export const USERINFO_CORS: CorsPolicy = Object.freeze({
  methods: 'GET, POST',
  requestHeaders: 'Authorization, Content-Type, DPoP',
  exposeHeaders: 'WWW-Authenticate, DPoP-Nonce, Retry-After',
});
