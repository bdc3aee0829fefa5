/**
 * Fastify 5 adapter: `app.register(toFastify(sentinel), { prefix })`, an encapsulated plugin, and
 * `requireAccessToken(sentinel)` as a `preHandler` for the routes the tokens protect. It translates and nothing
 * else: the core decides every status, header and body.
 */
import type { Readable } from 'node:stream';
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  preHandlerAsyncHookHandler,
  RouteHandlerMethod,
} from 'fastify';
import type {
  AccessTokenClaims,
  ProtectedResourceMetadataOptions,
  RequireAccessTokenOptions,
  Sentinel,
  SentinelResponse,
} from '../../src/index.js';
import { expectationsReader } from '../../src/guard/bearer-request.js';
import { nodeHeaders, originForm, readNodeBody, splitURL } from '../node/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Claims of the verified access token, set by `requireAccessToken`. */
    sentinel?: AccessTokenClaims | null;
  }
}

/**
 * Writes a response the core produced, e.g. the redirect of `sentinel.completeLogin()` (external login).
 * @example return sendSentinelResponse(reply, await sentinel.completeLogin(request.query.interaction, { userId: user.id }))
 * @see RFC 6749 §4.1.2 (the redirect back to the application)
 */
export function sendSentinelResponse(reply: FastifyReply, result: SentinelResponse): FastifyReply {
  reply.code(result.status);
  for (const [name, value] of Object.entries(result.headers)) reply.header(name, value);
  return reply.send(result.body);
}

/** The first `depth` segments of a request target's path (`'/t1'` of `'/t1/sentinel/…'` for one). */
function leadingSegments(url: string, depth: number): string {
  let end = 0;
  for (let seen = 0; seen < depth; seen += 1) {
    const next = url.indexOf('/', end + 1);
    const query = url.indexOf('?', end + 1);
    if (next === -1 || (query !== -1 && query < next)) return url.slice(0, query === -1 ? url.length : query);
    end = next;
  }
  return url.slice(0, end);
}

/** Leaves the payload stream unread: the core reads it only on its own routes, with its own size limit. */
function passStream(_request: FastifyRequest, payload: Readable, done: (error: Error | null, body?: unknown) => void): void {
  done(null, payload);
}

/**
 * The service as an encapsulated Fastify plugin (deliberately not wrapped in fastify-plugin: its body parsers,
 * decorators and routes stay inside its scope, so a host's `@fastify/formbody` or JSON parser is untouched and
 * never sees the service's bodies). Paths under the service's base path that are not its own fall through to
 * the host's not-found handler. A request whose Content-Type Fastify cannot parse gets the service's OAuth answer,
 * not the host's error handler; a path that does not percent-decode is refused by Fastify's router
 * (`FST_ERR_BAD_URL`) before any plugin is asked, which only the host's `frameworkErrors` option can change.
 * @example await app.register(toFastify(sentinel), { prefix: '/idp' });
 * @see RFC 6749 §3 (the endpoints it serves)
 */
export function toFastify(sentinel: Pick<Sentinel, 'config' | 'handle'>): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    // A prefix registered with a trailing slash ('/idp/') keeps it in `app.prefix`; the slash begins the service's
    // path ('/sentinel/…'), and the mount path is the one every other adapter hands over ('/idp').
    const mountPath = app.prefix.replace(/\/$/, '');
    // A prefix with route parameters (`'/:tenant'`) is no fixed text: the mount is as many leading segments of the
    // request's own URL as the prefix has, which the core then checks like any other mount path.
    const depth = mountPath === '' ? 0 : mountPath.split('/').length - 1;
    const mountOf = mountPath.includes(':') ? (url: string) => leadingSegments(url, depth) : () => mountPath;
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/x-www-form-urlencoded', passStream);
    app.addContentTypeParser('*', passStream);
    if (!app.hasRequestDecorator('sentinel')) app.decorateRequest('sentinel', null);
    app.setErrorHandler(answeringParserErrors);
    const answer: Answer = (request, withBody) => {
      // Fastify routes an absolute-form target (RFC 9112 §3.2.2) by its path, but keeps it whole in request.url.
      const target = originForm(request.url);
      const requestMount = mountOf(target);
      const { path, query, rawQuery } = splitURL(target.slice(requestMount.length));
      const payload = withBody ? (request.body as Readable | undefined) : undefined;
      return sentinel.handle({
        method: request.method,
        path,
        query,
        rawQuery,
        headers: nodeHeaders(request.raw, request.headers),
        body: payload === undefined ? undefined : () => readNodeBody(payload, sentinel.config.bodyLimit),
        ip: request.socket.remoteAddress,
        secure: (request.socket as { encrypted?: boolean }).encrypted === true,
        mountPath: requestMount,
      });
    };
    routeAnswers(app, `${sentinel.config.basePath}/*`, [answer]);
    // Fastify refuses a route declared twice, and a second handler mounted beside the service (the operator
    // console) shares the well-known prefix: one route asks each handler in the order they were mounted.
    const url = `${mountPath}/.well-known/*`;
    const byURL = wellKnownAnswers.get(app.server) ?? new Map<string, Answer[]>();
    wellKnownAnswers.set(app.server, byURL);
    const shared = byURL.get(url);
    if (shared !== undefined) shared.push(answer);
    else {
      const answers = [answer];
      byURL.set(url, answers);
      routeAnswers(app, '/.well-known/*', answers);
    }
  };
}

/**
 * One mounted handler's answer to a request; `null` when the path is not its own. `withBody: false` hands the core no
 * body, for a request whose body Fastify refused before the handler ran.
 */
type Answer = (request: FastifyRequest, withBody: boolean) => Promise<SentinelResponse | null>;

/** Fastify's codes for a request it refuses before the route's handler runs, over its body or Content-Type. */
const REFUSED_BEFORE_HANDLER = /^FST_ERR_(CTP_|ROUTE_MISSING_CONTENT_TYPE$)/;

/** The route config key under which a route keeps the answers its handler asks, for the plugin's error handler. */
const ANSWERS = 'sentinelAnswers';

/**
 * The plugin's own error handler, for its routes only (the plugin is encapsulated, so the host's handler is untouched).
 * Fastify refuses some requests before the handler runs: a Content-Type it cannot parse (`;;`) throws
 * `FST_ERR_CTP_INVALID_MEDIA_TYPE`, and a QUERY request without one `FST_ERR_ROUTE_MISSING_CONTENT_TYPE`; either
 * would reach the host's error handler (a 415, a 400 in Fastify's shape, or whatever the host answers) where the other
 * adapters hand the core the request and it answers with its OAuth error. So the core answers such a
 * request here, without a body: a body it needs is then missing and it says so (`400 invalid_request`). Every other
 * error is rethrown to the host's handler, as before.
 */
async function answeringParserErrors(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const code = (error as { code?: unknown } | null)?.code;
  const answers = (request.routeOptions.config as { [ANSWERS]?: readonly Answer[] } | undefined)?.[ANSWERS];
  if (typeof code !== 'string' || !REFUSED_BEFORE_HANDLER.test(code) || answers === undefined) throw error;
  for (const answer of answers) {
    const result = await answer(request, false);
    if (result !== null) return sendSentinelResponse(reply, result);
  }
  throw error;
}

/** The handlers sharing a well-known route, by server and the route's full URL. */
const wellKnownAnswers = new WeakMap<object, Map<string, Answer[]>>();

/**
 * Routes every method the server knows of `url` to `answers`, which the plugin's error handler also finds in the
 * route's config. Every method, not a list of the usual ones: the core answers a method a path does not serve (TRACE,
 * QUERY, one the host added with `addHttpMethod`) with its `405` and `Allow`, as it does behind Express and Koa, where
 * Fastify would otherwise answer the host's 404.
 */
function routeAnswers(app: FastifyInstance, url: string, answers: readonly Answer[]): void {
  app.route({ method: app.supportedMethods, url, exposeHeadRoute: false, config: { [ANSWERS]: answers }, handler: answering(answers) });
}

/** A route handler that writes the first answer of `answers`, or falls through to the host's not-found handler. */
function answering(answers: readonly Answer[]): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (request, reply) => {
    for (const answer of answers) {
      const result = await answer(request, true);
      if (result !== null) return sendSentinelResponse(reply, result);
    }
    reply.callNotFound();
    return reply;
  };
}

/**
 * A `preHandler` that guards a route with a Bearer access token (RFC 6750 §2.1) or a DPoP-bound one (RFC 9449): the
 * verified claims land on `request.sentinel`; a missing, invalid, expired or foreign token gets 401 with
 * `WWW-Authenticate` in the scheme the request used (`Bearer`, RFC 6750 §3, or `DPoP`, RFC 9449 §7.1; both without a
 * token). The `accountId` and `consumerId` route parameters, when present, must match the token.
 * @example app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', { preHandler: requireAccessToken(sentinel) }, handler)
 */
export function requireAccessToken(sentinel: Sentinel, options?: RequireAccessTokenOptions): preHandlerAsyncHookHandler {
  const expectations = expectationsReader(options);
  return async function guard(request, reply) {
    const expected = expectations(request.params as Record<string, unknown> | undefined);
    const headers = nodeHeaders(request.raw, request.headers);
    const result = await sentinel.checkBearer(headers.authorization, expected, {
      method: request.method,
      // The target the client sent, as Express's req.originalUrl and Koa's ctx.originalUrl: a host's `rewriteUrl`
      // changes request.url, and a DPoP proof names the URL the client called (RFC 9449 §4.3), not the rewrite.
      url: request.originalUrl,
      headers,
      secure: (request.socket as { encrypted?: boolean }).encrypted === true,
      // The socket peer, not request.ip: the core decides whether it is a trusted proxy (trustProxy).
      ip: request.socket.remoteAddress,
    });
    if (!result.ok) return sendSentinelResponse(reply, result.response);
    request.sentinel = result.claims;
  };
}

/**
 * A route handler serving the protected resource metadata (RFC 9728) of a resource the service's tokens are for (an
 * MCP server), for the document's well-known path, which `sentinel.protectedResourceMetadata(options).path` gives.
 * @example app.get(sentinel.protectedResourceMetadata({ resource, accountId }).path, protectedResourceMetadata(sentinel, { resource, accountId }))
 */
export function protectedResourceMetadata(sentinel: Sentinel, options: ProtectedResourceMetadataOptions): RouteHandlerMethod {
  const metadata = sentinel.protectedResourceMetadata(options);
  return async (_request, reply) => sendSentinelResponse(reply, metadata.respond());
}
