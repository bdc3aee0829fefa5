/** Baseline: a hand-written Fastify + @fastify/formbody + jose ES256 token endpoint (see handwritten-core.ts). */
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { HOST, issuerFor } from '../fixtures.js';
import { createIssuer, TOKEN_HEADERS } from './handwritten-core.js';
import type { RunningTarget } from './types.js';

type Form = Record<string, string | string[] | undefined>;

export async function start(port: number): Promise<RunningTarget> {
  const issue = await createIssuer(issuerFor(port));
  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post<{ Params: { accountId: string }; Querystring: Form; Body: Form }>(
    '/sentinel/api/v2/account/:accountId/app/token',
    async (request, reply) => {
      const body = typeof request.body === 'object' && request.body !== null ? request.body : undefined;
      const outcome = await issue(request.params.accountId, request.headers['content-type'], request.query, body);
      reply.code(outcome.status).headers(TOKEN_HEADERS);
      return reply.send(outcome.body);
    },
  );
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}
