/** sentinel-idp through its Fastify adapter: `await app.register(toFastify(sentinel))`. */
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { HOST } from '../fixtures.js';
import { type BenchSigning, createBenchSentinel, importRepoModule, type SentinelLike } from './sentinel-common.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'sentinel-idp, Fastify adapter', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startFastify(port, undefined);
}

/** The Fastify row with a chosen signing mode (the `sentinel-fastify-sync` row compares the two in one run). */
export async function startFastify(
  port: number,
  signing: BenchSigning,
  store?: unknown,
  onClose?: () => Promise<void>,
): Promise<RunningTarget> {
  const { toFastify } = await importRepoModule<{ toFastify(s: SentinelLike): FastifyPluginAsync }>('adapters/fastify/index.js');
  const sentinel = await createBenchSentinel(port, signing, store);
  const app = Fastify({ logger: false });
  await app.register(toFastify(sentinel));
  await app.listen({ host: HOST, port });
  return {
    close: async () => {
      await app.close();
      await onClose?.();
    },
  };
}
