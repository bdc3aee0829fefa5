/**
 * Baseline guard: Koa with a hand-written middleware around jose `jwtVerify` (ES256 public key imported once,
 * issuer, audience, `typ: at+jwt`), then the same consumer and grant-type checks as the service's guard.
 */
import type { Server } from 'node:http';
import { importJWK, jwtVerify } from 'jose';
import Koa, { type Middleware } from 'koa';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import { guardRoute } from './guard-koa-route.js';
import type { RunningTarget, TargetMeta } from './types.js';
import { closeServer, listen } from './util.js';

export const meta: TargetMeta = { label: 'hand-written Koa + jose jwtVerify guard', kind: 'baseline' };

export async function start(port: number): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const key = await importJWK(publicJwk, 'ES256');
  const refuse = (ctx: Koa.Context): void => {
    ctx.status = 401;
    ctx.set('www-authenticate', 'Bearer error="invalid_token"');
    ctx.body = { error: 'invalid_token' };
  };
  const guard: Middleware = async (ctx, next) => {
    const found = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(ctx.get('authorization'));
    if (found === null) return refuse(ctx);
    try {
      const { payload } = await jwtVerify(found[1] as string, key, {
        algorithms: ['ES256'],
        issuer: GUARD_ISSUER,
        audience: ACCOUNT_ID,
        typ: 'at+jwt',
      });
      if (ctx.params.accountId !== ACCOUNT_ID || payload.sub !== ctx.params.consumerId || payload.gty !== 'client_credentials') {
        throw new Error('foreign token');
      }
      ctx.state.consumer = payload.sub;
    } catch {
      return refuse(ctx);
    }
    await next();
  };
  const app = new Koa();
  app.use(
    guardRoute(guard, (ctx) => {
      ctx.body = { consumer: ctx.state.consumer };
    }),
  );
  const server: Server = await listen(app.callback(), port, HOST);
  return { close: () => closeServer(server) };
}
