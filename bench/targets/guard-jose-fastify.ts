/**
 * Baseline guard: Fastify with a hand-written preHandler around jose `jwtVerify` (ES256 public key imported once,
 * issuer, audience, `typ: at+jwt`), then the same consumer and grant-type checks as the service's guard.
 */
import Fastify from 'fastify';
import { importJWK, jwtVerify } from 'jose';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'hand-written Fastify + jose jwtVerify guard', kind: 'baseline' };

export async function start(port: number): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const key = await importJWK(publicJwk, 'ES256');
  const app = Fastify({ logger: false });
  app.get<{ Params: { accountId: string; consumerId: string } }>(
    '/api/account/:accountId/consumer/:consumerId/tokens',
    async (request, reply) => {
      const found = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(request.headers.authorization ?? '');
      if (found === null) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'invalid_token' });
      try {
        const { payload } = await jwtVerify(found[1] as string, key, {
          algorithms: ['ES256'],
          issuer: GUARD_ISSUER,
          audience: ACCOUNT_ID,
          typ: 'at+jwt',
        });
        if (request.params.accountId !== ACCOUNT_ID || payload.sub !== request.params.consumerId || payload.gty !== 'client_credentials') {
          throw new Error('foreign token');
        }
        return { consumer: payload.sub };
      } catch {
        return reply.code(401).header('www-authenticate', 'Bearer error="invalid_token"').send({ error: 'invalid_token' });
      }
    },
  );
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}
