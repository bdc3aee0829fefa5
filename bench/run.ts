/**
 * `npm run bench` — load benchmark of sentinel-idp against baselines and peers, all on 127.0.0.1 (`--help`).
 *
 * For each round (target order rotated per round), for each row of bench/registry.ts: spawn the target in a child
 * (bench/server.ts), check its first answer thoroughly (bench/client.ts, bench/flow-client.ts), warm up, then
 * measure with autocannon while the child measures its own CPU time over the window; RSS after load. Any response
 * with an unexpected status, error or timeout fails the row loudly (it is not reported as a number). Medians over
 * rounds and ratios of medians within this run go to the sections of bench/RESULTS.md (bench/report.ts).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLibraryForBench } from './library-build.js';
import autocannon, { type AutocannonResult } from 'autocannon';
import type { JWK } from 'jose';
import {
  checkFirstResponse,
  expectedStatus,
  isDevicePoll,
  type LoadSettings,
  loadOptions,
  NotAvailable,
  type WorkloadState,
} from './client.js';
import { createKeyPair, TOKENS_PER_ROUND } from './fixtures.js';
import { prepareDeviceCodes } from './device-codes.js';
import { FlowLoad, flowExpectedStatus, isFlowWorkload } from './flow-client.js';
import { type GuardTokens, mintGuardTokens } from './guard-tokens.js';
import { Brand, brandAlgorithmOf, isJwtBearer } from './brand-assertions.js';
import { TARGETS, type TargetSpec } from './registry.js';
import { prepareTokenPool } from './token-pools.js';
import { isTokenUse } from './token-use-client.js';
import { type RoundResult, type RowResult, type RunSettings, writeReport } from './report.js';

const HELP = `npm run bench [-- --help]: every row of bench/registry.ts, 3 rounds, into bench/RESULTS.md.
Run it on a quiet machine. Settings (environment):
  BENCH_SHORT=1            3 rounds × 5 s after 1 s of warm-up (a shared 2-core machine)
  BENCH_ONLY=a,b           only these rows (\`guard-*\` for a prefix); only their groups' sections are rewritten
  BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP (s), BENCH_CONNECTIONS (default 3, 10, 2, 50)
  BENCH_GUARD_PIPELINING   HTTP pipelining depth of the guard rows (default 10; 1 turns it off)
  BENCH_TOKENS             tokens per round of the UserInfo, introspection and delegation rows (default ${TOKENS_PER_ROUND})
  BENCH_RATE               pace every row at this many req/s overall (default 0: unpaced); compares CPU per
                           request at one rate (bench/report.ts); the code-flow rows do not take it
  BENCH_OUT                where to write (default bench/RESULTS.md)
  BENCH_LIBRARY=source     load the TypeScript source instead of the build (bench/library-build.ts)
  REDIS_URL                the Redis of the Redis rows (default redis://127.0.0.1:6379)
Rows: ${TARGETS.map((t) => t.name).join(', ')}`;
if (process.argv.includes('--help')) {
  console.log(HELP);
  process.exit(0);
}
import { freePort, killAll, ServerChild } from './server-child.js';

const env = process.env;
const shortRun = env.BENCH_SHORT === '1';
const settings: RunSettings = {
  rounds: positive(env.BENCH_ROUNDS, 3),
  durationSeconds: positive(env.BENCH_DURATION, shortRun ? 5 : 10),
  warmupSeconds: positive(env.BENCH_WARMUP, shortRun ? 1 : 2, true),
  connections: positive(env.BENCH_CONNECTIONS, 50),
  guardPipelining: positive(env.BENCH_GUARD_PIPELINING, 10),
  // Above a round's requests, every token of a token-use row is a first sighting (no verified-token cache hit).
  tokensPerRound: positive(env.BENCH_TOKENS, TOKENS_PER_ROUND),
  rate: positive(env.BENCH_RATE, 0, true),
};
const load: LoadSettings = {
  connections: settings.connections,
  timeoutSeconds: 10,
  guardPipelining: settings.guardPipelining,
  rate: settings.rate,
};
const only = (env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

function positive(raw: string | undefined, fallback: number, zeroOk = false): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (!zeroOk && value === 0)) throw new Error(`bad bench setting: ${raw}`);
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// One target, one round.

// The guard rows' tokens, minted once per run (before any window) when a guard row is selected.
const guardTokens: { one?: GuardTokens; many?: GuardTokens } = {};
// The brand of the exchange rows (bench/brand-assertions.ts), made when one runs.
let brand: Brand | undefined;
/**
 * Brand JWTs a round may use: its warm-up and window at 8,000 req/s, above the fastest exchange rate seen (about
 * 6,000/s). Running short replays a `jti`, which fails the row loudly.
 */
const BRAND_ASSERTIONS_PER_ROUND = Math.ceil(8_000 * (settings.warmupSeconds + settings.durationSeconds + 1));

class RowFailure extends Error {}

function unexpectedResponses(result: AutocannonResult, expected: number): string | undefined {
  const wrong = Object.entries(result.statusCodeStats)
    .filter(([status]) => Number(status) !== expected)
    .map(([status, { count }]) => `${count}× ${status}`);
  const problems = [...wrong];
  if (result.errors > 0) problems.push(`${result.errors} errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  return problems.length > 0 ? problems.join(', ') : undefined;
}

/** Runs autocannon; stops it and fails if it takes longer than `boundMs`. */
async function fire(options: Parameters<typeof autocannon>[0], boundMs: number, what: string): Promise<AutocannonResult> {
  const instance = autocannon(options);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      instance.stop();
      reject(new Error(`${what} took longer than ${boundMs} ms`));
    }, boundMs);
  });
  try {
    return await Promise.race([Promise.resolve(instance), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function measureRound(spec: TargetSpec, privateJwk: JWK, publicJwk: JWK): Promise<{ round: RoundResult; check: string }> {
  const port = await freePort();
  const server = new ServerChild(spec.module, port, privateJwk);
  try {
    try {
      await server.wait('ready', 30_000);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/not importable|does not export/.test(message)) throw new NotAvailable(message);
      throw err;
    }
    const state: WorkloadState = { port };
    if (spec.workload === 'guard-one' || spec.workload === 'guard-20k') {
      state.guard = (spec.workload === 'guard-one' ? guardTokens.one : guardTokens.many) as GuardTokens;
      state.guard.next = 0;
    }
    if (isJwtBearer(spec.workload)) state.brand = (brand as Brand).assertions(brandAlgorithmOf(spec.workload));
    // The device codes are asked for outside the window: it measures the polls alone.
    if (isDevicePoll(spec.workload)) state.device = await prepareDeviceCodes(spec.workload, port);
    // So are the tokens the UserInfo, introspection and delegation rows present, from the server's own endpoints.
    if (isTokenUse(spec.workload)) state.tokens = await prepareTokenPool(spec.workload, port, load, settings.tokensPerRound);
    const durationMs = settings.durationSeconds * 1000;
    const bound = durationMs * 3 + 30_000;
    const expected = isFlowWorkload(spec.workload) ? flowExpectedStatus(spec.workload) : expectedStatus(spec.workload);

    let check: string;
    let measureOptions: Parameters<typeof autocannon>[0];
    let flow: FlowLoad | undefined;
    if (isFlowWorkload(spec.workload)) {
      // Code flow rows (bench/flow-client.ts): codes and refresh chains are prepared outside the CPU window.
      flow = new FlowLoad(spec.workload, port, load);
      check = await flow.prepare(publicJwk);
      const warm = await flow.warmUp(settings.warmupSeconds, (options, what) => fire(options, bound, what));
      const problem = warm === undefined ? undefined : unexpectedResponses(warm, expected);
      if (problem) throw new RowFailure(`warm-up: ${problem}`);
      measureOptions = await flow.measureOptions(settings.durationSeconds);
    } else {
      check = await checkFirstResponse(spec.workload, state, publicJwk);
      measureOptions = { ...loadOptions(spec.workload, state, load), duration: settings.durationSeconds };
      // A 20,000-token row measures a resource server whose tokens are all in use: each has been presented once
      // before the window, whatever the framework's rate. Otherwise a slow framework's window would be mostly first
      // sightings and a fast one's mostly repeats, and rows of one table would measure different things.
      if (spec.workload === 'guard-20k') {
        // Shallow: the pass is outside the window, and a deep queue of first sightings only risks timeouts.
        const { duration: _timed, ...untimed } = measureOptions;
        const amount = (state.guard as GuardTokens).tokens.length;
        const pass = await fire({ ...untimed, connections: 10, pipelining: 1, amount }, bound, 'first sightings');
        const problem = unexpectedResponses(pass, expected);
        if (problem) throw new RowFailure(`first sightings: ${problem}`);
      }
      if (settings.warmupSeconds > 0) {
        const warm = await fire({ ...measureOptions, duration: settings.warmupSeconds }, bound, 'warm-up');
        const problem = unexpectedResponses(warm, expected);
        if (problem) throw new RowFailure(`warm-up: ${problem}`);
      }
    }

    await server.request('cpu-start', 'cpu-started');
    const started = process.hrtime.bigint();
    const result = await fire(measureOptions, bound, 'measurement');
    // Amount-bound runs (exchange) end on autocannon's 1-second tick: measure their window to the last response.
    const ended = flow?.lastResponseAt ?? process.hrtime.bigint();
    const elapsedS = Number(ended - started) / 1e9;
    const cpu = await server.request('cpu-stop', 'cpu');
    if (cpu.type !== 'cpu') throw new Error('bad cpu reply');
    const problem = unexpectedResponses(result, expected);
    if (problem) throw new RowFailure(`under load: ${problem}`);
    const completed = result.requests.total;
    if (completed === 0) throw new RowFailure('no request completed');
    return {
      check,
      round: {
        requests: completed,
        seconds: elapsedS,
        rps: completed / elapsedS,
        p50ms: result.latency.p50,
        p99ms: result.latency.p99,
        cpuUsPerRequest: (cpu.userUs + cpu.systemUs) / completed,
        rssMB: cpu.rss / (1024 * 1024),
      },
    };
  } finally {
    await server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  // Where the results go exists before the first row runs: a run of many minutes must not end unable to write them.
  const out = env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  mkdirSync(dirname(out), { recursive: true });
  // The library as it is published (bench/library-build.ts), built before any server starts.
  await buildLibraryForBench();
  // The whole run is bounded: rounds × targets × (warm-up + window + spawn/check slack), doubled.
  const perRowS = settings.warmupSeconds + settings.durationSeconds * 2 + 20;
  const maxS = positive(env.BENCH_MAX_SECONDS, Math.ceil(settings.rounds * TARGETS.length * perRowS * 2 + 300));
  setTimeout(() => {
    console.error(`bench: run exceeded its bound of ${maxS}s; killing servers and exiting`);
    killAll();
    process.exit(1);
  }, maxS * 1000).unref();
  // A name ending in * selects every target starting with the rest (BENCH_ONLY='guard-*').
  const matches = (pattern: string, name: string): boolean =>
    pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
  const selected = TARGETS.filter((t) => only.length === 0 || only.some((pattern) => matches(pattern, t.name)));
  const unknown = only.filter((pattern) => !TARGETS.some((t) => matches(pattern, t.name)));
  if (unknown.length > 0)
    throw new Error(`unknown BENCH_ONLY target(s): ${unknown.join(', ')}; known: ${TARGETS.map((t) => t.name).join(', ')}`);
  // The code-flow rows spend codes and refresh chains prepared by amount (bench/flow-client.ts), not by rate.
  if (settings.rate > 0 && selected.some((t) => isFlowWorkload(t.workload)))
    throw new Error('BENCH_RATE does not pace the code-flow rows (flow-*): select other rows');
  const { privateJwk, publicJwk } = await createKeyPair();
  // Before any child starts: every sentinel-idp instance of the run then trusts the brand (the v2 row's as well).
  if (selected.some((t) => isJwtBearer(t.workload))) {
    const made = await Brand.create(BRAND_ASSERTIONS_PER_ROUND);
    // Minted now rather than inside the first round (RS256 signing takes a while: bench/brand-assertions.ts).
    for (const spec of selected) if (isJwtBearer(spec.workload)) made.assertions(brandAlgorithmOf(spec.workload));
    brand = made;
  }
  if (selected.some((t) => t.workload.startsWith('guard'))) {
    guardTokens.one = mintGuardTokens(privateJwk, 1);
    guardTokens.many = mintGuardTokens(privateJwk, 20_000);
  }
  const rows = new Map<string, RowResult>(selected.map((spec) => [spec.name, { spec, status: 'ok', rounds: [] } satisfies RowResult]));
  console.log(
    `bench: ${selected.length} targets × ${settings.rounds} rounds, ${settings.warmupSeconds}s warm-up + ${settings.durationSeconds}s, ${settings.connections} connections`,
  );

  for (let round = 0; round < settings.rounds; round++) {
    const order = selected.map((_, i) => selected[(i + round) % selected.length] as TargetSpec);
    for (const spec of order) {
      const row = rows.get(spec.name) as RowResult;
      if (row.status !== 'ok') continue; // a failed or unavailable row stays so; do not spend time on it again
      const prefix = `[round ${round + 1}/${settings.rounds}] ${spec.name.padEnd(22)}`;
      try {
        const { round: result, check } = await measureRound(spec, privateJwk, publicJwk);
        row.rounds.push(result);
        row.check = check;
        console.log(
          `${prefix} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${result.p50ms} ms  p99 ${result.p99ms} ms  ${result.cpuUsPerRequest.toFixed(0)} µs CPU/req  RSS ${result.rssMB.toFixed(0)} MB`,
        );
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof NotAvailable) {
          row.status = 'not available';
          row.reason = message;
          console.log(`${prefix} not available: ${message}`);
        } else {
          row.status = 'failed';
          row.reason = message;
          console.error(`${prefix} FAILED: ${message}`);
        }
      }
    }
  }

  const groups = writeReport(out, [...rows.values()], settings, new Date(started));
  console.log(`wrote ${groups.join(', ')} into ${out}`);
  const failed = [...rows.values()].filter((r) => r.status === 'failed');
  if (failed.length > 0) {
    console.error(`${failed.length} row(s) FAILED: ${failed.map((r) => r.spec.name).join(', ')}`);
    process.exitCode = 1;
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(killAll);
