/**
 * Peer guard: @fastify/jwt (fast-jwt underneath) with its verified-token cache on, issuer and audience pinned,
 * then the same consumer and grant-type checks as the service's guard.
 */
import { createPublicKey } from 'node:crypto';
import fastifyJwt from '@fastify/jwt';
import Fastify from 'fastify';
import { ACCOUNT_ID, GUARD_ISSUER, HOST, privateJwkFromEnv } from '../fixtures.js';
import type { RunningTarget } from './types.js';

export async function start(port: number): Promise<RunningTarget> {
  const { d: _d, ...publicJwk } = privateJwkFromEnv();
  const pem = createPublicKey({ key: publicJwk as never, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
  const app = Fastify({ logger: false });
  await app.register(fastifyJwt, {
    secret: { public: pem, private: 'unused-this-guard-only-verifies' },
    verify: { algorithms: ['ES256'], allowedIss: GUARD_ISSUER, allowedAud: ACCOUNT_ID, cache: true },
  });
  app.get<{ Params: { accountId: string; consumerId: string } }>(
    '/api/account/:accountId/consumer/:consumerId/tokens',
    async (request, reply) => {
      try {
        const payload = await request.jwtVerify<{ sub?: string; gty?: string }>();
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
