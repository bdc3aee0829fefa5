/**
 * A tiny round-robin reverse proxy (node:http only), standing in for the load balancer of a real deployment
 * (nginx, HAProxy, a cloud load balancer). Each request goes to the next instance in turn, with the standard
 * forwarding headers, so that the instances (`trustProxy: true`) see the browser's address and not the proxy's
 * (RFC 7239 describes the standardized `Forwarded` header; the `X-Forwarded-*` trio is what most proxies send).
 * No sticky sessions: every instance must be able to serve every request, which is the point of the shared store.
 */
import {
  request as httpRequest,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';

/** Options of {@link createRoundRobinProxy}. */
export interface RoundRobinProxyOptions {
  /** Base URLs of the instances, e.g. `['http://127.0.0.1:4001', 'http://127.0.0.1:4002']`. */
  upstreams: readonly string[];
  /** How long an instance may take to answer before the proxy answers 504. Default 30 000 ms. */
  timeoutMs?: number;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) are for one connection only and must not be forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
]);

function forwardedHeaders(request: IncomingMessage): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!HOP_BY_HOP.has(name)) headers[name] = value;
  }
  // This proxy is the edge: whatever X-Forwarded-For a client sends is its own claim, and the instances believe the
  // first entry (trustProxy). Replacing it, rather than appending to it, keeps a client from choosing the address
  // its failed logins are throttled under.
  headers['x-forwarded-for'] = request.socket.remoteAddress ?? '';
  headers['x-forwarded-proto'] = 'http';
  if (request.headers.host !== undefined) headers['x-forwarded-host'] = request.headers.host;
  return headers;
}

function fail(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { 'content-type': 'text/plain;charset=UTF-8', 'cache-control': 'no-store' });
  response.end(message);
}

/**
 * Creates the proxy server; call `listen()` on it.
 * @example
 * const proxy = createRoundRobinProxy({ upstreams: ['http://127.0.0.1:4001', 'http://127.0.0.1:4002'] });
 * proxy.listen(4000, '127.0.0.1');
 */
export function createRoundRobinProxy(options: RoundRobinProxyOptions): Server {
  if (options.upstreams.length === 0) throw new TypeError('createRoundRobinProxy: at least one upstream is required');
  const upstreams = options.upstreams.map((url) => new URL(url));
  const timeoutMs = options.timeoutMs ?? 30_000;
  let next = 0;

  return createServer((request, response) => {
    const target = upstreams[next] as URL;
    next = (next + 1) % upstreams.length;
    const outgoing = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: forwardedHeaders(request),
        timeout: timeoutMs,
      },
      (upstream) => {
        const headers: IncomingHttpHeaders = {};
        for (const [name, value] of Object.entries(upstream.headers)) {
          if (!HOP_BY_HOP.has(name)) headers[name] = value;
        }
        response.writeHead(upstream.statusCode ?? 502, headers);
        upstream.pipe(response);
      },
    );
    outgoing.on('timeout', () => {
      outgoing.destroy();
      fail(response, 504, 'the instance did not answer in time');
    });
    // The instance is down or went away mid-answer. Its address stays out of the message.
    outgoing.on('error', () => fail(response, 502, 'the instance is unreachable'));
    request.pipe(outgoing);
  });
}
