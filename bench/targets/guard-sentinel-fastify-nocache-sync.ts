/** sentinel-idp guard, Fastify, no cache, verification 'sync'. */
import { startFastifyGuard } from './guard-sentinel.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: "sentinel-idp guard, Fastify, no cache, verification 'sync'", kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startFastifyGuard(port, { cache: false, verification: 'sync' });
}
