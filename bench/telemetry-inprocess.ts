/**
 * The in-process half of the telemetry bench: `node --import tsx bench/telemetry-inprocess.ts <variant> <source root>
 * <seconds>` calls `sentinel.handle()` directly with a client-credentials request, 20 at a time, and prints one JSON
 * line `{ "requests": n, "cpuMicros": t }`. Without sockets, HTTP parsing and a load generator competing for the
 * cores, what remains is the service's own work, so differences between variants are easier to see.
 */
import { benchSentinel, ccRequest, registerBenchSDK, TELEMETRY_VARIANTS, type TelemetryVariant } from './telemetry-sdk.js';

const [variant, root, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 3);
const CONCURRENCY = 20;

async function main(): Promise<void> {
  if (!TELEMETRY_VARIANTS.includes(variant as TelemetryVariant) || root === undefined) {
    throw new Error(`usage: telemetry-inprocess.ts ${TELEMETRY_VARIANTS.join('|')} <source root> <seconds>`);
  }
  registerBenchSDK(variant as TelemetryVariant);
  const sentinel = await benchSentinel(root, 1);
  const batch = async (): Promise<void> => {
    const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => sentinel.handle(ccRequest())));
    if (responses.some((response) => response?.status !== 200)) throw new Error('a request was not answered 200');
  };
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) await batch();
  const cpuStart = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  let requests = 0;
  while (performance.now() < until) {
    await batch();
    requests += CONCURRENCY;
  }
  const cpu = process.cpuUsage(cpuStart);
  console.log(JSON.stringify({ requests, cpuMicros: cpu.user + cpu.system }));
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
