/**
 * The hosts every black-box suite runs against. A host mounts a sentinel in one framework and listens on an
 * ephemeral 127.0.0.1 port; suites talk to it over real HTTP (supertest against `server`).
 *
 * Each host also mounts, next to the service, a host route (`GET /host/ping` → 200 "pong") and the token-retrieval
 * API (`GET /api/account/:accountId/consumer/:consumerId/brand/tokens` guarded by `requireAccessToken`, answering
 * the verified claims as JSON), so suites can check that both keep working. A second guarded route,
 * `GET /api/account/:accountId/export`, asks for more of the sign-in ({@link STEP_UP_GUARD}: RFC 9470 step-up). A
 * third, `GET /mcp`, is an MCP server as the MCP guide mounts it: `requireAccessToken` with its `resource`
 * ({@link MCP_RESOURCE}), and its protected resource metadata (RFC 9728) naming {@link ACCOUNT}'s issuer at
 * {@link MCP_METADATA_PATH}, served by the adapter's `protectedResourceMetadata`; `GET /mcp/admin` is the same
 * resource's route that also requires {@link MCP_ADMIN_SCOPES} (RFC 6750 §3.1 `insufficient_scope`). Each also has `POST /host/echo`, placed
 * after the service and parsing its own urlencoded body, which answers the parsed form as JSON: the service must
 * leave the bodies of host routes unread.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import express5 from 'express';
// @ts-expect-error express4 is an npm alias of express@4 without its own type declarations
import express4Untyped from 'express4';
import { Readable } from 'node:stream';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import Koa from 'koa';
// @ts-expect-error koa2 is an npm alias of koa@2 without its own type declarations
import koa2Untyped from 'koa2';
import koaMount from 'koa-mount';
import { type Host, listen, listenNode } from './host.js';
import { protectedResourceMetadata, requireAccessToken, toExpress } from '../../adapters/express/index.js';
import {
  protectedResourceMetadata as fastifyResourceMetadata,
  requireAccessToken as requireFastifyAccessToken,
  toFastify,
} from '../../adapters/fastify/index.js';
import {
  protectedResourceMetadata as fetchResourceMetadata,
  requireAccessToken as requireFetchAccessToken,
  toFetch,
} from '../../adapters/fetch/index.js';
import {
  protectedResourceMetadata as koaResourceMetadata,
  requireAccessToken as requireKoaAccessToken,
  toKoa,
} from '../../adapters/koa/index.js';
import { ACCOUNT } from './fixtures.js';
import type { Sentinel } from '../../src/index.js';

// The suites and many files import these from here, next to HOSTS.
export type { Host, MountedHost, MountOptions } from './host.js';
export { listen };

/** What the step-up route asks of a token: an mfa sign-in within the last ten minutes (RFC 9470). */
export const STEP_UP_GUARD = { acrValues: 'urn:sentinel:acr:mfa', maxAge: 600 } as const;
/** The step-up route's path on an account. */
export function stepUpPath(accountId: string): string {
  return `/api/account/${encodeURIComponent(accountId)}/export`;
}
const STEP_UP = /^\/api\/account\/([^/]+)\/export$/;

/** The MCP server every host guards at {@link MCP_PATH} (RFC 8707 resource). */
export const MCP_RESOURCE = 'https://mcp.example.com/mcp';
export const MCP_PATH = '/mcp';
/** A route of the MCP server that also requires {@link MCP_ADMIN_SCOPES} (`requireAccessToken`'s `scopes`). */
export const MCP_ADMIN_PATH = '/mcp/admin';
export const MCP_ADMIN_SCOPES = ['mcp:admin'] as const;
const MCP_ADMIN_GUARD = { resource: MCP_RESOURCE, scopes: MCP_ADMIN_SCOPES };
/** Where each host serves the MCP server's metadata (RFC 9728 §3.1). */
export const MCP_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The metadata's options, as the MCP guide writes them: it names {@link ACCOUNT} only. */
const MCP_METADATA = { resource: MCP_RESOURCE, accountId: ACCOUNT };

/** Whether what is mounted is the service (the console tests mount a console in its place, which has no metadata). */
function servesMcp(sentinel: Sentinel): boolean {
  return typeof (sentinel as Partial<Sentinel>).protectedResourceMetadata === 'function';
}

const express4 = express4Untyped as typeof express5;
const Koa2 = koa2Untyped as typeof Koa;

function expressHost(name: string, factory: typeof express5): Host {
  return {
    name,
    async mount(sentinel, options = {}) {
      const app = factory();
      const parser = options.bodyParser ?? 'none';
      const { hostCookie } = options;
      if (hostCookie !== undefined) {
        app.use((_request, response, next) => {
          response.append('Set-Cookie', hostCookie);
          next();
        });
      }
      if (parser === 'before') app.use(factory.urlencoded({ extended: true }), factory.json());
      app.get('/host/ping', (_request, response) => {
        response.type('text/plain').send('pong');
      });
      for (const handler of [sentinel, ...(options.beside === undefined ? [] : [options.beside])]) {
        if (options.prefix === undefined) app.use(toExpress(handler));
        else app.use(options.prefix, toExpress(handler));
      }
      if (parser === 'after') app.use(factory.urlencoded({ extended: false }));
      app.post('/host/echo', factory.urlencoded({ extended: false }), (request, response) => {
        response.json(request.body);
      });
      app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireAccessToken(sentinel), (request, response) => {
        response.json({ claims: (request as unknown as { sentinel: unknown }).sentinel });
      });
      app.get('/api/account/:accountId/export', requireAccessToken(sentinel, STEP_UP_GUARD), (request, response) => {
        response.json({ claims: (request as unknown as { sentinel: unknown }).sentinel });
      });
      if (servesMcp(sentinel)) {
        app.get(MCP_METADATA_PATH, protectedResourceMetadata(sentinel, MCP_METADATA));
        app.get(MCP_PATH, requireAccessToken(sentinel, { resource: MCP_RESOURCE }), (request, response) => {
          response.json({ claims: (request as unknown as { sentinel: unknown }).sentinel });
        });
        app.get(MCP_ADMIN_PATH, requireAccessToken(sentinel, MCP_ADMIN_GUARD), (request, response) => {
          response.json({ claims: (request as unknown as { sentinel: unknown }).sentinel });
        });
      }
      app.use((error: unknown, _request: unknown, response: express5.Response, _next: unknown) => {
        options.onHostError?.(error);
        response.status(500).type('text/plain').send('host error handler');
      });
      return listen(createServer(app));
    },
  };
}

/** The token-retrieval API's path, for hosts without a router. */
const BRAND_TOKENS = /^\/api\/account\/([^/]+)\/consumer\/([^/]+)\/brand\/tokens$/;

/** Form fields as qs-style parsers hand them over: a repeated name becomes an array. */
function formToObject(text: string): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = result[name];
    result[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return result;
}

/** A minimal koa-bodyparser: consumes urlencoded and JSON bodies into ctx.request.body. */
async function koaBodyParser(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const type = ctx.is('application/x-www-form-urlencoded', 'application/json');
  const request = ctx.request as { body?: unknown };
  if (typeof type === 'string' && request.body === undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      request.body = type === 'application/json' ? JSON.parse(text === '' ? '{}' : text) : formToObject(text);
    } catch {
      ctx.throw(400, 'malformed JSON');
    }
  }
  await next();
}

function koaHost(name: string, Factory: typeof Koa): Host {
  return {
    name,
    async mount(sentinel, options = {}) {
      const app = new Factory();
      const parser = options.bodyParser ?? 'none';
      const guard = requireKoaAccessToken(sentinel);
      const stepUpGuard = requireKoaAccessToken(sentinel, STEP_UP_GUARD);
      const mcp = servesMcp(sentinel)
        ? {
            metadata: koaResourceMetadata(sentinel, MCP_METADATA),
            guard: requireKoaAccessToken(sentinel, { resource: MCP_RESOURCE }),
            admin: requireKoaAccessToken(sentinel, MCP_ADMIN_GUARD),
          }
        : undefined;
      app.on('error', () => {});
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          options.onHostError?.(error);
          ctx.status = 500;
          ctx.type = 'text/plain';
          ctx.body = 'host error handler';
        }
      });
      const { hostCookie } = options;
      if (hostCookie !== undefined) {
        app.use(async (ctx, next) => {
          ctx.append('Set-Cookie', hostCookie);
          await next();
        });
      }
      if (parser === 'before') app.use(koaBodyParser);
      app.use(async (ctx, next) => {
        if (ctx.method !== 'GET' || ctx.path !== '/host/ping') return next();
        ctx.type = 'text/plain';
        ctx.body = 'pong';
      });
      for (const handler of [sentinel, ...(options.beside === undefined ? [] : [options.beside])]) {
        const service = toKoa(handler);
        app.use(options.prefix === undefined ? service : koaMount(options.prefix, service));
      }
      if (parser === 'after') app.use(koaBodyParser);
      app.use(async (ctx, next) => {
        if (ctx.method !== 'POST' || ctx.path !== '/host/echo') return next();
        await koaBodyParser(ctx, async () => {
          ctx.body = (ctx.request as { body?: unknown }).body;
        });
      });
      app.use(async (ctx, next) => {
        const found = BRAND_TOKENS.exec(ctx.path);
        if (ctx.method !== 'GET' || found === null) return next();
        ctx.params = { accountId: decodeURIComponent(found[1] ?? ''), consumerId: decodeURIComponent(found[2] ?? '') };
        await guard(ctx, async () => {
          ctx.body = { claims: ctx.state.sentinel };
        });
      });
      app.use(async (ctx, next) => {
        const found = STEP_UP.exec(ctx.path);
        if (ctx.method !== 'GET' || found === null) return next();
        ctx.params = { accountId: decodeURIComponent(found[1] ?? '') };
        await stepUpGuard(ctx, async () => {
          ctx.body = { claims: ctx.state.sentinel };
        });
      });
      app.use(async (ctx, next) => {
        if (mcp === undefined || ctx.method !== 'GET') return next();
        if (ctx.path === MCP_METADATA_PATH) return mcp.metadata(ctx, next);
        if (ctx.path !== MCP_PATH && ctx.path !== MCP_ADMIN_PATH) return next();
        await (ctx.path === MCP_PATH ? mcp.guard : mcp.admin)(ctx, async () => {
          ctx.body = { claims: ctx.state.sentinel };
        });
      });
      return listen(createServer(app.callback()));
    },
  };
}

function fastifyHost(): Host {
  return {
    name: 'fastify',
    async mount(sentinel, options = {}) {
      const app = Fastify();
      const parser = options.bodyParser ?? 'none';
      app.setErrorHandler((error, _request, reply) => {
        options.onHostError?.(error);
        return reply.code(500).type('text/plain').send('host error handler');
      });
      const { hostCookie } = options;
      if (hostCookie !== undefined) {
        app.addHook('onRequest', async (_request, reply) => {
          reply.header('set-cookie', hostCookie);
        });
      }
      if (parser === 'before') await app.register(formbody);
      app.get('/host/ping', async (_request, reply) => reply.type('text/plain').send('pong'));
      for (const handler of [sentinel, ...(options.beside === undefined ? [] : [options.beside])]) {
        await app.register(toFastify(handler), options.prefix === undefined ? {} : { prefix: options.prefix });
      }
      if (parser === 'after') await app.register(formbody);
      await app.register(async (child) => {
        if (!child.hasContentTypeParser('application/x-www-form-urlencoded')) await child.register(formbody);
        child.post('/host/echo', async (request) => request.body);
      });
      app.get(
        '/api/account/:accountId/consumer/:consumerId/brand/tokens',
        { preHandler: requireFastifyAccessToken(sentinel) },
        async (request) => ({ claims: request.sentinel }),
      );
      app.get('/api/account/:accountId/export', { preHandler: requireFastifyAccessToken(sentinel, STEP_UP_GUARD) }, async (request) => ({
        claims: request.sentinel,
      }));
      if (servesMcp(sentinel)) {
        app.get(MCP_METADATA_PATH, fastifyResourceMetadata(sentinel, MCP_METADATA));
        app.get(MCP_PATH, { preHandler: requireFastifyAccessToken(sentinel, { resource: MCP_RESOURCE }) }, async (request) => ({
          claims: request.sentinel,
        }));
        app.get(MCP_ADMIN_PATH, { preHandler: requireFastifyAccessToken(sentinel, MCP_ADMIN_GUARD) }, async (request) => ({
          claims: request.sentinel,
        }));
      }
      await app.ready();
      return listen(app.server);
    },
  };
}

/** Serves a fetch handler from node:http, the way @hono/node-server or Next.js would: IncomingMessage → Request, Response → ServerResponse. */
async function serveFetch(
  handler: (request: Request) => Promise<Response>,
  addresses: WeakMap<Request, string>,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  hostCookie: string | undefined,
): Promise<void> {
  const method = incoming.method ?? 'GET';
  // Every line as it came, as a fetch server hands them over: repeated fields joined by `Headers`, not cut to the first.
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // A request line in absolute form (RFC 9112 §3.2.2) names the whole URL, as a fetch server's Request then does.
  const target = incoming.url ?? '/';
  const url = /^https?:\/\//i.test(target) ? target : `http://${incoming.headers.host ?? '127.0.0.1'}${target}`;
  const request = new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>) : undefined,
    duplex: 'half',
  } as RequestInit);
  addresses.set(request, incoming.socket.remoteAddress ?? '');
  const response = await handler(request);
  outgoing.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') outgoing.setHeader(name, value);
  });
  // The host's own cookie (MountOptions.hostCookie), then the answer's.
  const cookies = [...(hostCookie === undefined ? [] : [hostCookie]), ...response.headers.getSetCookie()];
  if (cookies.length > 0) outgoing.setHeader('set-cookie', cookies);
  outgoing.end(method === 'HEAD' ? undefined : Buffer.from(await response.arrayBuffer()));
}

function fetchHost(): Host {
  return {
    name: 'fetch',
    async mount(sentinel, options = {}) {
      const addresses = new WeakMap<Request, string>();
      const fetchOptions = { mountPath: options.prefix, ip: (request: Request) => addresses.get(request) };
      const service = toFetch(sentinel, fetchOptions);
      const beside = options.beside === undefined ? undefined : toFetch(options.beside, fetchOptions);
      // The guards are given the peer address as toFetch is, so the core can tell a trusted proxy's X-Forwarded-*.
      const ip = fetchOptions.ip;
      const guard = requireFetchAccessToken(sentinel, { ip });
      const stepUpGuard = requireFetchAccessToken(sentinel, { ...STEP_UP_GUARD, ip });
      const mcp = servesMcp(sentinel)
        ? {
            metadata: fetchResourceMetadata(sentinel, MCP_METADATA),
            guard: requireFetchAccessToken(sentinel, { resource: MCP_RESOURCE, ip }),
            admin: requireFetchAccessToken(sentinel, { ...MCP_ADMIN_GUARD, ip }),
          }
        : undefined;
      const handler = async (request: Request): Promise<Response> => {
        const { pathname } = new URL(request.url);
        if (request.method === 'GET' && pathname === '/host/ping') {
          return new Response('pong', { headers: { 'content-type': 'text/plain' } });
        }
        if (request.method === 'POST' && pathname === '/host/echo') return Response.json(formToObject(await request.text()));
        const found = BRAND_TOKENS.exec(pathname);
        if (request.method === 'GET' && found !== null) {
          const params = { accountId: decodeURIComponent(found[1] ?? ''), consumerId: decodeURIComponent(found[2] ?? '') };
          const checked = await guard(request, params);
          return checked instanceof Response ? checked : Response.json({ claims: checked.claims });
        }
        const stepUp = STEP_UP.exec(pathname);
        if (request.method === 'GET' && stepUp !== null) {
          const checked = await stepUpGuard(request, { accountId: decodeURIComponent(stepUp[1] ?? '') });
          return checked instanceof Response ? checked : Response.json({ claims: checked.claims });
        }
        if (mcp !== undefined && request.method === 'GET' && pathname === MCP_METADATA_PATH) return mcp.metadata(request);
        if (mcp !== undefined && request.method === 'GET' && (pathname === MCP_PATH || pathname === MCP_ADMIN_PATH)) {
          const checked = await (pathname === MCP_PATH ? mcp.guard : mcp.admin)(request);
          return checked instanceof Response ? checked : Response.json({ claims: checked.claims });
        }
        return (
          (await service(request)) ??
          (await beside?.(request)) ??
          new Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain' } })
        );
      };
      return listenNode(options, (incoming, outgoing) => serveFetch(handler, addresses, incoming, outgoing, options.hostCookie));
    },
  };
}

/** Every host the black-box suites run against. */
export const HOSTS: Host[] = [
  expressHost('express4', express4),
  expressHost('express5', express5),
  koaHost('koa3', Koa),
  koaHost('koa2', Koa2),
  fastifyHost(),
  fetchHost(),
];
