/**
 * `node --import tsx bench/independent.ts` — the hot-path ratios measured with an independent load generator: wrk
 * (C, `apt-get install wrk`) instead of autocannon (Node.js), so the figures do not depend on a generator that
 * shares the JavaScript runtime's costs with the servers.
 *
 * For each pair (sentinel-idp and its peer, the rows of bench/registry.ts), each server is started on its own through
 * bench/server.ts and prepared exactly as bench/run.ts prepares it (bench/client.ts, bench/flow-client.ts,
 * bench/guard-tokens.ts: sign-in, first answers checked, codes minted and refresh chains started outside the
 * window), warmed up, then driven by `wrk -t1 -c50 -d<window>s --latency` while the server measures its own CPU
 * over the window (IPC cpu-start/cpu-stop). One wrk thread: wrk costs about 10 µs of CPU per request (reported
 * per row from /proc), at most half a core at the fastest row's 50,000 req/s, so the second core stays with the
 * server's libuv thread pool (signing, verification) as far as two cores allow; a second wrk thread would compete
 * with it. The request scripts are under bench/wrk/ (static requests; guard tokens in turn; one pre-minted code per
 * exchange; refresh chains fed by the previous answer). Any status other than the workload's, any socket error or
 * timeout, or running out of prepared codes or chains fails the row.
 *
 * Medians of INDEPENDENT_ROUNDS (default 3) rounds of INDEPENDENT_DURATION (default 5) s windows after
 * INDEPENDENT_WARMUP (default 1) s of warm-up; within a round the two servers of a pair run back to back, the first
 * one alternating from round to round. Writes a table to stdout and the `independent` section of bench/RESULTS.md
 * (INDEPENDENT_OUT to write elsewhere). INDEPENDENT_ONLY=guard-one,exchange-redis,… runs only those pairs (ids or
 * id prefixes: `exchange` selects both stores).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JWK } from 'jose';
import { checkFirstResponse, type LoadSettings, loadOptions, type WorkloadState } from './client.js';
import { createKeyPair, FORM_CONTENT_TYPE, HOST, redirectUriFor } from './fixtures.js';
import { FlowLoad, flowExpectedStatus, isFlowWorkload, refreshBody } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import { type GuardTokens, mintGuardTokens } from './guard-tokens.js';
import { TARGETS, type TargetSpec } from './registry.js';
import { median } from './report.js';
import { writeResultsSection } from './results-section.js';
import { freePort, killAll, ServerChild } from './server-child.js';

const env = process.env;
const CONNECTIONS = 50;
/** The largest code pool of one exchange run (see prepare()). */
const MAX_CODES = 60_000;
const settings = {
  rounds: whole(env.INDEPENDENT_ROUNDS, 3),
  durationSeconds: whole(env.INDEPENDENT_DURATION, 5),
  warmupSeconds: whole(env.INDEPENDENT_WARMUP, 1, true),
};
const load: LoadSettings = { connections: CONNECTIONS, timeoutSeconds: 10 };
const scriptsDir = fileURLToPath(new URL('./wrk', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sentinel-wrk-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function whole(raw: string | undefined, fallback: number, zeroOk = false): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || (!zeroOk && value === 0))
    throw new Error(`bad setting: ${raw} (a whole number of seconds or rounds)`);
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// The pairs.

interface Pair {
  id: string;
  label: string;
  /** Row names of bench/registry.ts. */
  sentinel: string;
  peer?: string;
  /** req/s of sentinel-idp ÷ req/s of the peer must be ≥ this. */
  minRatio?: number;
  /** Without a peer: CPU µs per request must be ≤ this. */
  maxCpuUs?: number;
}

const PAIRS: readonly Pair[] = [
  { id: 'guard-one', label: 'guard, one token', sentinel: 'guard-sentinel-fastify-one', peer: 'guard-jose-fastify-one', minRatio: 2 },
  { id: 'guard-20k', label: 'guard, 20,000 tokens', sentinel: 'guard-sentinel-fastify-20k', peer: 'guard-jose-fastify-20k', minRatio: 1.2 },
  ...(['authorize', 'exchange', 'refresh'] as const).flatMap((flow) =>
    (['', '-redis'] as const).map((store) => ({
      id: `${flow}${store || '-memory'}`,
      label: `${flow}, ${store ? 'Redis' : 'memory'}`,
      sentinel: `flow-${flow}-sentinel${store}`,
      peer: `flow-${flow}-oidc${store}`,
      minRatio: flow === 'authorize' ? 4 : 3,
    })),
  ),
  { id: 'cc-node', label: 'client credentials, node:http', sentinel: 'sentinel-node', maxCpuUs: 70 },
];

function spec(name: string): TargetSpec {
  const found = TARGETS.find((t) => t.name === name);
  if (found === undefined) throw new Error(`no row ${name} in bench/registry.ts`);
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// wrk.

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  unexpected: number;
  exhausted: number;
  position: number;
  p50us: number;
  p99us: number;
  /** wrk's own CPU time over the run (all its threads), ms; -1 where /proc is missing. */
  wrkCpuMs: number;
}

/** What one wrk run sends: the URL, -H headers, the script under bench/wrk/ and its environment. */
interface WrkPlan {
  path: string;
  headers: Record<string, string>;
  script: 'static' | 'guard' | 'exchange' | 'refresh';
  scriptEnv: Record<string, string>;
  /** The exchange: how many codes were minted for the run. */
  codes?: number;
}

function wrkVersion(): string {
  const result = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (result.error !== undefined) {
    const missing = (result.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(missing ? 'wrk is not installed: apt-get install wrk (Debian package wrk)' : `wrk --version: ${result.error.message}`);
  }
  const line = `${result.stdout}${result.stderr}`.split('\n')[0] ?? '';
  return (/^wrk\s+(\S+)/.exec(line)?.[1] ?? line).trim();
}

const wrkProcesses = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of wrkProcesses) child.kill('SIGKILL');
});

function runWrk(port: number, plan: WrkPlan, seconds: number): Promise<WrkSummary> {
  const args = [
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    `--timeout`,
    `${load.timeoutSeconds}s`,
    '--latency',
    '-s',
    join(scriptsDir, `${plan.script}.lua`),
  ];
  for (const [name, value] of Object.entries(plan.headers)) args.push('-H', `${name}: ${value}`);
  args.push(`http://${HOST}:${port}${plan.path}`);
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { env: { ...env, ...plan.scriptEnv, WRK_SCRIPTS: scriptsDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    wrkProcesses.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds * 2 + 30) * 1000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      wrkProcesses.delete(child);
      const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
      if (line === undefined) {
        reject(new Error(`wrk exited (${signal ?? code}) without its summary: ${(stderr || stdout).trim().slice(-300)}`));
        return;
      }
      resolve(JSON.parse(line.slice('WRK_JSON '.length)) as WrkSummary);
    });
  });
}

class RowFailure extends Error {}

/** Every way a wrk run can have gone wrong, or undefined. `tolerateExhausted`: the exchange warm-up may run dry. */
function problems(summary: WrkSummary, tolerateExhausted = false): string | undefined {
  const found: string[] = [];
  const explained = tolerateExhausted ? summary.exhausted : 0;
  if (summary.status > explained) found.push(`${summary.status} non-2xx/3xx responses`);
  if (summary.unexpected > explained) found.push(`${summary.unexpected} responses with an unexpected status`);
  if (summary.exhausted > 0 && !tolerateExhausted) found.push(`${summary.exhausted} requests after the prepared codes/chains ran out`);
  for (const kind of ['connect', 'read', 'write', 'timeout'] as const) {
    if (summary[kind] > 0) found.push(`${summary[kind]} ${kind} errors`);
  }
  if (summary.requests === 0) found.push('no response');
  return found.length > 0 ? found.join(', ') : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// One server, one round.

interface Measurement {
  rps: number;
  cpuUsPerRequest: number;
  p50ms: number;
  p99ms: number;
  /** The load generator's CPU per request: what wrk costs the shared cores beside the server. */
  wrkCpuUsPerRequest: number;
  requests: number;
  /** The exchange: codes used of those minted for the window. */
  note?: string;
}

const guardTokens: { one?: GuardTokens; many?: GuardTokens } = {};

function linesFile(name: string, lines: string[]): string {
  const file = join(work, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function staticPlan(request: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown }): WrkPlan {
  return {
    path: request.path ?? '/',
    headers: request.headers ?? {},
    script: 'static',
    scriptEnv: { WRK_METHOD: request.method ?? 'GET', WRK_BODY: request.body === undefined ? '' : String(request.body) },
  };
}

/**
 * A prepared server: the check of its first answers, what each warm-up run sends and what the window sends, each
 * given the summary of the run before it (the exchange mints every pool from the previous run's rate; the
 * 20,000-token guard continues after the warm-up's last token). The exchange warms up twice: its first, cold run
 * reached a third of the warmed-up rate, too little to size the window's pool from.
 */
interface Prepared {
  check: string;
  warmupRuns: number;
  warmup(previous: WrkSummary | undefined): Promise<WrkPlan>;
  window(previous: WrkSummary | undefined): Promise<WrkPlan>;
}

async function prepare(target: TargetSpec, port: number, publicJwk: JWK): Promise<Prepared> {
  const workload = target.workload;
  const same = (plan: WrkPlan): Omit<Prepared, 'check'> => ({ warmupRuns: 1, warmup: async () => plan, window: async () => plan });
  if (workload === 'cc' || workload === 'guard-one' || workload === 'guard-20k') {
    const state: WorkloadState = { port };
    if (workload !== 'cc') {
      state.guard = (workload === 'guard-one' ? guardTokens.one : guardTokens.many) as GuardTokens;
      state.guard.next = 0;
    }
    const check = await checkFirstResponse(workload, state, publicJwk);
    if (workload !== 'guard-20k') {
      const request = loadOptions(workload, state, load).requests?.[0];
      if (request === undefined) throw new Error('no request template');
      return { check, ...same(staticPlan(request as Parameters<typeof staticPlan>[0])) };
    }
    const guard = state.guard as GuardTokens;
    const file = linesFile(
      'guard-20k.txt',
      guard.tokens.map((token, i) => `${guard.paths[i]} ${token}`),
    );
    const plan = (start: number): WrkPlan => ({
      path: '/',
      headers: {},
      script: 'guard',
      scriptEnv: { WRK_LINES: file, WRK_START: String(start) },
    });
    // The window continues with the token after the warm-up's last one, as autocannon's round-robin does in run.ts.
    return { check, warmupRuns: 1, warmup: async () => plan(0), window: async (warm) => plan(warm?.position ?? 0) };
  }
  if (!isFlowWorkload(workload)) throw new Error(`workload ${workload} has no wrk plan`);
  const flow = new FlowLoad(workload, port, load);
  const check = await flow.prepare(publicJwk);
  const expected = String(flowExpectedStatus(workload));
  const kind = workload.replace(/^oidc-/, '');
  if (kind === 'authorize') {
    const plan = staticPlan({ method: 'GET', path: flow.authorizePath, headers: { Cookie: flow.cookie } });
    plan.scriptEnv.WRK_EXPECT = expected;
    plan.scriptEnv.WRK_LOCATION_PREFIX = `${redirectUriFor(port)}?`;
    return { check, ...same(plan) };
  }
  const form = { 'Content-Type': FORM_CONTENT_TYPE };
  if (kind === 'refresh') {
    // prepare() started 3 chains per connection: half for the warm-up, half for the window (each wrk run holds one
    // chain per connection and strands the tokens whose answers it no longer reads when it stops).
    const tokens = flow.takeRefreshTokens();
    const half = Math.floor(tokens.length / 2);
    if (half < CONNECTIONS) throw new Error(`only ${tokens.length} refresh chains for ${CONNECTIONS} connections`);
    const marker = 'WRKREFRESHTOKEN';
    const [prefix, suffix] = refreshBody(marker).split(marker) as [string, string];
    const plan = (name: string, chains: string[]): WrkPlan => ({
      path: flow.tokenPath,
      headers: form,
      script: 'refresh',
      scriptEnv: { WRK_LINES: linesFile(name, chains), WRK_EXPECT: expected, WRK_BODY_PREFIX: prefix, WRK_BODY_SUFFIX: suffix },
    });
    const warmup = plan('refresh-warmup.txt', tokens.slice(0, half));
    const window = plan('refresh-window.txt', tokens.slice(half));
    return { check, warmupRuns: 1, warmup: async () => warmup, window: async () => window };
  }
  // The exchange: one code per request, minted before each run. The first warm-up's pool is generous; the second
  // one's four times the first's rate over the warm-up; the window's three times the second's rate × the window
  // (bench/flow-client.ts takes twice the one warm-up's rate), bounded at 60,000: the bench's MemoryStore keeps
  // 64 MiB per key prefix and evicts its least recently used codes beyond that (the first full run's MemoryStore
  // pool, some 90,000 codes at its warm-up rate, failed 18,188 exchanges: the oldest codes, evicted).
  // The codes are sent newest first, so should a store evict some, it is the ones sent last, if at all.
  let lastPool = 0;
  const mint = async (name: string, count: number): Promise<WrkPlan> => {
    const codes = await flow.mintCodes(count);
    lastPool = codes.length;
    return {
      path: flow.tokenPath,
      headers: form,
      script: 'exchange',
      scriptEnv: {
        WRK_LINES: linesFile(
          name,
          codes.reverse().map((code) => flow.exchangeBody(code)),
        ),
        WRK_EXPECT: expected,
        WRK_EXHAUSTED_BODY: flow.exchangeBody('exhausted-code-pool'),
      },
      codes: codes.length,
    };
  };
  // Codes per second of a warm-up run; one that ran dry was faster than its pool lasted: count it as twice its pool.
  const rateOf = (run: WrkSummary | undefined): number => {
    if (run === undefined) return 15_000; // no warm-up: above what either server reaches on 2 cores
    return run.exhausted > 0 ? (2 * lastPool) / settings.warmupSeconds : (run.requests - run.exhausted) / (run.durationUs / 1e6);
  };
  const sized = (previous: WrkSummary | undefined, factor: number, seconds: number): number =>
    Math.min(MAX_CODES, Math.max(CONNECTIONS * 4, Math.ceil(factor * rateOf(previous) * seconds)));
  return {
    check,
    warmupRuns: 2,
    warmup: (previous) =>
      previous === undefined
        ? mint('exchange-warmup-1.txt', Math.max(CONNECTIONS * 4, settings.warmupSeconds * 12_000))
        : mint('exchange-warmup-2.txt', sized(previous, 4, settings.warmupSeconds)),
    window: (previous) => mint('exchange-window.txt', sized(previous, 3, settings.durationSeconds)),
  };
}

async function measure(target: TargetSpec, privateJwk: JWK, publicJwk: JWK): Promise<{ result: Measurement; check: string }> {
  const port = await freePort();
  const server = new ServerChild(target.module, port, privateJwk);
  try {
    await server.wait('ready', 30_000);
    const prepared = await prepare(target, port, publicJwk);
    let warm: WrkSummary | undefined;
    for (let run = 0; settings.warmupSeconds > 0 && run < prepared.warmupRuns; run++) {
      const warmPlan = await prepared.warmup(warm);
      warm = await runWrk(port, warmPlan, settings.warmupSeconds);
      const problem = problems(warm, warmPlan.script === 'exchange');
      if (problem) throw new RowFailure(`warm-up: ${problem}`);
    }
    const plan = await prepared.window(warm);
    await server.request('cpu-start', 'cpu-started');
    const summary = await runWrk(port, plan, settings.durationSeconds);
    const cpu = await server.request('cpu-stop', 'cpu');
    if (cpu.type !== 'cpu') throw new Error('bad cpu reply');
    const problem = problems(summary);
    if (problem) throw new RowFailure(`under load: ${problem}${plan.codes === undefined ? '' : ` (${plan.codes} codes minted)`}`);
    // Rows with errors failed above, so every response counted here is a non-error response.
    const served = summary.requests;
    return {
      check: prepared.check,
      result: {
        requests: served,
        rps: served / (summary.durationUs / 1e6),
        cpuUsPerRequest: (cpu.userUs + cpu.systemUs) / served,
        p50ms: summary.p50us / 1000,
        p99ms: summary.p99us / 1000,
        wrkCpuUsPerRequest: summary.wrkCpuMs < 0 ? Number.NaN : (summary.wrkCpuMs * 1000) / served,
        ...(plan.codes === undefined ? {} : { note: `${served} of ${plan.codes} codes used` }),
      },
    };
  } finally {
    await server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The run.

interface Row {
  target: TargetSpec;
  status: 'ok' | 'failed';
  reason?: string;
  check?: string;
  rounds: Measurement[];
}

function medianOf(row: Row | undefined, metric: 'rps' | 'cpuUsPerRequest' | 'p50ms' | 'p99ms' | 'wrkCpuUsPerRequest'): number {
  return row !== undefined && row.status === 'ok' && row.rounds.length > 0 ? median(row.rounds.map((r) => r[metric])) : Number.NaN;
}

function versionOf(pkg: string): string {
  try {
    const file = fileURLToPath(new URL(`../node_modules/${pkg}/package.json`, import.meta.url));
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

interface Verdict {
  pair: Pair;
  rpsRatio: number;
  cpuRatio: number;
  verdict: string;
}

function verdictOf(pair: Pair, rows: Map<string, Row>): Verdict {
  const sentinel = rows.get(pair.sentinel);
  const peer = pair.peer === undefined ? undefined : rows.get(pair.peer);
  const rpsRatio = pair.peer === undefined ? Number.NaN : medianOf(sentinel, 'rps') / medianOf(peer, 'rps');
  const cpuRatio = pair.peer === undefined ? Number.NaN : medianOf(sentinel, 'cpuUsPerRequest') / medianOf(peer, 'cpuUsPerRequest');
  const failed = sentinel?.status !== 'ok' || (pair.peer !== undefined && peer?.status !== 'ok');
  let verdict = 'failed';
  if (!failed && pair.minRatio !== undefined) verdict = rpsRatio >= pair.minRatio ? 'met' : 'not met';
  if (!failed && pair.maxCpuUs !== undefined) verdict = medianOf(sentinel, 'cpuUsPerRequest') <= pair.maxCpuUs ? 'met' : 'not met';
  return { pair, rpsRatio, cpuRatio, verdict };
}

const fmt = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const goalOf = (pair: Pair): string =>
  pair.minRatio !== undefined ? `≥ ${pair.minRatio}× req/s` : pair.maxCpuUs !== undefined ? `≤ ${pair.maxCpuUs} CPU µs/req` : '';

function rowLine(row: Row): string {
  const perRound = row.rounds.map((r) => fmt(r.rps)).join(', ');
  const status = row.status === 'ok' ? `ok (${perRound})` : `FAILED: ${row.reason ?? ''}`;
  return `| ${row.target.label} | ${fmt(medianOf(row, 'rps'))} | ${fmt(medianOf(row, 'p50ms'), 1)} | ${fmt(medianOf(row, 'p99ms'), 1)} | ${fmt(medianOf(row, 'cpuUsPerRequest'))} | ${fmt(medianOf(row, 'wrkCpuUsPerRequest'))} | ${status.replace(/\|/g, '\\|')} |`;
}

function ratioLine(v: Verdict, rows: Map<string, Row>): string {
  if (v.pair.peer === undefined) {
    const sentinel = rows.get(v.pair.sentinel);
    const cpu = `${fmt(medianOf(sentinel, 'cpuUsPerRequest'))} µs/req`;
    return `| ${v.pair.label} | no peer (${fmt(medianOf(sentinel, 'rps'))} req/s) | no peer (${cpu}) | ${goalOf(v.pair)} | ${v.verdict} |`;
  }
  return `| ${v.pair.label} | ${fmt(v.rpsRatio, 2)}× | ${fmt(v.cpuRatio, 2)}× | ${goalOf(v.pair)} | ${v.verdict} |`;
}

async function main(): Promise<void> {
  await buildLibraryForBench();
  const version = wrkVersion();
  const startedAt = new Date();
  const load0 = loadavg();
  const only = (env.INDEPENDENT_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const pairs = PAIRS.filter((p) => only.length === 0 || only.some((o) => p.id === o || p.id.startsWith(`${o}-`)));
  if (pairs.length === 0) throw new Error(`INDEPENDENT_ONLY selects no pair; pairs: ${PAIRS.map((p) => p.id).join(', ')}`);
  const names = [...new Set(pairs.flatMap((p) => (p.peer === undefined ? [p.sentinel] : [p.sentinel, p.peer])))];
  const rows = new Map<string, Row>(names.map((name) => [name, { target: spec(name), status: 'ok', rounds: [] }]));
  // The whole run is bounded: every server of every round, warm-up + window + spawn, preparation and minting slack.
  const maxS = Math.ceil(settings.rounds * names.length * (settings.warmupSeconds + settings.durationSeconds + 60) * 2 + 120);
  setTimeout(() => {
    console.error(`independent: run exceeded its bound of ${maxS}s; killing servers and exiting`);
    killAll();
    process.exit(1);
  }, maxS * 1000).unref();

  const { privateJwk, publicJwk } = await createKeyPair();
  if (names.some((name) => spec(name).workload.startsWith('guard'))) {
    guardTokens.one = mintGuardTokens(privateJwk, 1);
    guardTokens.many = mintGuardTokens(privateJwk, 20_000);
  }
  console.log(
    `independent: wrk ${version}, ${pairs.length} pairs (${names.length} servers) × ${settings.rounds} rounds, ` +
      `${settings.warmupSeconds}s warm-up + ${settings.durationSeconds}s, wrk -t1 -c${CONNECTIONS}; load average ${load0.map((l) => l.toFixed(2)).join(' ')}`,
  );
  for (let round = 0; round < settings.rounds; round++) {
    for (const pair of pairs) {
      const sides = pair.peer === undefined ? [pair.sentinel] : round % 2 === 0 ? [pair.sentinel, pair.peer] : [pair.peer, pair.sentinel];
      for (const name of sides) {
        const row = rows.get(name) as Row;
        if (row.status !== 'ok' || row.rounds.length > round) continue; // failed, or measured already in this round
        const prefix = `[round ${round + 1}/${settings.rounds}] ${name.padEnd(32)}`;
        try {
          const { result, check } = await measure(row.target, privateJwk, publicJwk);
          row.rounds.push(result);
          row.check = check;
          console.log(
            `${prefix} ${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50ms, 1)} ms  p99 ${fmt(result.p99ms, 1)} ms  ${fmt(result.cpuUsPerRequest)} µs CPU/req (wrk ${fmt(result.wrkCpuUsPerRequest)})${result.note ? `  (${result.note})` : ''}`,
          );
        } catch (err) {
          row.status = 'failed';
          row.reason = err instanceof Error ? err.message : String(err);
          console.error(`${prefix} FAILED: ${row.reason}`);
        }
      }
    }
  }

  const verdicts = pairs.map((pair) => verdictOf(pair, rows));
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const rowTable = [
    '| server | req/s | p50 ms | p99 ms | CPU µs/req | wrk CPU µs/req | status (req/s per round) |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...[...rows.values()].map(rowLine),
  ];
  const ratioTable = [
    '| pair | sentinel-idp ÷ peer, req/s | sentinel-idp ÷ peer, CPU µs/req | goal | verdict |',
    '|---|---:|---:|---|---|',
    ...verdicts.map((v) => ratioLine(v, rows)),
  ];
  const checks = [...rows.values()].filter((r) => r.check !== undefined).map((r) => `- ${r.target.name}: ${r.check}`);
  console.log(['', ...rowTable, '', ...ratioTable, ''].join('\n'));

  const section = [
    '<!-- independent:start -->',
    '## Hot paths with an independent load generator (wrk)',
    '',
    `Written by \`node --import tsx bench/independent.ts\` on ${startedAt.toISOString()} (${seconds.toFixed(0)} s wall time): ` +
      `${settings.rounds} round(s) × ${settings.durationSeconds} s windows after ${settings.warmupSeconds} s of warm-up, ` +
      `\`wrk -t1 -c${CONNECTIONS} --timeout ${load.timeoutSeconds}s --latency\`, 127.0.0.1, ${cpus().length} cores shared by the servers and wrk; ` +
      `load average at the start ${load0.map((l) => l.toFixed(2)).join(' ')}. Tools: wrk ${version}, Node.js ${process.version}, ` +
      `oidc-provider ${versionOf('oidc-provider')}, fastify ${versionOf('fastify')}, jose ${versionOf('jose')}, ioredis ${versionOf('ioredis')}.`,
    '',
    'The same servers and preparation as `npm run bench` (bench/server.ts, bench/client.ts, bench/flow-client.ts: ' +
      'first answers checked, sessions through each sign-in, codes minted and refresh chains started before the window), ' +
      'driven by wrk (C) instead of autocannon: one wrk thread, so the second core stays with the server (its libuv thread ' +
      'pool signs and verifies); no pipelining on any row. Requests: bench/wrk/*.lua (one fixed request; 20,000 guard tokens ' +
      "in turn; a fresh code per exchange; refresh chains fed by the previous answer). req/s = responses ÷ wrk's window; any " +
      "status other than the workload's (302 sentinel-idp / 303 oidc-provider for authorize, 200 otherwise), socket error, " +
      'timeout or exhausted code pool fails the row; every authorize answer must also carry a code in its Location. ' +
      "CPU µs/req = the server process's user + system CPU over the window ÷ responses; wrk CPU µs/req = wrk's own, " +
      'what the generator takes from the same 2 cores. Medians over rounds; the two servers of a pair run back to back, the first one alternating by round. ' +
      "The same pairs driven by autocannon (the project's bench) are in the hot-paths section.",
    '',
    ...rowTable,
    '',
    ...ratioTable,
    '',
    'First answers checked before each round:',
    '',
    ...checks,
    '',
    '<!-- independent:end -->',
  ].join('\n');
  const out = env.INDEPENDENT_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  writeResultsSection(out, 'independent', section);
  console.log(`wrote the independent section of ${out}`);
  const failed = [...rows.values()].filter((r) => r.status === 'failed');
  if (failed.length > 0) {
    console.error(`${failed.length} row(s) FAILED: ${failed.map((r) => r.target.name).join(', ')}`);
    process.exitCode = 1;
  }
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(killAll);
