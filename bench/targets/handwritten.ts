/**
 * The hand-written baseline: what a competent engineer would write for the consumer-bound client-credentials
 * endpoint with jose, without a framework of OAuth code, in Fastify with @fastify/formbody (the default variant) or
 * in Express 5 with express.urlencoded (`express`). Both make exactly the same checks and claims as sentinel-idp:
 *   form content type; no duplicated parameter; grant_type; `state` (consumer id) is a UUID or 64 lower-case hex;
 *   client lookup by (accountId, clientId); secret checked by SHA-256 digest + timingSafeEqual;
 *   an ES256 JWT (typ at+jwt, kid) with iss, sub, aud, client_id, azp, iat, exp = iat + 3600, jti.
 * The private key is imported once at startup.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import express from 'express';
import Fastify from 'fastify';
import { importJWK, SignJWT } from 'jose';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET_SHA256, HOST, issuerFor, KID, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget } from './types.js';
import { closeServer, listen } from './util.js';

/** A parsed form body, as each hand-written endpoint receives it. */
export type Form = Record<string, string | string[] | undefined>;
const ROUTE = '/sentinel/api/v2/account/:accountId/app/token';

export async function start(port: number, variant = 'fastify'): Promise<RunningTarget> {
  const issue = await createIssuer(issuerFor(port));
  if (variant === 'express') {
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.post(ROUTE, express.urlencoded({ extended: false }), (req, res, next) => {
      const body = typeof req.body === 'object' && req.body !== null ? (req.body as Form) : undefined;
      issue(req.params.accountId, req.get('content-type'), req.query as Form, body).then(
        (outcome) => void res.status(outcome.status).set(TOKEN_HEADERS).send(outcome.body),
        next,
      );
    });
    const server = await listen(app, port, HOST);
    return { close: () => closeServer(server) };
  }
  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post<{ Params: { accountId: string }; Querystring: Form; Body: Form }>(ROUTE, async (request, reply) => {
    const body = typeof request.body === 'object' && request.body !== null ? request.body : undefined;
    const outcome = await issue(request.params.accountId, request.headers['content-type'], request.query, body);
    return reply.code(outcome.status).headers(TOKEN_HEADERS).send(outcome.body);
  });
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}

export const TOKEN_HEADERS = {
  'content-type': 'application/json;charset=UTF-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
} as const;

/** The consumer ids the platform accepts: a UUID or 64 hex digits. */
export const CONSUMER_ID_SHAPE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64})$/;
/** A form Content-Type, with or without parameters. */
export const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

interface App {
  clientId: string;
  secretSha256: Buffer;
}

export interface Outcome {
  status: number;
  body: string;
}

/** An OAuth error answer (RFC 6749 §5.2). */
export function error(status: number, code: string, description: string): Outcome {
  return { status, body: JSON.stringify({ error: code, error_description: description }) };
}

/** A value of a parsed form: string, array when repeated, absent. */
type FormValue = string | string[] | undefined;

export async function createIssuer(issuer: string) {
  const jwk = privateJwkFromEnv();
  const key = await importJWK(jwk, 'ES256');
  const apps = new Map<string, App>([[`${ACCOUNT_ID}\u0000${CLIENT_ID}`, { clientId: CLIENT_ID, secretSha256: CLIENT_SECRET_SHA256 }]]);

  return async function clientCredentials(
    accountId: string,
    contentType: string | undefined,
    query: Record<string, FormValue>,
    form: Record<string, FormValue> | undefined,
  ): Promise<Outcome> {
    if (contentType === undefined || !FORM_TYPE.test(contentType) || form === undefined) {
      return error(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    for (const name of ['grant_type', 'client_id', 'client_secret']) {
      if (Array.isArray(form[name])) return error(400, 'invalid_request', `${name} given more than once`);
    }
    const state = query.state;
    if (Array.isArray(state)) return error(400, 'invalid_request', 'state given more than once');
    const grantType = form.grant_type as string | undefined;
    if (!grantType) return error(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') return error(400, 'unsupported_grant_type', 'unsupported grant_type');
    if (!state || !CONSUMER_ID_SHAPE.test(state)) {
      return error(400, 'invalid_request', 'state must be the consumer id (a UUID or 64 hex)');
    }
    const clientId = form.client_id as string | undefined;
    const secret = form.client_secret as string | undefined;
    if (!clientId || !secret) return error(401, 'invalid_client', 'client authentication failed');
    const app = apps.get(`${accountId}\u0000${clientId}`);
    const digest = createHash('sha256').update(secret).digest();
    if (app === undefined || !timingSafeEqual(digest, app.secretSha256)) {
      return error(401, 'invalid_client', 'client authentication failed');
    }
    const iat = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({ client_id: app.clientId, azp: app.clientId })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: KID })
      .setIssuer(issuer)
      .setSubject(state)
      .setAudience(accountId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .setJti(randomUUID())
      .sign(key);
    return {
      status: 200,
      body: JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: '3600' }),
    };
  };
}
