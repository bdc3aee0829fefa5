/**
 * The hand-written baseline of the delegation rows: RFC 8693 token exchange of an access token the service issued
 * for one that names the requesting client in `act`, as a competent engineer would write it with jose in Fastify with
 * @fastify/formbody (oidc-provider has no token exchange). It makes the checks sentinel-idp makes for the same
 * request:
 *   form content type; no duplicated parameter; grant_type; the client looked up by (accountId, clientId), its secret
 *   by SHA-256 digest + timingSafeEqual; subject_token_type access_token; no requested_token_type other than it; the
 *   subject token verified with the service's key imported once (ES256 only, typ at+jwt, iss = this account's issuer,
 *   exp required and not past) — afresh on every request, jose has no cache; its `aud` the account; not an app token
 *   (`sub` ≠ `client_id`); no `cnf` (a key-bound token is not exchanged without its key); an `act` chain of at most
 *   three; `scope` no wider than the subject's;
 * then an ES256 `at+jwt` keeping `sub`, `aud`, `gty` and `scope`, naming the client in `client_id` and in `act`
 * (nested over the subject's own), expiring no later than the subject token, and an RFC 8693 §2.2.1 answer.
 *
 * The server also mounts the hand-written v2 client-credentials endpoint (targets/handwritten.ts): the runner takes
 * the subject tokens from it before the window, as it takes sentinel-idp's from sentinel-idp's v2 endpoint.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { importJWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import {
  ACCESS_TOKEN_TYPE,
  ACCOUNT_ID,
  BOT_CLIENT_ID,
  CLIENT_SECRET_SHA256,
  HOST,
  issuerFor,
  KID,
  privateJwkFromEnv,
  TOKEN_EXCHANGE_GRANT,
} from '../fixtures.js';
import { createIssuer, error, FORM_TYPE, type Form, type Outcome, TOKEN_HEADERS } from './handwritten.js';
import type { RunningTarget } from './types.js';

const MAX_ACTORS = 3;

interface Actor {
  sub: string;
  act?: Actor;
}

function depth(act: Actor | undefined): number {
  let count = 0;
  for (let current = act; current !== undefined; current = current.act) count += 1;
  return count;
}

/** The requested scope if it is within the subject's (undefined: the subject's own), or null when it is wider. */
function narrowScope(granted: string | undefined, requested: string | undefined): string | undefined | null {
  if (requested === undefined) return granted;
  const allowed = new Set((granted ?? '').split(' ').filter(Boolean));
  return requested.split(' ').every((scope) => allowed.has(scope)) ? requested : null;
}

export async function start(port: number): Promise<RunningTarget> {
  const accountIssuer = `${issuerFor(port)}/sentinel/api/account/${ACCOUNT_ID}`;
  const privateJwk = privateJwkFromEnv();
  const key = await importJWK(privateJwk, 'ES256');
  // Verification takes the public half: a private key does not verify under WebCrypto.
  const { d: _private, ...publicJwk } = privateJwk;
  const verifyKey = await importJWK(publicJwk, 'ES256');
  // The v2 endpoint's tokens carry the bare origin as `iss`, as sentinel-idp's v2 tokens do.
  const issueConsumerToken = await createIssuer(issuerFor(port));
  const clients = new Map([[`${ACCOUNT_ID}\u0000${BOT_CLIENT_ID}`, CLIENT_SECRET_SHA256]]);

  async function exchange(accountId: string, contentType: string | undefined, form: Form | undefined): Promise<Outcome> {
    if (contentType === undefined || !FORM_TYPE.test(contentType) || form === undefined) {
      return error(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    for (const [name, value] of Object.entries(form)) {
      if (Array.isArray(value)) return error(400, 'invalid_request', `${name} given more than once`);
    }
    if (form.grant_type !== TOKEN_EXCHANGE_GRANT) return error(400, 'unsupported_grant_type', 'unsupported grant_type');
    const clientId = form.client_id as string | undefined;
    const secret = form.client_secret as string | undefined;
    const expected = clientId === undefined ? undefined : clients.get(`${accountId}\u0000${clientId}`);
    if (expected === undefined || !secret || !timingSafeEqual(createHash('sha256').update(secret).digest(), expected)) {
      return error(401, 'invalid_client', 'client authentication failed');
    }
    if (form.requested_token_type !== undefined && form.requested_token_type !== ACCESS_TOKEN_TYPE) {
      return error(400, 'invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    }
    const subjectToken = form.subject_token as string | undefined;
    if (!subjectToken) return error(400, 'invalid_request', 'subject_token is required');
    if (form.subject_token_type !== ACCESS_TOKEN_TYPE)
      return error(400, 'invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    let subject: JWTPayload;
    try {
      // The v2 endpoint's tokens name the origin as issuer, the account's grants the account's issuer: both are ours.
      ({ payload: subject } = await jwtVerify(subjectToken, verifyKey, {
        algorithms: ['ES256'],
        typ: 'at+jwt',
        issuer: [issuerFor(port), accountIssuer],
        requiredClaims: ['exp', 'sub', 'client_id', 'jti'],
      }));
    } catch {
      return error(400, 'invalid_request', 'subject_token is not a live access token of this account');
    }
    const audiences = Array.isArray(subject.aud) ? subject.aud : [subject.aud];
    if (!audiences.includes(accountId)) return error(400, 'invalid_request', 'subject_token is a token of another account');
    if (subject.sub === subject.client_id) return error(400, 'invalid_request', 'subject_token must not be an app token');
    if (subject.cnf !== undefined) return error(400, 'invalid_request', 'a key-bound subject_token cannot be exchanged');
    const act = subject.act as Actor | undefined;
    if (depth(act) + 1 > MAX_ACTORS) return error(400, 'invalid_request', `the delegation chain would be deeper than ${MAX_ACTORS}`);
    const scope = narrowScope(subject.scope as string | undefined, form.scope as string | undefined);
    if (scope === null) return error(400, 'invalid_scope', 'scope is wider than the subject token');
    const now = Math.floor(Date.now() / 1000);
    const exp = Math.min(subject.exp as number, now + 3600);
    const accessToken = await new SignJWT({
      client_id: clientId,
      azp: clientId,
      ...(subject.gty === undefined ? {} : { gty: subject.gty }),
      ...(scope === undefined ? {} : { scope }),
      act: { sub: clientId as string, ...(act === undefined ? {} : { act }) },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: KID })
      .setIssuer(subject.iss as string)
      .setSubject(subject.sub as string)
      .setAudience(subject.aud as string | string[])
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(key);
    return {
      status: 200,
      body: JSON.stringify({
        access_token: accessToken,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: exp - now,
        ...(form.scope === undefined || scope === undefined ? {} : { scope }),
      }),
    };
  }

  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post<{ Params: { accountId: string }; Body: Form }>('/sentinel/api/account/:accountId/token', async (request, reply) => {
    const body = typeof request.body === 'object' && request.body !== null ? request.body : undefined;
    const outcome = await exchange(request.params.accountId, request.headers['content-type'], body);
    return reply.code(outcome.status).headers(TOKEN_HEADERS).send(outcome.body);
  });
  app.post<{ Params: { accountId: string }; Querystring: Form; Body: Form }>(
    '/sentinel/api/v2/account/:accountId/app/token',
    async (request, reply) => {
      const body = typeof request.body === 'object' && request.body !== null ? request.body : undefined;
      const outcome = await issueConsumerToken(request.params.accountId, request.headers['content-type'], request.query, body);
      return reply.code(outcome.status).headers(TOKEN_HEADERS).send(outcome.body);
    },
  );
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}
