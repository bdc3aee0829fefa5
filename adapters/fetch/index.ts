/**
 * WHATWG fetch adapter for Hono, Bun, Deno, Cloudflare-style workers and Next.js route handlers:
 * `toFetch(sentinel)` is `(Request) => Promise<Response | null>`, `null` meaning "not ours, route it yourself".
 * It translates and nothing else: the core decides every status, header and body.
 */
import {
  BodyTooLargeError,
  ClientAbortedError,
  ConfigurationError,
  OAuthError,
  type AccessTokenClaims,
  type ProtectedResourceMetadataOptions,
  type RequireAccessTokenOptions,
  type Sentinel,
  type SentinelResponse,
} from '../../src/index.js';
import { expectationsReader } from '../../src/guard/bearer-request.js';
import { isMountPath } from '../../src/http/mount-path.js';
import { assertKnownKeys, type KeysOf } from '../../src/lib/strict-options.js';

/**
 * Options of {@link toFetch}. `ip` feeds the login throttle, the brute-force protection RFC 6749 §10.10 asks for.
 *
 * @example
 * // Behind Cloudflare, which sets the client address in a header it controls:
 * const idp = toFetch(sentinel, { mountPath: '/idp', ip: (request) => request.headers.get('cf-connecting-ip') ?? undefined });
 */
export interface FetchAdapterOptions {
  /**
   * The prefix the host serves the service under (e.g. '/idp'); stripped from the path before routing. `''` or
   * `/segment`s of URL path characters (docs/guides/mounting.md); anything else is a `ConfigurationError`.
   */
  mountPath?: string;
  /** The client address, which a fetch `Request` does not carry (e.g. Bun's `server.requestIP(request)`). */
  ip?: (request: Request) => string | undefined;
}

/**
 * A fetch handler that answers the service's requests (the RFC 6749 §3 endpoints) and returns `null` for all others.
 *
 * @example
 * const idp: FetchHandler = toFetch(sentinel);
 * const response = (await idp(request)) ?? new Response('Not Found', { status: 404 });
 */
export type FetchHandler = (request: Request) => Promise<Response | null>;

// A misspelled `mountpath` would leave every request unmatched: refused, like any option the service does not know.
const FETCH_OPTION_KEYS = { mountPath: true, ip: true } satisfies KeysOf<FetchAdapterOptions>;

/** Reads a body with a cap, stopping (and cancelling the stream) as soon as it is exceeded. */
async function readCapped(request: Request, limit: number): Promise<Uint8Array | undefined> {
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw new BodyTooLargeError(limit);
  if (request.body === null) return undefined;
  // A fetch Request keeps no parsed copy of what the host read (Hono's parseBody(), a validator), unlike the Node
  // hosts' req.body: the service cannot see the form at all. The host's doing, so a 400 that says so, not a 500.
  if (request.bodyUsed || request.body.locked) {
    throw new OAuthError('invalid_request', 'the request body was already read by the host before the service');
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    // A failing read of the request's own stream is the client going away, not a server failure.
    const { done, value } = await reader.read().catch((error: unknown) => {
      throw new ClientAbortedError({ cause: error });
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * A browser may send its cookies over HTTP/2 as several `Cookie` fields, which reach an application joined with `; `
 * (RFC 9113 §8.2.3). Some runtimes join them as `Headers` joins any field, with `, `: every cookie after the first
 * then reads as part of the value before it, and the service loses its session and its forms' cookies. RFC 6265's
 * cookie-octet excludes both the comma and the space, so a `, ` before a name and its `=` is such a join.
 */
const COMMA_JOINED_COOKIE = /, (?=[^\s;,=]+=)/g;

/**
 * The request's headers as the core takes them. A `Request` built by hand (a test, a worker calling itself) may have
 * no `Host`; its URL's authority is then what the host was asked for.
 */
function headersOf(request: Request, url: URL): Record<string, string> {
  const headers: Record<string, string> = { host: url.host };
  request.headers.forEach((value, name) => {
    headers[name] = name === 'cookie' && value.includes(', ') ? value.replace(COMMA_JOINED_COOKIE, '; ') : value;
  });
  return headers;
}

/**
 * Turns a response the core produced into a fetch `Response`, e.g. the redirect of `sentinel.completeLogin()`
 * (external login). Named like the other adapters' helper; here "send" means "return this".
 * @example return sendSentinelResponse(await sentinel.completeLogin(interactionId, { userId: user.id }));
 * @see RFC 6749 §4.1.2 (the redirect back to the application)
 */
export function sendSentinelResponse(result: SentinelResponse): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(result.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  // Stated, as the Node adapters state it: a runtime answering HEAD drops the body, and with it the only length it
  // knew, where Koa's and Fastify's HEAD carry their GET's Content-Length (RFC 9110 §9.3.2).
  if (result.body !== undefined && !headers.has('content-length')) headers.set('content-length', String(Buffer.byteLength(result.body)));
  return new Response(result.body ?? null, { status: result.status, headers });
}

/** Sentinels already warned about, so that mounting one twice does not repeat the warning. */
const warned = new WeakSet<object>();

/**
 * A fetch `Request` carries no client address, so without `ip` every request looks as if it came from nowhere: the
 * login throttle's per-address limit (RFC 6749 §10.10) counts nothing, and the bounds on what anyone can store
 * (interactions, parked posts, public pushes and device authorizations, registrations) count every client on the one
 * counter of the unknown address, so one client can use up the service's whole share. Said once, at startup, instead
 * of silently.
 */
function warnWithoutAddress(sentinel: Pick<Sentinel, 'config'>, options: FetchAdapterOptions): void {
  if (options.ip !== undefined || sentinel.config.trustProxy === true || warned.has(sentinel)) return;
  warned.add(sentinel);
  const message =
    'sentinel-idp: toFetch() was given no ip option, so login throttling per client address is off (only the ' +
    'per-username limit applies), and the per-address bounds (interactionsPerAddress and the others) are shared by ' +
    'every client: one client can use them up for all. Pass ip: (request) => <client address>, e.g. Bun ' +
    'server.requestIP(request)?.address.';
  const logger = sentinel.config.logger;
  if (logger !== undefined) logger.warn(message);
  else console.warn(message);
}

/**
 * Mounts the service in a fetch runtime.
 * @example
 * const idp = toFetch(sentinel);
 * export default { fetch: async (request: Request) => (await idp(request)) ?? new Response('Not Found', { status: 404 }) };
 * @see RFC 6749 §3 (the endpoints it serves)
 * @throws ConfigurationError for an unknown option or a malformed `mountPath`.
 */
export function toFetch(sentinel: Pick<Sentinel, 'config' | 'handle'>, options: FetchAdapterOptions = {}): FetchHandler {
  assertKnownKeys(options, FETCH_OPTION_KEYS, 'toFetch');
  warnWithoutAddress(sentinel, options);
  const mountPath = (options.mountPath ?? '').replace(/\/$/, '');
  // The core refuses a request under a mount path that breaks its rule (src/http/mount-path.ts); one written in the
  // options would have every request refused (or, unlike a URL's path, never match one): said once, here.
  if (!isMountPath(mountPath)) {
    throw new ConfigurationError('toFetch.mountPath', 'must be "" or a path of "/segment"s, e.g. "/idp" (see docs/guides/mounting.md)');
  }
  return async (request) => {
    const url = new URL(request.url);
    if (mountPath !== '' && !url.pathname.startsWith(`${mountPath}/`)) return null;
    const result = await sentinel.handle({
      method: request.method,
      path: url.pathname.slice(mountPath.length),
      query: url.searchParams,
      // A Request's url is already the URL parser's serialisation: the closest to the query as sent there is.
      rawQuery: url.search.slice(1),
      headers: headersOf(request, url),
      body: () => readCapped(request, sentinel.config.bodyLimit),
      ip: options.ip?.(request),
      secure: url.protocol === 'https:',
      mountPath,
    });
    return result === null ? null : sendSentinelResponse(result);
  };
}

/**
 * What a guard answers: the verified claims, or the 401 `Response` (RFC 6750 §3) to return as is.
 *
 * @example
 * const guard: AccessTokenGuard = requireAccessToken(sentinel);
 * const checked = await guard(request, { accountId, consumerId });
 * if (checked instanceof Response) return checked;
 */
export type AccessTokenGuard = (
  request: Request,
  params?: Record<string, string | undefined>,
) => Promise<{ claims: AccessTokenClaims } | Response>;

/**
 * Options of the fetch {@link requireAccessToken}: those of every adapter's guard, and `ip` as {@link toFetch} takes
 * it, since a fetch `Request` carries no peer address.
 *
 * @example
 * const guard = requireAccessToken(sentinel, { ip: (request) => server.requestIP(request)?.address });
 */
export interface FetchGuardOptions extends RequireAccessTokenOptions {
  /**
   * The address the request came from: `X-Forwarded-Proto` / `X-Forwarded-Host` (which a DPoP proof's `htu` is
   * checked against, RFC 9449 §4.3) are believed only when it is a proxy `trustProxy` names, or `trustProxy` is `true`.
   */
  ip?: ((request: Request) => string | undefined) | undefined;
}

/**
 * Checks a Bearer access token (RFC 6750 §2.1) or a DPoP-bound one (RFC 9449). A fetch runtime has no middleware
 * chain, so the guard answers either `{ claims }` or the ready 401 `Response` (with `WWW-Authenticate` in the scheme
 * the request used: `Bearer`, RFC 6750 §3, or `DPoP`, RFC 9449 §7.1; both without a token). `params` are the
 * route's parameters: `accountId` and `consumerId`, when present, must match the token.
 * @example
 * const guard = requireAccessToken(sentinel);
 * const checked = await guard(request, { accountId, consumerId });
 * if (checked instanceof Response) return checked;
 * return Response.json(await brandTokens(checked.claims));
 */
export function requireAccessToken(sentinel: Sentinel, options: FetchGuardOptions = {}): AccessTokenGuard {
  const { ip, ...guardOptions } = options;
  const expectations = expectationsReader(guardOptions);
  return async (request, params) => {
    const authorization = request.headers.get('authorization') ?? undefined;
    const url = new URL(request.url);
    // The path and all headers, as the other adapters pass them: the core rebuilds the public URL a DPoP proof
    // names (RFC 9449 §4.3) from Host, or from a trusted proxy's X-Forwarded-* (the runtime's URL knows no proxy).
    const result = await sentinel.checkBearer(authorization, expectations(params), {
      method: request.method,
      url: `${url.pathname}${url.search}`,
      headers: headersOf(request, url),
      secure: url.protocol === 'https:',
      ip: ip?.(request),
    });
    return result.ok ? { claims: result.claims } : sendSentinelResponse(result.response);
  };
}

/**
 * Serves the protected resource metadata (RFC 9728) of a resource the service's tokens are for (an MCP server):
 * answer it for the document's well-known path, which `sentinel.protectedResourceMetadata(options).path` gives.
 * @example
 * const metadata = protectedResourceMetadata(sentinel, { resource, accountId });
 * if (new URL(request.url).pathname === sentinel.protectedResourceMetadata({ resource, accountId }).path) return metadata(request);
 */
export function protectedResourceMetadata(sentinel: Sentinel, options: ProtectedResourceMetadataOptions): (request: Request) => Response {
  const metadata = sentinel.protectedResourceMetadata(options);
  return () => sendSentinelResponse(metadata.respond());
}
