/**
 * The service and the MCP server on one host, in each framework: the service's endpoints, the MCP server's
 * protected resource metadata (RFC 9728) at its well-known path, and `/mcp` behind `requireAccessToken` with the
 * resource, plus `/billing-mcp`, a second resource whose guard must refuse the first one's tokens.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import * as expressAdapter from '../../adapters/express/index.js';
import * as fastifyAdapter from '../../adapters/fastify/index.js';
import * as fetchAdapter from '../../adapters/fetch/index.js';
import * as koaAdapter from '../../adapters/koa/index.js';
import type { AccessTokenClaims, Sentinel } from '../../src/index.js';
import { handleFetchMcp, handleNodeMcp } from './mcp-server.js';

export type Framework = 'express' | 'koa' | 'fastify' | 'fetch';
export const FRAMEWORKS: readonly Framework[] = ['express', 'koa', 'fastify', 'fetch'];

/** What the host serves for the MCP server: its resource, the metadata's options, the second resource. */
export interface McpRoutes {
  accountId: string;
  resource: string;
  otherResource: string;
}

/** A host listening on 127.0.0.1 (its port chosen when the sentinel is made: the issuer names it). */
export interface RunningHost {
  close(): Promise<void>;
}

const SCOPES = ['mcp:tools'];

function expressHost(
  sentinel: Sentinel,
  routes: McpRoutes,
): (request: IncomingMessage, response: import('node:http').ServerResponse) => void {
  const app = express();
  const metadata = { resource: routes.resource, accountId: routes.accountId, scopesSupported: SCOPES };
  app.use(expressAdapter.toExpress(sentinel));
  app.get(sentinel.protectedResourceMetadata(metadata).path, expressAdapter.protectedResourceMetadata(sentinel, metadata));
  const guarded = (resource: string) => [
    expressAdapter.requireAccessToken(sentinel, { resource }),
    (request: expressAdapter.ExpressRequestLike, response: import('node:http').ServerResponse) => {
      void handleNodeMcp(request.sentinel as AccessTokenClaims, request, response);
    },
  ];
  app.all('/mcp', ...guarded(routes.resource));
  app.all('/billing-mcp', ...guarded(routes.otherResource));
  return app;
}

function koaHost(sentinel: Sentinel, routes: McpRoutes) {
  const app = new Koa();
  const metadata = { resource: routes.resource, accountId: routes.accountId, scopesSupported: SCOPES };
  const path = sentinel.protectedResourceMetadata(metadata).path;
  const serveMetadata = koaAdapter.protectedResourceMetadata(sentinel, metadata);
  const guards = new Map([
    ['/mcp', koaAdapter.requireAccessToken(sentinel, { resource: routes.resource })],
    ['/billing-mcp', koaAdapter.requireAccessToken(sentinel, { resource: routes.otherResource })],
  ]);
  app.use(koaAdapter.toKoa(sentinel));
  app.use(async (ctx, next) => {
    if (ctx.path === path) return serveMetadata(ctx as never, next);
    const guard = guards.get(ctx.path);
    if (guard === undefined) return next();
    return guard(ctx as never, async () => {
      ctx.respond = false;
      await handleNodeMcp(ctx.state.sentinel as AccessTokenClaims, ctx.req, ctx.res);
    });
  });
  return app.callback();
}

async function fastifyHost(sentinel: Sentinel, routes: McpRoutes) {
  const app = Fastify();
  const metadata = { resource: routes.resource, accountId: routes.accountId, scopesSupported: SCOPES };
  await app.register(fastifyAdapter.toFastify(sentinel));
  app.get(sentinel.protectedResourceMetadata(metadata).path, fastifyAdapter.protectedResourceMetadata(sentinel, metadata));
  for (const [path, resource] of [
    ['/mcp', routes.resource],
    ['/billing-mcp', routes.otherResource],
  ] as const) {
    app.route({
      method: ['GET', 'POST', 'DELETE'],
      url: path,
      preHandler: fastifyAdapter.requireAccessToken(sentinel, { resource }),
      handler: async (request, reply) => {
        reply.hijack();
        await handleNodeMcp(request.sentinel as AccessTokenClaims, request.raw, reply.raw, request.body);
      },
    });
  }
  await app.ready();
  return app.routing.bind(app) as unknown as (request: IncomingMessage, response: import('node:http').ServerResponse) => void;
}

function fetchHost(sentinel: Sentinel, routes: McpRoutes): (request: Request) => Promise<Response> {
  const idp = fetchAdapter.toFetch(sentinel, { ip: () => '127.0.0.1' });
  const metadata = { resource: routes.resource, accountId: routes.accountId, scopesSupported: SCOPES };
  const path = sentinel.protectedResourceMetadata(metadata).path;
  const serveMetadata = fetchAdapter.protectedResourceMetadata(sentinel, metadata);
  const guards = new Map([
    ['/mcp', fetchAdapter.requireAccessToken(sentinel, { resource: routes.resource })],
    ['/billing-mcp', fetchAdapter.requireAccessToken(sentinel, { resource: routes.otherResource })],
  ]);
  return async (request) => {
    const ours = await idp(request);
    if (ours !== null) return ours;
    const { pathname } = new URL(request.url);
    if (pathname === path) return serveMetadata(request);
    const guard = guards.get(pathname);
    if (guard === undefined) return new Response('Not Found', { status: 404 });
    const checked = await guard(request);
    return checked instanceof Response ? checked : handleFetchMcp(checked.claims, request);
  };
}

/** A Node server around a fetch handler (what Bun or Deno would do natively). */
function nodeServerForFetch(handler: (request: Request) => Promise<Response>): Server {
  return createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
    const request = new Request(`http://${incoming.headers.host}${incoming.url}`, {
      method: incoming.method,
      headers,
      ...(body === undefined || incoming.method === 'GET' || incoming.method === 'HEAD' ? {} : { body }),
    });
    const response = await handler(request);
    const written: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      written[name] = value;
    });
    outgoing.writeHead(response.status, written);
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
}

/** Reserves a loopback port (the issuer must name it before the sentinel exists). */
export async function reservePort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Starts `framework` on the reserved server. */
export async function startHost(framework: Framework, server: Server, sentinel: Sentinel, routes: McpRoutes): Promise<RunningHost> {
  let listener: (request: IncomingMessage, response: import('node:http').ServerResponse) => void;
  if (framework === 'express') listener = expressHost(sentinel, routes);
  else if (framework === 'koa') listener = koaHost(sentinel, routes);
  else if (framework === 'fastify') listener = await fastifyHost(sentinel, routes);
  else listener = nodeServerForFetch(fetchHost(sentinel, routes)).listeners('request')[0] as typeof listener;
  server.on('request', listener);
  return {
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
