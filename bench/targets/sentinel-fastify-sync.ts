/** sentinel-idp through its Fastify adapter with `signing: 'sync'` (signatures on the main thread). */
import { startFastify } from './sentinel-fastify.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: "sentinel-idp, Fastify adapter, signing: 'sync'", kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startFastify(port, 'sync');
}
