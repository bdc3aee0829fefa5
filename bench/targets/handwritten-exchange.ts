/**
 * The hand-written baseline of the brand JWT exchange rows: what a competent engineer would write with jose for the
 * RFC 7523 JWT bearer grant of one trusted brand, in Fastify with @fastify/formbody. It makes the checks sentinel-idp
 * makes for the same request:
 *   form content type; no duplicated parameter; grant_type; client lookup by (accountId, clientId) and secret by
 *   SHA-256 digest + timingSafeEqual; the assertion verified with the brand's key imported once (the variant's
 *   algorithm only, RS256 or ES256 — the same one the paired sentinel-idp row verifies; iss,
 *   aud = the client, exp required and not past, iat not in the future, lifetime ≤ 1 h); the consumer id (`sub`) a
 *   UUID or 64 lower-case hex; the `jti` single use (an in-memory map, entries dropped after their JWT's exp);
 *   then the same ES256 access token as the client-credentials baseline, `expires_in` a number.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { importJWK, jwtVerify, SignJWT } from 'jose';
import {
  ACCOUNT_ID,
  BRAND_ISSUER,
  brandPublicJwksFromEnv,
  CLIENT_ID,
  CLIENT_SECRET_SHA256,
  HOST,
  issuerFor,
  JWT_BEARER_GRANT,
  KID,
  privateJwkFromEnv,
} from '../fixtures.js';
import { CONSUMER_ID_SHAPE, error, FORM_TYPE, type Form, TOKEN_HEADERS } from './handwritten.js';
import type { RunningTarget } from './types.js';

/** Variant `rs256` or `es256`: the brand algorithm this endpoint accepts (its key of the brand's set). */
export async function start(port: number, variant?: string): Promise<RunningTarget> {
  const named = variant?.toUpperCase();
  if (named !== 'RS256' && named !== 'ES256') throw new Error(`handwritten-exchange needs the variant rs256 or es256, not ${variant}`);
  const alg: 'RS256' | 'ES256' = named;
  const brandJwk = brandPublicJwksFromEnv()?.find((jwk) => jwk.alg === alg);
  if (brandJwk === undefined) throw new Error('BENCH_BRAND_JWKS is not set (the runner sets it for the exchange rows)');
  const brandKey = await importJWK(brandJwk, alg);
  const signingKey = await importJWK(privateJwkFromEnv(), 'ES256');
  const issuer = `${issuerFor(port)}/sentinel/api/account/${ACCOUNT_ID}`;
  const spent = new Map<string, number>();

  async function exchange(accountId: string, contentType: string | undefined, form: Form | undefined) {
    if (contentType === undefined || !FORM_TYPE.test(contentType) || form === undefined) {
      return error(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    for (const name of ['grant_type', 'client_id', 'client_secret', 'assertion']) {
      if (Array.isArray(form[name])) return error(400, 'invalid_request', `${name} given more than once`);
    }
    if (form.grant_type !== JWT_BEARER_GRANT) return error(400, 'unsupported_grant_type', 'unsupported grant_type');
    const clientId = form.client_id as string | undefined;
    const secret = form.client_secret as string | undefined;
    if (accountId !== ACCOUNT_ID || clientId !== CLIENT_ID || !secret) return error(401, 'invalid_client', 'client authentication failed');
    if (!timingSafeEqual(createHash('sha256').update(secret).digest(), CLIENT_SECRET_SHA256)) {
      return error(401, 'invalid_client', 'client authentication failed');
    }
    const assertion = form.assertion as string | undefined;
    if (!assertion) return error(400, 'invalid_request', 'assertion is required');
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(assertion, brandKey, {
        algorithms: [alg],
        issuer: BRAND_ISSUER,
        audience: clientId,
        requiredClaims: ['exp'],
      }));
    } catch {
      return error(400, 'invalid_grant', 'the assertion is invalid');
    }
    const now = Math.floor(Date.now() / 1000);
    const exp = claims.exp as number;
    const iat = typeof claims.iat === 'number' ? claims.iat : now;
    if (iat > now || exp - iat > 3600) return error(400, 'invalid_grant', 'the assertion is issued in the future or lives too long');
    const consumer = claims.sub;
    if (typeof consumer !== 'string' || !CONSUMER_ID_SHAPE.test(consumer)) return error(400, 'invalid_grant', 'not a participant id');
    if (typeof claims.jti === 'string') {
      const seen = spent.get(claims.jti);
      if (seen !== undefined && seen >= now) return error(400, 'invalid_grant', 'the assertion has already been used');
      spent.set(claims.jti, exp);
    }
    const accessToken = await new SignJWT({ client_id: CLIENT_ID, azp: CLIENT_ID, gty: 'client_credentials' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: KID })
      .setIssuer(issuer)
      .setSubject(consumer)
      .setAudience(accountId)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .setJti(randomUUID())
      .sign(signingKey);
    return { status: 200, body: JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600 }) };
  }

  // Spent jtis whose JWT has expired can go: a replay of one is refused by its exp anyway.
  const sweep = setInterval(() => {
    const now = Math.floor(Date.now() / 1000);
    for (const [jti, exp] of spent) if (exp < now) spent.delete(jti);
  }, 60_000);
  sweep.unref();

  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post<{ Params: { accountId: string }; Body: Form }>('/sentinel/api/account/:accountId/token', async (request, reply) => {
    const body = typeof request.body === 'object' && request.body !== null ? request.body : undefined;
    const outcome = await exchange(request.params.accountId, request.headers['content-type'], body);
    return reply.code(outcome.status).headers(TOKEN_HEADERS).send(outcome.body);
  });
  await app.listen({ host: HOST, port });
  return {
    close: async () => {
      clearInterval(sweep);
      await app.close();
    },
  };
}
