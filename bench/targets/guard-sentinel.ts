/**
 * sentinel-idp's bearer guard (`requireAccessToken`) on the guard rows' route, in Fastify, Express or Koa (its route
 * matched by guard-koa-route.ts). Answers the token's consumer as JSON. Variants: `fastify` (the default), `express`,
 * `koa`, `fetch` (the fetch adapter's guard in a fetch handler on node:http, fetch-host.ts); `fastify-nocache` and `fastify-nocache-sync` turn the verified-token cache off so that every request
 * verifies, on the thread pool or on the main thread.
 */
import type { Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import Fastify, { type preHandlerAsyncHookHandler } from 'fastify';
import Koa, { type Middleware } from 'koa';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, GUARD_ISSUER_BASE, HOST, privateJwkFromEnv } from '../fixtures.js';
import { guardParams, serveFetch } from './fetch-host.js';
import { guardRoute } from './guard-koa-route.js';
import { importRepoModule } from './sentinel-common.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

/** How a guard row configures the service. */
interface GuardSettings {
  verification?: 'threadpool' | 'sync';
  cache?: boolean;
}

const ROUTE = '/api/account/:accountId/consumer/:consumerId/tokens';

async function createGuardSentinel(settings: GuardSettings): Promise<unknown> {
  const core = await importRepoModule<{ createSentinel(options: Record<string, unknown>): unknown }>('src/index.js');
  return core.createSentinel({
    issuer: GUARD_ISSUER_BASE,
    apps: [
      { accountId: ACCOUNT_ID, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: ['client_credentials'] },
    ],
    keys: [privateJwkFromEnv()],
    ...(settings.verification === undefined ? {} : { verification: settings.verification }),
    ...(settings.cache === false ? { verifiedTokens: false } : {}),
  });
}

interface Claims {
  sub: string;
}

export async function start(port: number, variant = 'fastify'): Promise<RunningTarget> {
  if (variant === 'express') return startExpressGuard(port, {});
  if (variant === 'koa') return startKoaGuard(port, {});
  if (variant === 'fetch') return startFetchGuard(port);
  if (variant === 'fastify') return startFastifyGuard(port, {});
  if (variant === 'fastify-nocache') return startFastifyGuard(port, { cache: false, verification: 'threadpool' });
  if (variant === 'fastify-nocache-sync') return startFastifyGuard(port, { cache: false, verification: 'sync' });
  throw new Error(`guard-sentinel: unknown variant ${variant}`);
}

async function startFastifyGuard(port: number, settings: GuardSettings = {}): Promise<RunningTarget> {
  const { requireAccessToken } = await importRepoModule<{ requireAccessToken(s: unknown): preHandlerAsyncHookHandler }>(
    'adapters/fastify/index.js',
  );
  const sentinel = await createGuardSentinel(settings);
  const app = Fastify({ logger: false });
  app.get(ROUTE, { preHandler: requireAccessToken(sentinel) }, async (request) => ({
    consumer: (request as unknown as { sentinel: Claims }).sentinel.sub,
  }));
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}

async function startExpressGuard(port: number, settings: GuardSettings = {}): Promise<RunningTarget> {
  const { requireAccessToken } = await importRepoModule<{ requireAccessToken(s: unknown): RequestHandler }>('adapters/express/index.js');
  const sentinel = await createGuardSentinel(settings);
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get(ROUTE, requireAccessToken(sentinel), (request, response) => {
    response.json({ consumer: (request as unknown as { sentinel: Claims }).sentinel.sub });
  });
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}

async function startKoaGuard(port: number, settings: GuardSettings = {}): Promise<RunningTarget> {
  const { requireAccessToken } = await importRepoModule<{ requireAccessToken(s: unknown): Middleware }>('adapters/koa/index.js');
  const sentinel = await createGuardSentinel(settings);
  const app = new Koa();
  app.use(
    guardRoute(requireAccessToken(sentinel), (ctx) => {
      ctx.body = { consumer: (ctx.state.sentinel as Claims).sub };
    }),
  );
  const server: Server = await listen(app.callback(), port, HOST);
  return { close: () => closeServer(server) };
}

type FetchGuard = (request: Request, params?: Record<string, string | undefined>) => Promise<{ claims: Claims } | Response>;

async function startFetchGuard(port: number): Promise<RunningTarget> {
  const { requireAccessToken } = await importRepoModule<{ requireAccessToken(s: unknown): FetchGuard }>('adapters/fetch/index.js');
  const guard = requireAccessToken(await createGuardSentinel({}));
  return serveFetch(port, async (request) => {
    const params = guardParams(new URL(request.url).pathname);
    if (params === undefined) return new Response('not found', { status: 404 });
    const checked = await guard(request, params);
    return checked instanceof Response ? checked : Response.json({ consumer: checked.claims.sub });
  });
}
