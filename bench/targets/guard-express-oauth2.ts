/**
 * Peer guard: express-oauth2-jwt-bearer's `auth()` in Express 5 (the public key given directly, so no JWKS fetch;
 * issuer, audience and ES256 pinned), then the same consumer and grant-type checks as the service's guard.
 */
import type { Server } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import { auth } from 'express-oauth2-jwt-bearer';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

export async function start(port: number): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const guard = auth({ issuer: GUARD_ISSUER, audience: ACCOUNT_ID, publicKey: publicJwk as never, tokenSigningAlg: 'ES256' });
  app.get('/api/account/:accountId/consumer/:consumerId/tokens', guard, (request, response) => {
    const payload = request.auth?.payload;
    if (
      payload === undefined ||
      request.params.accountId !== ACCOUNT_ID ||
      payload.sub !== request.params.consumerId ||
      payload.gty !== 'client_credentials'
    ) {
      response.status(401).set('www-authenticate', 'Bearer error="invalid_token"').json({ error: 'invalid_token' });
      return;
    }
    response.json({ consumer: payload.sub });
  });
  const onError: ErrorRequestHandler = (error: { status?: number }, _request, response, _next) => {
    response.status(error.status ?? 500).json({ error: 'invalid_token' });
  };
  app.use(onError);
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}
