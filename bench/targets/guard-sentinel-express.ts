/** sentinel-idp guard, Express adapter. */
import { startExpressGuard } from './guard-sentinel.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'sentinel-idp guard, Express adapter', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startExpressGuard(port, {});
}
