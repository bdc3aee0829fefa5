/**
 * Baseline guards: a hand-written guard around jose `jwtVerify` (ES256 public key imported once, issuer, audience,
 * `typ: at+jwt`), then the same consumer and grant-type checks as the service's guard, in Fastify (the default
 * variant), `express`, `koa` (its route matched by guard-koa-route.ts) or `fetch` (a fetch handler on node:http,
 * fetch-host.ts).
 */
import type { Server } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { importJWK, jwtVerify } from 'jose';
import Koa from 'koa';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import { guardParams, serveFetch } from './fetch-host.js';
import { guardRoute } from './guard-koa-route.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

const ROUTE = '/api/account/:accountId/consumer/:consumerId/tokens';
const REFUSED = { error: 'invalid_token' };
const CHALLENGE = 'Bearer error="invalid_token"';

export async function start(port: number, variant = 'fastify'): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const key = await importJWK(publicJwk, 'ES256');
  /** The consumer the token was issued to, or undefined when it does not grant the path's consumer. */
  const consumerOf = async (authorization: string | undefined, params: Record<string, string>): Promise<string | undefined> => {
    const found = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(authorization ?? '');
    if (found === null) return undefined;
    try {
      const options = { algorithms: ['ES256'], issuer: GUARD_ISSUER, audience: ACCOUNT_ID, typ: 'at+jwt' };
      const { payload } = await jwtVerify(found[1] as string, key, options);
      const ours = params.accountId === ACCOUNT_ID && payload.sub === params.consumerId && payload.gty === 'client_credentials';
      return ours ? payload.sub : undefined;
    } catch {
      return undefined;
    }
  };
  if (variant === 'fastify') {
    const app = Fastify({ logger: false });
    app.get<{ Params: Record<string, string> }>(ROUTE, async (request, reply) => {
      const consumer = await consumerOf(request.headers.authorization, request.params);
      return consumer ? { consumer } : reply.code(401).header('www-authenticate', CHALLENGE).send(REFUSED);
    });
    await app.listen({ host: HOST, port });
    return { close: () => app.close() };
  }
  if (variant === 'fetch') {
    return serveFetch(port, async (request) => {
      const params = guardParams(new URL(request.url).pathname);
      if (params === undefined) return new Response('not found', { status: 404 });
      const consumer = await consumerOf(request.headers.get('authorization') ?? undefined, params);
      return consumer ? Response.json({ consumer }) : Response.json(REFUSED, { status: 401, headers: { 'www-authenticate': CHALLENGE } });
    });
  }
  let server: Server;
  if (variant === 'express') {
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.get(
      ROUTE,
      (request, response, next) => {
        consumerOf(request.headers.authorization, request.params).then((consumer) => {
          if (!consumer) return void response.status(401).set('www-authenticate', CHALLENGE).json(REFUSED);
          response.locals.consumer = consumer;
          next();
        }, next);
      },
      (_request, response) => {
        response.json({ consumer: response.locals.consumer });
      },
    );
    server = await listen(app, port, HOST);
  } else if (variant === 'koa') {
    const app = new Koa();
    const guard: Koa.Middleware = async (ctx, next) => {
      ctx.state.consumer = await consumerOf(ctx.get('authorization'), ctx.params);
      if (ctx.state.consumer) return next();
      ctx.status = 401;
      ctx.set('www-authenticate', CHALLENGE);
      ctx.body = REFUSED;
    };
    app.use(
      guardRoute(guard, (ctx) => {
        ctx.body = { consumer: ctx.state.consumer };
      }),
    );
    server = await listen(app.callback(), port, HOST);
  } else {
    throw new Error(`guard-jose: unknown variant ${variant}`);
  }
  return { close: () => closeServer(server) };
}
