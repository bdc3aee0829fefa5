/**
 * Liveness and readiness for orchestrators and load balancers. Liveness says the process answers; readiness says a
 * request could be served now: the store answers, a signing key is loaded, the app store answers. Both are cheap
 * (one store read, one app-store lookup at most), carry no secret and no error text (a probe's answer is often
 * public), and stay out of spans and metrics.
 */
import type { SentinelContext } from './context.js';
import { noStoreJSON, type SentinelResponse } from './messages.js';
import { untraced } from '../telemetry/traced-store.js';

/** How long a readiness check may wait on a dependency before counting it as down. */
const CHECK_TIMEOUT_MS = 1000;

/** A key no one writes: reading it proves the store answers without touching real data. */
const PROBE_KEY = 'health:probe';

type CheckResult = 'ok' | 'failed';

async function check(probe: () => unknown): Promise<CheckResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve('failed'), CHECK_TIMEOUT_MS);
  });
  try {
    const answered = (async () => {
      await probe();
      return 'ok' as const;
    })().catch(() => 'failed' as const);
    return await Promise.race([answered, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET {basePath}/health/live`: 200 while the process can answer at all.
 * @example { name: 'health-live', methods: ['GET'], path: '/health/live', handler: handleLive, observed: false }
 */
export async function handleLive(): Promise<SentinelResponse> {
  return noStoreJSON(200, { status: 'ok' });
}

/**
 * `GET {basePath}/health/ready`: 200 when every dependency answers, 503 naming the ones that do not.
 * @example { name: 'health-ready', methods: ['GET'], path: '/health/ready', handler: handleReady, observed: false }
 */
export async function handleReady(context: SentinelContext): Promise<SentinelResponse> {
  const store = untraced(context.store);
  const [storeResult, appsResult] = await Promise.all([
    check(() => store.get(PROBE_KEY)),
    check(() => context.apps.hasAccount('health-probe')),
  ]);
  const checks = {
    store: storeResult,
    keys: (context.keys.signer === undefined ? 'failed' : 'ok') as CheckResult,
    apps: appsResult,
  };
  const ready = Object.values(checks).every((result) => result === 'ok');
  return noStoreJSON(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks });
}
