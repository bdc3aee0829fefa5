/** sentinel-idp guard, Koa adapter. */
import { startKoaGuard } from './guard-sentinel.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'sentinel-idp guard, Koa adapter', kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startKoaGuard(port, {});
}
