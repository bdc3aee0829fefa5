/**
 * Baseline guard: Express 5 with a hand-written middleware around jose `jwtVerify` (ES256 public key imported once,
 * issuer, audience, `typ: at+jwt`), then the same consumer and grant-type checks as the service's guard.
 */
import type { Server } from 'node:http';
import express, { type RequestHandler, type Response } from 'express';
import { importJWK, jwtVerify } from 'jose';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget, TargetMeta } from './types.js';
import { closeServer, listen } from './util.js';

export const meta: TargetMeta = { label: 'hand-written Express + jose jwtVerify guard', kind: 'baseline' };

export async function start(port: number): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const key = await importJWK(publicJwk, 'ES256');
  const refuse = (response: Response): void => {
    response.status(401).set('www-authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
  };
  const guard: RequestHandler = (request, response, next) => {
    const found = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(request.headers.authorization ?? '');
    if (found === null) return refuse(response);
    jwtVerify(found[1] as string, key, { algorithms: ['ES256'], issuer: GUARD_ISSUER, audience: ACCOUNT_ID, typ: 'at+jwt' }).then(
      ({ payload }) => {
        if (request.params.accountId !== ACCOUNT_ID || payload.sub !== request.params.consumerId || payload.gty !== 'client_credentials') {
          return refuse(response);
        }
        response.locals.consumer = payload.sub;
        next();
      },
      () => refuse(response),
    );
  };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/api/account/:accountId/consumer/:consumerId/tokens', guard, (_request, response) => {
    response.json({ consumer: response.locals.consumer });
  });
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}
