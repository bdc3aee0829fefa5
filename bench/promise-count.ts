/**
 * `node --import tsx bench/promise-count.ts <variant> [source root]`: the promises one client-credentials call of
 * `sentinel.handle()` creates, counted by an `async_hooks` init hook over 200 calls after 200 of warm-up. Variants as
 * in bench/telemetry.ts (`no-sdk`, `sdk`, `sdk-ratio`, …).
 *
 * Why count them: with an OpenTelemetry SDK registered on Node 20, every promise runs the async-context hooks, so the
 * count is a cost that does not move with the machine's load, unlike req/s or CPU time.
 */
import { createHook } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { createKeyPair } from './fixtures.js';
import { buildLibraryForBench } from './library-build.js';
import { benchSentinel, ccRequest, registerBenchSDK, TELEMETRY_VARIANTS, type TelemetryVariant } from './telemetry-sdk.js';

const CALLS = 200;
const [variant, rootArg] = process.argv.slice(2);
const root = rootArg ?? fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

async function main(): Promise<void> {
  if (!TELEMETRY_VARIANTS.includes(variant as TelemetryVariant)) {
    throw new Error(`usage: promise-count.ts ${TELEMETRY_VARIANTS.join('|')} [source root]`);
  }
  await buildLibraryForBench(root);
  process.env.BENCH_PRIVATE_JWK ??= JSON.stringify((await createKeyPair()).privateJwk);
  registerBenchSDK(variant as TelemetryVariant);
  const sentinel = await benchSentinel(root, 1);
  const call = async (): Promise<void> => {
    const response = await sentinel.handle(ccRequest());
    if (response?.status !== 200) throw new Error(`a call was answered ${response?.status}`);
  };
  for (let i = 0; i < CALLS; i++) await call();
  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  }).enable();
  for (let i = 0; i < CALLS; i++) await call();
  hook.disable();
  // The check's own promises (the async `call` and its await) are subtracted: two per call.
  console.log(`${variant}: ${(promises / CALLS - 2).toFixed(1)} promises per call`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
