/**
 * Peer: @node-oauth/oauth2-server 5 in Express 5, client_credentials with a minimal in-memory model whose
 * generateAccessToken signs the same ES256 JWT with jose (key imported once). The library's model callbacks do not
 * see the request, so the consumer id (`state`, validated in the route like everywhere else) reaches
 * generateAccessToken through AsyncLocalStorage. Served on the same path as sentinel-idp.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import OAuth2Server from '@node-oauth/oauth2-server';
import express from 'express';
import { importJWK, SignJWT } from 'jose';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET_SHA256, HOST, issuerFor, KID, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

const CONSUMER_ID_SHAPE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64})$/;

interface Context {
  accountId: string;
  consumerId: string;
}

export async function start(port: number): Promise<RunningTarget> {
  const issuer = issuerFor(port);
  const key = await importJWK(privateJwkFromEnv(), 'ES256');
  const als = new AsyncLocalStorage<Context>();
  const clients = new Map([
    [`${ACCOUNT_ID}\u0000${CLIENT_ID}`, { id: CLIENT_ID, secretSha256: CLIENT_SECRET_SHA256, grants: ['client_credentials'] }],
  ]);

  const model: OAuth2Server.ClientCredentialsModel = {
    async getClient(clientId, clientSecret) {
      const context = als.getStore();
      if (context === undefined) return false;
      const client = clients.get(`${context.accountId}\u0000${clientId}`);
      const digest = createHash('sha256')
        .update(clientSecret ?? '')
        .digest();
      if (client === undefined || !timingSafeEqual(digest, client.secretSha256)) return false;
      return { id: client.id, grants: client.grants };
    },
    async getUserFromClient(client) {
      return { id: client.id };
    },
    async generateAccessToken(client) {
      const context = als.getStore();
      if (context === undefined) throw new Error('no request context');
      const iat = Math.floor(Date.now() / 1000);
      return new SignJWT({ client_id: client.id, azp: client.id })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: KID })
        .setIssuer(issuer)
        .setSubject(context.consumerId)
        .setAudience(context.accountId)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .setJti(randomUUID())
        .sign(key);
    },
    async saveToken(token, client, user) {
      return { ...token, client, user };
    },
    async getAccessToken() {
      return false;
    },
  };
  const oauth = new OAuth2Server({ model, accessTokenLifetime: 3600, requireClientAuthentication: { client_credentials: true } });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.post('/sentinel/api/v2/account/:accountId/app/token', express.urlencoded({ extended: false }), (req, res, next) => {
    const state = req.query.state;
    if (typeof state !== 'string' || !CONSUMER_ID_SHAPE.test(state)) {
      res
        .status(400)
        .set({ 'cache-control': 'no-store', pragma: 'no-cache' })
        .json({ error: 'invalid_request', error_description: 'state must be the consumer id' });
      return;
    }
    const request = new OAuth2Server.Request(req);
    const response = new OAuth2Server.Response(res);
    als.run({ accountId: req.params.accountId, consumerId: state }, () => {
      oauth.token(request, response).then(
        () => {
          res
            .status(response.status ?? 200)
            .set(response.headers)
            .json(response.body);
        },
        (err: { code?: number; name?: string; message?: string }) => {
          if (typeof err.code !== 'number') {
            next(err);
            return;
          }
          res.status(err.code).set(response.headers).json({ error: err.name, error_description: err.message });
        },
      );
    });
  });
  const server: Server = await listen(app, port, HOST);
  return { close: () => closeServer(server) };
}
