/** sentinel-idp through its Fastify adapter: `await app.register(toFastify(sentinel))`. */
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { HOST } from '../fixtures.js';
import { createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'sentinel-idp, Fastify adapter', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  const { toFastify } = await importRepoModule<{ toFastify(s: SentinelLike): FastifyPluginAsync }>('adapters/fastify/index.js');
  const sentinel = await createBenchSentinel(port);
  const app = Fastify({ logger: false });
  await app.register(toFastify(sentinel));
  await app.listen({ host: HOST, port });
  return { close: () => app.close() };
}
