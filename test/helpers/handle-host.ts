/**
 * The host the endpoint-logic suites run on: a bare node:http server that hands every request to
 * `sentinel.handle()` and writes back exactly what it answers, with no framework and no adapter in between. What
 * a suite checks through it is the core's behaviour; what each framework adds or could lose on the way (body
 * parsers, mounting, cookies, redirects, headers, errors, guards) is checked on every host by
 * `test/adapters.test.ts` and `test/adapter-flows.test.ts`.
 *
 * It offers the same host routes as the framework hosts in `hosts.ts` (`GET /host/ping`, `POST /host/echo`
 * and the token-retrieval API behind `sentinel.checkBearer`), so a suite cannot tell it from them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Sentinel, SentinelBody, SentinelRequest, SentinelResponse } from '../../src/index.js';
import { type Host, listenNode, type MountOptions } from './host.js';

const BRAND_TOKENS = /^\/api\/account\/([^/]+)\/consumer\/([^/]+)\/brand\/tokens$/;

async function readBody(incoming: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A urlencoded or JSON body parsed the way a host parser (express.urlencoded, koa-bodyparser) would. */
function parsedBody(contentType: string | undefined, raw: Buffer): SentinelBody | undefined {
  const text = raw.toString('utf8');
  if (contentType?.startsWith('application/json') === true) return JSON.parse(text === '' ? '{}' : text) as Record<string, unknown>;
  if (contentType?.startsWith('application/x-www-form-urlencoded') !== true) return raw;
  const form: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = form[name];
    form[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return form;
}

function write(outgoing: ServerResponse, response: SentinelResponse): void {
  outgoing.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) outgoing.setHeader(name, value);
  outgoing.end(response.body);
}

async function serve(sentinel: Sentinel, options: MountOptions, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const target = new URL(incoming.url ?? '/', 'http://127.0.0.1');
  const method = incoming.method ?? 'GET';
  if (method === 'GET' && target.pathname === '/host/ping') {
    outgoing.setHeader('content-type', 'text/plain');
    outgoing.end('pong');
    return;
  }
  const prefix = options.prefix ?? '';
  const mounted = prefix === '' || target.pathname === prefix || target.pathname.startsWith(`${prefix}/`);
  // 'before' stands for a host parser that consumed the stream before the service saw it.
  const early =
    options.bodyParser === 'before' && method !== 'GET' && method !== 'HEAD'
      ? parsedBody(incoming.headers['content-type'], await readBody(incoming))
      : undefined;
  if (mounted) {
    const request: SentinelRequest = {
      method,
      path: target.pathname.slice(prefix.length) || '/',
      query: target.searchParams,
      headers: incoming.headers,
      body: early ?? (async () => readBody(incoming)),
      ip: incoming.socket.remoteAddress,
      secure: false,
      mountPath: prefix,
    };
    const response = await sentinel.handle(request);
    if (response !== null) return write(outgoing, response);
  }
  if (method === 'POST' && target.pathname === '/host/echo') {
    const form = parsedBody('application/x-www-form-urlencoded', await readBody(incoming));
    outgoing.setHeader('content-type', 'application/json');
    outgoing.end(JSON.stringify(form));
    return;
  }
  const found = BRAND_TOKENS.exec(target.pathname);
  if (method === 'GET' && found !== null) {
    const expectations = { accountId: decodeURIComponent(found[1] ?? ''), consumerId: decodeURIComponent(found[2] ?? '') };
    const header = incoming.headers.authorization;
    const result = await sentinel.checkBearer(header, expectations, {
      method,
      url: incoming.url ?? '/',
      headers: incoming.headers,
      secure: false,
    });
    if (!result.ok) return write(outgoing, result.response);
    outgoing.setHeader('content-type', 'application/json');
    outgoing.end(JSON.stringify({ claims: result.claims }));
    return;
  }
  outgoing.statusCode = 404;
  outgoing.setHeader('content-type', 'text/plain');
  outgoing.end('Not Found');
}

/** `sentinel.handle()` over node:http, with the host routes every suite expects. */
export const HANDLE_HOST: Host = {
  name: 'handle',
  async mount(sentinel, options = {}) {
    return listenNode(options, (incoming, outgoing) => serve(sentinel, options, incoming, outgoing));
  },
};
