/**
 * Koa 2 and 3 adapter: `app.use(toKoa(sentinel))` (or under koa-mount), and `requireAccessToken(sentinel)` for the
 * routes the tokens protect. It translates and nothing else: the core decides every status, header and body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  AccessTokenClaims,
  ProtectedResourceMetadataOptions,
  RequireAccessTokenOptions,
  Sentinel,
  SentinelResponse,
} from '../../src/index.js';
import { expectationsReader } from '../../src/guard/bearer-request.js';
import { fromNodeRequest, nodeHeaders, originForm } from '../node/index.js';

/**
 * The parts of a Koa context the adapter touches (structural, so Koa 2 and 3 both fit). After `requireAccessToken`,
 * `state.sentinel` holds the verified RFC 9068 §2.2 claims.
 *
 * @example
 * router.get('/api/account/:accountId/me', requireAccessToken(sentinel), (ctx: KoaContextLike) => { ctx.body = { sub: ctx.state.sentinel?.sub }; });
 */
export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  url: string;
  path: string;
  originalUrl: string;
  mountPath?: string | undefined;
  /** Where koa-bodyparser and @koa/bodyparser put a parsed body (`request.body`). */
  request: object;
  params?: Record<string, string>;
  state: Record<string, unknown> & { sentinel?: AccessTokenClaims };
  status: number;
  body: unknown;
  /** Sets a response header. */
  set(field: string, value: string | string[]): void;
}

/**
 * A Koa middleware, as `toKoa` (the RFC 6749 §3 endpoints) and `requireAccessToken` (RFC 6750 §2.1) return.
 *
 * @example
 * const idp: KoaMiddleware = toKoa(sentinel);
 * app.use(idp);
 */
export type KoaMiddleware = (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void>;

/**
 * The prefix koa-mount stripped: the original path minus what is left. Works for nested mounts too, where
 * `ctx.mountPath` only holds the innermost prefix.
 */
function mountPathOf(ctx: KoaContextLike): string {
  // ctx.path is the target's path even in absolute form (`GET http://host/idp/… HTTP/1.1`); ctx.originalUrl is not.
  const original = originForm(ctx.originalUrl).split('?')[0] ?? '';
  if (original !== ctx.path && original.endsWith(ctx.path)) {
    // koa-mount('/idp/') strips the slash too ('/idp/sentinel/…' → 'sentinel/…'): that slash is the path's, not the
    // mount's (see relativeURL).
    return original.slice(0, original.length - ctx.path.length).replace(/\/$/, '');
  }
  return ctx.mountPath === undefined || ctx.mountPath === '/' ? '' : ctx.mountPath.replace(/\/$/, '');
}

/**
 * The request target relative to the mount, with its leading slash: koa-mount given a prefix with a trailing slash
 * leaves `sentinel/…` in `ctx.url`, which no route of the service (nor any path) matches.
 */
function relativeURL(ctx: KoaContextLike): string {
  const url = originForm(ctx.url);
  return url.startsWith('/') ? url : `/${url}`;
}

/**
 * Writes a response the core produced, e.g. the redirect of `sentinel.completeLogin()` (external login).
 * @example sendSentinelResponse(ctx, await sentinel.completeLogin(String(ctx.query.interaction), { userId: user.id }))
 * @see RFC 6749 §4.1.2 (the redirect back to the application)
 */
export function sendSentinelResponse(ctx: KoaContextLike, result: SentinelResponse): void {
  for (const [name, value] of Object.entries(result.headers)) {
    // Added to the cookies an earlier middleware set (`ctx.cookies.set`, `ctx.append`), as Fastify does: `ctx.set`
    // would drop them. Through the response Koa itself writes headers to, as `ctx.set` does.
    if (name === 'set-cookie') ctx.res.appendHeader(name, value);
    else ctx.set(name, value);
  }
  // Body before status: Koa turns a null body into 204 unless a status follows, and a null body (rather than
  // an unset one) stops Koa from writing its default "Found"-style text on redirects.
  ctx.body = result.body ?? null;
  ctx.status = result.status;
  // Koa 2 writes a null body with its length header removed and no chunked framing, an answer without an end on a
  // kept-alive connection; Koa 3 says 0 itself. Never on a status that has no content (RFC 9110 §8.6: 1xx, 204, 304).
  const hasContent = result.status >= 200 && result.status !== 204 && result.status !== 304;
  if (result.body === undefined && hasContent) ctx.set('content-length', '0');
}

/**
 * Mounts the service. Paths that are not the service's go to `next()` untouched, stream unread.
 * A host body parser (koa-bodyparser, @koa/bodyparser) may run before or after it.
 * @example app.use(toKoa(sentinel)); // or app.use(mount('/idp', toKoa(sentinel)))
 * @see RFC 6749 §3 (the endpoints it serves)
 */
export function toKoa(sentinel: Pick<Sentinel, 'config' | 'handle'>): KoaMiddleware {
  return async (ctx, next) => {
    const request = fromNodeRequest(ctx.req, {
      url: relativeURL(ctx),
      mountPath: mountPathOf(ctx),
      parsedBody: () => (ctx.request as { body?: unknown }).body,
      limit: sentinel.config.bodyLimit,
    });
    const result = await sentinel.handle(request);
    if (result === null) {
      await next();
      return;
    }
    sendSentinelResponse(ctx, result);
  };
}

/**
 * Guards a route with a Bearer access token (RFC 6750 §2.1) or a DPoP-bound one (RFC 9449): the verified claims land
 * on `ctx.state.sentinel`; a missing, invalid, expired or foreign token gets 401 with `WWW-Authenticate` in the
 * scheme the request used (`Bearer`, RFC 6750 §3, or `DPoP`, RFC 9449 §7.1; both without a token). The
 * `accountId` and `consumerId` route parameters (`ctx.params`, as @koa/router sets them), when present, must
 * match the token.
 * @example router.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireAccessToken(sentinel), handler)
 */
export function requireAccessToken(sentinel: Sentinel, options?: RequireAccessTokenOptions): KoaMiddleware {
  const expectations = expectationsReader(options);
  return async (ctx, next) => {
    const headers = nodeHeaders(ctx.req);
    const result = await sentinel.checkBearer(headers.authorization, expectations(ctx.params), {
      method: ctx.req.method ?? 'GET',
      url: ctx.originalUrl,
      headers,
      secure: (ctx.req.socket as { encrypted?: boolean }).encrypted === true,
      // The socket peer, not ctx.ip: the core decides whether it is a trusted proxy (trustProxy).
      ip: ctx.req.socket.remoteAddress,
    });
    if (!result.ok) {
      sendSentinelResponse(ctx, result.response);
      return;
    }
    ctx.state.sentinel = result.claims;
    await next();
  };
}

/**
 * Serves the protected resource metadata (RFC 9728) of a resource the service's tokens are for (an MCP server):
 * route it at the document's well-known path, which `sentinel.protectedResourceMetadata(options).path` gives.
 * @example router.get(sentinel.protectedResourceMetadata({ resource, accountId }).path, protectedResourceMetadata(sentinel, { resource, accountId }))
 */
export function protectedResourceMetadata(sentinel: Sentinel, options: ProtectedResourceMetadataOptions): KoaMiddleware {
  const metadata = sentinel.protectedResourceMetadata(options);
  return async (ctx) => {
    sendSentinelResponse(ctx, metadata.respond());
  };
}
