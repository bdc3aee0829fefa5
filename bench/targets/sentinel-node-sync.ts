/** sentinel.handle on bare node:http with `signing: 'sync'` (signatures on the main thread, no thread-pool hand-off). */
import { startNode } from './sentinel-node.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: "sentinel-idp, sentinel.handle on bare node:http, signing: 'sync'", kind: 'sentinel' };

export async function start(port: number): Promise<RunningTarget> {
  return startNode(port, 'sync');
}
