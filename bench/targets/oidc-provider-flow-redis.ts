/**
 * oidc-provider-flow.ts on Redis: the documented ioredis `Adapter` (oidc-provider-redis-adapter.ts), its client auto-pipelining, at REDIS_URL
 * (default redis://127.0.0.1:6379), under a key prefix of its own per server process, deleted on close.
 */
import { Redis } from 'ioredis';
import { redisAdapter } from './oidc-provider-redis-adapter.js';
import { startFlowProvider } from './oidc-provider-flow.js';
import { deleteBenchKeys } from './redis-bench.js';
import type { RunningTarget, TargetMeta } from './types.js';

export const meta: TargetMeta = { label: 'oidc-provider 9 (code flow) + ioredis adapter', kind: 'peer' };

export async function start(port: number): Promise<RunningTarget> {
  // Auto-pipelining as sentinel-idp's recommended client options have it: both rows get the same client setting,
  // so the ratio compares how the two servers use Redis, not how their clients are configured.
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  const prefix = `bench-oidc:${process.pid}:`;
  return startFlowProvider(port, redisAdapter(client, prefix), async () => {
    await deleteBenchKeys(client, prefix);
    client.disconnect();
  });
}
