/**
 * `node --import tsx bench/telemetry.ts`: what OpenTelemetry costs on the client-credentials row (v2 consumer-bound
 * token, core on bare node:http), three servers in the same run:
 *
 * - `baseline`: the source from before the service had telemetry (`git archive` of the parent of the first commit
 *   that added src/telemetry/instruments.ts, or BENCH_TELEMETRY_BASE), no SDK;
 * - `no-sdk`: this source, no SDK registered (the instruments are the API's no-ops);
 * - `baseline-sdk`: the baseline source with the SDK registered: what the host pays for the SDK alone (its async
 *   context manager hooks every async operation of the process), with nothing instrumented;
 * - `sdk`: this source with the OpenTelemetry SDK registered (always-on sampling, batch span processor, Prometheus
 *   reader), see bench/telemetry-sdk.ts: the worst case, every request traced;
 * - `sdk-ratio`: the same with `ParentBased(TraceIdRatioBased(0.1))` sampling, as production hosts usually run it
 *   (a tenth of the traces recorded; the metrics still count every request).
 *
 * Both source trees are built with tsup before the run, as the published package is (bench/library-build.ts;
 * `BENCH_LIBRARY=source` runs them through tsx instead). Rounds rotate the order; each row is the median req/s over
 * rounds. Ratios are of medians within this run. The
 * section between the telemetry markers of bench/RESULTS.md is replaced (or appended); the rest of the file is
 * left alone. Env: BENCH_DURATION (s, default 5), BENCH_WARMUP (s, default 1), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 50), BENCH_OUT (default bench/RESULTS.md), BENCH_SDK_PARTS (`traces,metrics` by default;
 * `traces` or `metrics` registers only that half of the SDK, to split the cost).
 */
import { execFileSync } from 'node:child_process';
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { CC_BODY, CONSUMER_ID, createKeyPair, FORM_CONTENT_TYPE, HOST, TOKEN_PATH } from './fixtures.js';
import { extractTelemetryBaseline, TELEMETRY_VARIANTS, type TelemetryVariant } from './telemetry-sdk.js';
import { buildLibraryForBench } from './library-build.js';
import { median } from './report.js';
import { writeResultsSection } from './results-section.js';

const VARIANTS = TELEMETRY_VARIANTS;
type Variant = TelemetryVariant;

const env = process.env;
const duration = Number(env.BENCH_DURATION ?? 5);
const warmup = Number(env.BENCH_WARMUP ?? 1);
const rounds = Number(env.BENCH_ROUNDS ?? 3);
const connections = Number(env.BENCH_CONNECTIONS ?? 50);
const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const out = env.BENCH_OUT ?? `${repo}/bench/RESULTS.md`;
const serverScript = fileURLToPath(new URL('./telemetry-server.ts', import.meta.url));
const inProcessScript = fileURLToPath(new URL('./telemetry-inprocess.ts', import.meta.url));
const PATH = `${TOKEN_PATH}?state=${CONSUMER_ID}`;

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startServer(variant: Variant, root: string, jwk: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(serverScript, [variant, String(port), root], {
    execArgv: ['--import', 'tsx'],
    env: { ...env, BENCH_PRIVATE_JWK: jwk },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  await new Promise<void>((resolve, reject) => {
    child.once('message', (message: { type: string; error?: string }) =>
      message.type === 'ready' ? resolve() : reject(new Error(`${variant}: ${message.error}`)),
    );
    child.once('exit', (code) => reject(new Error(`${variant} exited with ${code}`)));
  });
  return { port, child };
}

/** Sends `type` to the child and resolves with its first answer of `answer`. */
function ask<T>(child: ChildProcess, type: string, answer: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (message: { type: string }): void => {
      if (message.type !== answer) return;
      child.off('message', listener);
      resolve(message as T);
    };
    child.on('message', listener);
    child.send({ type });
  });
}

async function load(port: number, seconds: number): Promise<{ rps: number; requests: number }> {
  const result = await autocannon({
    url: `http://${HOST}:${port}`,
    connections,
    duration: seconds,
    requests: [{ method: 'POST', path: PATH, headers: { 'content-type': FORM_CONTENT_TYPE }, body: CC_BODY }],
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`port ${port}: ${bad} failed responses`);
  return { rps: result.requests.average, requests: result.requests.total };
}

async function checkFirst(port: number): Promise<void> {
  const response = await fetch(`http://${HOST}:${port}${PATH}`, {
    method: 'POST',
    headers: { 'content-type': FORM_CONTENT_TYPE },
    body: CC_BODY,
  });
  const body = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || typeof body.access_token !== 'string') throw new Error(`port ${port}: ${response.status}`);
}

/** CPU µs per `sentinel.handle()` call without HTTP (bench/telemetry-inprocess.ts). */
function inProcess(variant: Variant, root: string, jwk: string): number {
  const output = execFileSync(process.execPath, ['--import', 'tsx', inProcessScript, variant, root, String(duration)], {
    cwd: repo,
    env: { ...env, BENCH_PRIVATE_JWK: jwk },
    encoding: 'utf8',
  });
  const { requests, cpuMicros } = JSON.parse(output.trim().split('\n').pop() ?? '{}') as { requests: number; cpuMicros: number };
  return cpuMicros / requests;
}

function writeSection(markdown: string): void {
  writeResultsSection(out, 'telemetry', `<!-- telemetry:start -->\n${markdown}\n<!-- telemetry:end -->`);
}

async function main(): Promise<void> {
  const { ref, root } = extractTelemetryBaseline();
  // Both trees as they would be published (bench/library-build.ts): the same compiler for both sides.
  await buildLibraryForBench(repo);
  await buildLibraryForBench(root);
  const { privateJwk } = await createKeyPair();
  const jwk = JSON.stringify(privateJwk);
  const perVariant = (): Record<Variant, number[]> =>
    Object.fromEntries(VARIANTS.map((variant) => [variant, [] as number[]])) as Record<Variant, number[]>;
  const samples = perVariant();
  const cpu = perVariant();
  const direct = perVariant();
  for (let round = 0; round < rounds; round++) {
    const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length] as Variant);
    for (const variant of order) {
      const { port, child } = await startServer(variant, variant.startsWith('baseline') ? root : repo, jwk);
      try {
        await checkFirst(port);
        if (warmup > 0) await load(port, warmup);
        await ask(child, 'cpu-start', 'cpu-started');
        const { rps, requests } = await load(port, duration);
        const { micros } = await ask<{ micros: number }>(child, 'cpu-stop', 'cpu');
        samples[variant].push(rps);
        cpu[variant].push(micros / requests);
        console.log(`round ${round + 1} ${variant}: ${rps.toFixed(0)} req/s, ${(micros / requests).toFixed(1)} µs CPU/request`);
      } finally {
        child.kill('SIGKILL');
        children.delete(child);
      }
    }
    for (const variant of order) {
      const root_ = variant.startsWith('baseline') ? root : repo;
      direct[variant].push(inProcess(variant, root_, jwk));
      console.log(`round ${round + 1} ${variant} in-process: ${direct[variant].at(-1)?.toFixed(1)} µs CPU/call`);
    }
  }
  const med = Object.fromEntries(VARIANTS.map((variant) => [variant, median(samples[variant])])) as Record<Variant, number>;
  const cpuMed = Object.fromEntries(VARIANTS.map((variant) => [variant, median(cpu[variant])])) as Record<Variant, number>;
  const directMed = Object.fromEntries(VARIANTS.map((variant) => [variant, median(direct[variant])])) as Record<Variant, number>;
  const pct = (value: number): string => `${(value * 100).toFixed(1)} %`;
  // The goal is a cost: "≤ 10 %" means the instrumented server keeps ≥ 90 % of the other's req/s (or CPU per request).
  const verdict = (ratio: number, floor: number): string => (ratio >= floor ? 'met' : 'not met');
  const against = (variant: Variant, reference: Variant, floor: number, label: string): string => {
    const rps = med[variant] / med[reference];
    const perCPU = cpuMed[reference] / cpuMed[variant];
    const inProc = directMed[reference] / directMed[variant];
    return (
      `- ${label}: ${pct(rps)} of the req/s (${verdict(rps, floor)}), ${pct(perCPU)} by CPU per request ` +
      `(${verdict(perCPU, floor)}), ${pct(inProc)} in-process (${verdict(inProc, floor)}); goal ≥ ${pct(floor)}`
    );
  };
  const rows = VARIANTS.map(
    (variant) =>
      `| ${variant} | ${med[variant].toFixed(0)} | ${samples[variant].map((value) => value.toFixed(0)).join(', ')} | ${cpuMed[variant].toFixed(1)} | ${directMed[variant].toFixed(1)} |`,
  );
  const markdown = [
    '## OpenTelemetry cost (client credentials)',
    '',
    `Written by \`node --import tsx bench/telemetry.ts\` on ${new Date().toISOString().slice(0, 16)}Z, Node ${process.version},`,
    `${cpus().length} CPUs (shared), ${rounds} rounds × ${duration} s (+${warmup} s warm-up), ${connections} connections, v2 consumer-bound`,
    'client credentials through `sentinel.handle` on bare node:http. `baseline` is the source before telemetry',
    `(\`${ref}\`); \`no-sdk\` is this source with no OpenTelemetry SDK registered; \`sdk\` registers the SDK`,
    '(always-on sampling, batch span processor, Prometheus reader); `sdk-ratio` the same SDK sampling',
    '`ParentBased(TraceIdRatioBased(0.1))` (metrics still recorded for every request); `baseline-sdk` registers the',
    'always-on SDK in front of the baseline source, which has no instrumentation: the part of the cost that is the SDK',
    `itself. Both trees ${process.env.BENCH_LIBRARY === 'source' ? 'run from source through tsx' : 'are built with tsup, as the package is published'}. Each figure is the median of the rounds; ratios are of medians within this run.`,
    '',
    '| server | median req/s | req/s per round | median CPU µs/request | in-process CPU µs/call |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    against('no-sdk', 'baseline', 0.99, 'without an SDK vs baseline'),
    against('sdk', 'no-sdk', 0.9, 'SDK, always-on sampling, vs without'),
    against('sdk-ratio', 'no-sdk', 0.9, 'SDK, ratio 0.1 sampling, vs without'),
    against('baseline-sdk', 'baseline', 0.9, 'of which the SDK alone (baseline-sdk vs baseline)'),
    '',
    'CPU per request (whole server process, all threads, over the measured window) is the steadier figure on a shared',
    'machine: req/s moves with whatever else runs, CPU time per request much less. In-process is',
    '`sentinel.handle()` called directly (bench/telemetry-inprocess.ts): no sockets or HTTP parsing, the service alone.',
  ].join('\n');
  writeSection(markdown);
  console.log(markdown);
}

main()
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
