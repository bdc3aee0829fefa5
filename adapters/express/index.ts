/**
 * Express 4 and 5 adapter: `app.use(toExpress(sentinel))`, and `requireAccessToken(sentinel)` for the routes the
 * tokens protect. It translates and nothing else. Express 4 does not forward rejected promises, so every promise
 * ends in `next(error)`.
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
import { fromNodeRequest, nodeHeaders, writeNodeResponse } from '../node/index.js';

declare global {
  // Express types its request from this global namespace (as passport's `req.user`), so a route after
  // requireAccessToken reads `req.sentinel` with no cast; the adapter itself imports no Express types.
  namespace Express {
    interface Request {
      /** Claims of the verified access token, set by `requireAccessToken`. */
      sentinel?: AccessTokenClaims;
    }
  }
}

/**
 * Writes a response the core produced, e.g. the 303 of `sentinel.completeLogin()` (external login; RFC 9700 §4.12).
 * @example sendSentinelResponse(res, await sentinel.completeLogin(String(req.query.interaction), { userId: user.id }))
 */
export function sendSentinelResponse(response: ServerResponse, result: SentinelResponse): void {
  writeNodeResponse(response, result);
}

/**
 * The parts of an Express request the adapter reads (structural, so Express 4 and 5 both fit). After
 * `requireAccessToken`, `sentinel` holds the verified RFC 9068 §2.2 claims.
 *
 * @example
 * app.get('/api/account/:accountId/me', requireAccessToken(sentinel), (req, res) => res.json({ sub: req.sentinel?.sub }));
 */
export interface ExpressRequestLike extends IncomingMessage {
  url: string;
  originalUrl?: string;
  baseUrl?: string;
  body?: unknown;
  params?: Record<string, string>;
  sentinel?: AccessTokenClaims;
}

/**
 * An Express middleware, as `toExpress` (the RFC 6749 §3 endpoints) and `requireAccessToken` (RFC 6750 §2.1) return.
 *
 * @example
 * const idp: ExpressMiddleware = toExpress(sentinel);
 * app.use(idp);
 */
export type ExpressMiddleware = (request: ExpressRequestLike, response: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Mounts the service (the RFC 6749 §3 endpoints and platform-operations.md §4.1 app token). Paths that are not the
 * service's go to `next()` untouched. The operator console (`sentinel-idp/console`) mounts the same way.
 * @example app.use(toExpress(sentinel)); // or app.use('/idp', toExpress(sentinel))
 */
export function toExpress(sentinel: Pick<Sentinel, 'config' | 'handle'>): ExpressMiddleware {
  return (request, response, next) => {
    const sentinelRequest = fromNodeRequest(request, {
      url: request.url,
      mountPath: request.baseUrl,
      parsedBody: () => request.body,
      limit: sentinel.config.bodyLimit,
    });
    sentinel
      .handle(sentinelRequest)
      .then((result) => (result === null ? next() : writeNodeResponse(response, result)))
      .catch(next);
  };
}

/**
 * Guards a route with a Bearer access token (RFC 6750) or a DPoP-bound one (RFC 9449): the verified claims land on
 * `req.sentinel`; a missing, invalid, expired, or foreign token gets 401 with `WWW-Authenticate` in the scheme the
 * request used (`Bearer`, or `DPoP` with its `algs`; both without a token). The `:accountId` and `:consumerId`
 * route parameters, when present, must match the token.
 * @example app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireAccessToken(sentinel), handler)
 */
export function requireAccessToken(sentinel: Sentinel, options?: RequireAccessTokenOptions): ExpressMiddleware {
  const expectations = expectationsReader(options);
  return (request, response, next) => {
    const headers = nodeHeaders(request);
    sentinel
      .checkBearer(headers.authorization, expectations(request.params), {
        method: request.method ?? 'GET',
        url: request.originalUrl ?? request.url,
        headers,
        secure: (request.socket as { encrypted?: boolean }).encrypted === true,
        // The socket peer, not Express's req.ip: the core decides whether it is a trusted proxy (trustProxy).
        ip: request.socket.remoteAddress,
      })
      .then((result) => {
        if (!result.ok) return writeNodeResponse(response, result.response);
        request.sentinel = result.claims;
        next();
      })
      .catch(next);
  };
}

/**
 * Serves the protected resource metadata (RFC 9728) of a resource the service's tokens are for (an MCP server):
 * mount it at the document's well-known path, which `sentinel.protectedResourceMetadata(options).path` gives.
 * @example
 * const resource = 'https://mcp.example.com/mcp';
 * app.get(sentinel.protectedResourceMetadata({ resource, accountId }).path, protectedResourceMetadata(sentinel, { resource, accountId }));
 */
export function protectedResourceMetadata(sentinel: Sentinel, options: ProtectedResourceMetadataOptions): ExpressMiddleware {
  const metadata = sentinel.protectedResourceMetadata(options);
  return (_request, response) => writeNodeResponse(response, metadata.respond());
}
