/**
 * `node --import tsx bench/instructions.ts [target,…] [requests] [warm-up]`: machine instructions a server executes
 * per request, counted by valgrind's callgrind over a fixed number of requests after a warm-up. Prints a table and the
 * ratios of the pairs it ran; writes nothing.
 *
 * Why: req/s and CPU time on a shared two-core host move by 10–30 % from one round to the next, because the host's
 * other tenants take cycles and caches. An instruction count does not depend on them: the same build, workload and
 * request count give the same figure within a few percent (the JIT's timing and the sampler's draws are what is left),
 * so a change of a few percent in the service's own work shows. It is not time: a signature runs several instructions
 * per cycle, JavaScript with cache misses fewer, so the figures complement the req/s and CPU rows of `npm run bench`,
 * they do not replace them.
 *
 * Targets: the rows of bench/registry.ts with a client-credentials, brand JWT exchange or code-flow workload
 * (`ceiling`, `sentinel-node`, `sentinel-node-otel`, `exchange-sentinel-fastify`, `flow-exchange-sentinel`, …; `*`
 * suffix for a prefix).
 * Default: the HTTP ceiling, client credentials on node:http, and the three flows of both servers on memory.
 *
 * Each server runs under `valgrind --tool=callgrind --instr-atstart=no` (the warm-up runs uninstrumented, about five
 * times slower than native); `callgrind_control` switches counting on for the window only. Every thread of the server
 * process is counted (thread-pool signatures, GC and compiler threads); a Redis server is another process and is not.
 * INSTRUCTIONS_KEEP=1 keeps each server's callgrind output for `callgrind_annotate` (native functions only: V8's
 * compiled JavaScript has no symbols there).
 *
 * INSTRUCTIONS_THREADS=1 counts each thread apart (valgrind `--separate-threads=yes`) and prints the main thread's
 * share too: the JavaScript, the HTTP parsing and whatever is signed there. The compiler and GC threads are what
 * moves the totals by 20–30 % between runs; the main thread's count moves far less, so it is the one to compare
 * when a change is small.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';
import { Brand, brandAlgorithmOf, isJwtBearer } from './brand-assertions.js';
import { loadOptions, type LoadSettings, type WorkloadState } from './client.js';
import { createKeyPair, HOST } from './fixtures.js';
import { FlowLoad, flowExpectedStatus, isFlowWorkload } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import { TARGETS, type TargetSpec } from './registry.js';
import { freePort } from './server-child.js';

const DEFAULT_TARGETS = [
  'ceiling',
  'floor-cc',
  'floor-two-signatures',
  'sentinel-node',
  'flow-authorize-sentinel',
  'flow-authorize-oidc',
  'flow-exchange-sentinel',
  'flow-exchange-oidc',
  'flow-refresh-sentinel',
  'flow-refresh-oidc',
];
/** Pairs whose ratio is printed when both ran: numerator, denominator. */
const PAIRS: Array<[string, string]> = [
  ['sentinel-node', 'ceiling'],
  ['flow-authorize-oidc', 'flow-authorize-sentinel'],
  ['flow-exchange-oidc', 'flow-exchange-sentinel'],
  ['flow-refresh-oidc', 'flow-refresh-sentinel'],
  ['flow-authorize-oidc', 'flow-authorize-sentinel-node'],
  ['flow-exchange-oidc', 'flow-exchange-sentinel-node'],
  ['flow-refresh-oidc', 'flow-refresh-sentinel-node'],
  ['flow-authorize-oidc-redis', 'flow-authorize-sentinel-redis'],
  ['flow-exchange-oidc-redis', 'flow-exchange-sentinel-redis'],
  ['flow-refresh-oidc-redis', 'flow-refresh-sentinel-redis'],
  ['sentinel-node-otel', 'sentinel-node'],
  ['exchange-sentinel-fastify', 'sentinel-fastify'],
  ['exchange-es256-sentinel-fastify', 'sentinel-fastify'],
  ['exchange-sentinel-fastify', 'exchange-handwritten-fastify'],
  ['exchange-es256-sentinel-fastify', 'exchange-es256-handwritten-fastify'],
];

/**
 * Each path's floor (bench/targets/floor.ts: what no implementation can avoid) and the goal for its ratio to it:
 * a token answer with one signature against `floor-cc`, with two (access token + ID token) against
 * `floor-two-signatures`, an answer with none against the bare HTTP ceiling. The first matching prefix wins.
 */
const FLOORS: Array<[prefix: string, floor: string, goal?: number]> = [
  ['flow-authorize-sentinel', 'ceiling', 1.5],
  ['flow-exchange-sentinel', 'floor-two-signatures', 1.25],
  ['flow-refresh-sentinel', 'floor-two-signatures', 1.25],
  ['flow-authorize-', 'ceiling'],
  ['flow-exchange-', 'floor-two-signatures'],
  ['flow-refresh-', 'floor-two-signatures'],
  ['sentinel-node', 'floor-cc', 1.25],
  ['sentinel-', 'floor-cc'],
  ['handwritten-', 'floor-cc'],
  ['oidc-provider', 'floor-cc'],
  ['node-oauth-', 'floor-cc'],
];

function floorOf(name: string): { floor: string; goal?: number } | undefined {
  if (name === 'ceiling' || name.startsWith('floor-')) return undefined;
  const match = FLOORS.find(([prefix]) => name.startsWith(prefix));
  return match && { floor: match[1], ...(match[2] === undefined ? {} : { goal: match[2] }) };
}

const [namesArg, requestsArg = '2000', warmArg = '8000'] = process.argv.slice(2);
const REQUESTS = Number(requestsArg);
const WARM_UP = Number(warmArg);
/** INSTRUCTIONS_RUNS=3 counts every row three times (a fresh server each time) and reports the median. */
const RUNS = Math.max(1, Number(process.env.INSTRUCTIONS_RUNS ?? 1));
/** INSTRUCTIONS_THREADS=1: one callgrind file per thread, the main thread reported on its own as well. */
const SEPARATE_THREADS = process.env.INSTRUCTIONS_THREADS === '1';
/** Under valgrind a server answers a few hundred requests a second: generous timeouts, fewer connections. */
const LOAD: LoadSettings = { connections: 10, timeoutSeconds: 120 };

/** The rows counted here: client credentials, the brand JWT exchange and the code flows (not the guards). */
type Subject = TargetSpec;

function subjects(names: string[]): Subject[] {
  return names.flatMap((name) => {
    const matching = TARGETS.filter((t) => (name.endsWith('*') ? t.name.startsWith(name.slice(0, -1)) : t.name === name));
    if (matching.length === 0) throw new Error(`unknown target ${name}`);
    for (const target of matching) {
      const counted = target.workload === 'cc' || target.workload === 'oidc-cc' || isJwtBearer(target.workload);
      if (!counted && !isFlowWorkload(target.workload)) {
        throw new Error(`${target.name}: only client-credentials, exchange and code-flow rows are counted here`);
      }
    }
    return matching;
  });
}

/** Starts the server under callgrind with counting off; resolves once it has said it is ready. */
async function startCounted(subject: Subject, port: number, outFile: string, jwk: string): Promise<ChildProcess> {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      ...(SEPARATE_THREADS ? ['--separate-threads=yes'] : []),
      `--callgrind-out-file=${outFile}`,
      process.execPath,
      '--import',
      'tsx',
      fileURLToPath(new URL('./server.ts', import.meta.url)),
      subject.module,
      String(port),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: { ...process.env, BENCH_PRIVATE_JWK: jwk, NODE_ENV: 'production', BENCH_CHILD_MAX_S: '3600' },
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', (message: { type: string; error?: string }) =>
      message.type === 'ready' ? resolve() : reject(new Error(`${subject.name}: ${message.error}`)),
    );
    child.once('exit', (code) => reject(new Error(`${subject.name} exited with ${code}: ${stderr}`)));
  });
  return child;
}

/**
 * Requests are sent in chunks of at most this many, each prepared (codes minted) just before it, with counting off:
 * under valgrind a server is slow enough that codes minted for a whole window would expire before their turn
 * (oidc-provider's live 60 s). Every row, the code exchanges included, keeps the same chunk: each chunk opens its
 * connections anew, and the code exchanges' chunks of 100 (until 2026-11-29, from when an exchange slowed down as
 * the bench's one session gathered grants, which `session.maxGrantsPerApp` now bounds) counted a connection's setup
 * and teardown for every 10 requests and the minting's garbage inside the window: 1,779 k instructions per exchange
 * against 1,208 k in chunks of 500.
 */
const CHUNK = 500;

/** The load of one server: `next(n)` gives the options for its next `n` requests, and the status each must get. */
async function loads(subject: Subject, port: number, publicJwk: Parameters<FlowLoad['prepare']>[0], brand?: Brand) {
  if (!isFlowWorkload(subject.workload)) {
    const state: WorkloadState = { port };
    // The exchange rows: one brand JWT per request, in order (each server sees each jti once).
    if (brand !== undefined && isJwtBearer(subject.workload)) state.brand = brand.assertions(brandAlgorithmOf(subject.workload));
    const options = loadOptions(subject.workload, state, LOAD);
    return { next: async (n: number): Promise<AutocannonOptions> => ({ ...options, amount: n }), status: 200 };
  }
  const flow = new FlowLoad(subject.workload, port, LOAD);
  await flow.prepare(publicJwk);
  return { next: (n: number) => flow.amountOptions(n), status: flowExpectedStatus(subject.workload) };
}

/**
 * The requests of a chunk that got the workload's answer. Any other status fails the row; a client-side timeout or
 * socket error of at most 1 % is tolerated (under valgrind on a loaded host a connection now and then outlives the
 * generator's patience), and the count is divided by the answers only.
 */
function checkAnswers(name: string, result: AutocannonResult, status: number, expected: number): number {
  const right = result.statusCodeStats[String(status)]?.count ?? 0;
  const others = Object.entries(result.statusCodeStats).filter(([code]) => code !== String(status));
  if (others.length > 0 || right < expected * 0.99) {
    throw new Error(
      `${name}: ${right} of ${expected} answered ${status} (${JSON.stringify(result.statusCodeStats)}, ` +
        `${result.errors} errors, ${result.timeouts} timeouts)`,
    );
  }
  if (right < expected)
    console.log(`  ${name}: ${expected - right} of ${expected} requests unanswered (${result.errors} errors, ${result.timeouts} timeouts)`);
  return right;
}

/**
 * Sends a callgrind_control command and waits until the server has carried it out. Callgrind reads commands only
 * while the program runs, and an idle server sleeps in epoll: without a request to wake it, counting would start
 * late (or stop late) by however long the server slept, so the server is poked with a request (any answer will do)
 * until the command returns. The pokes add a handful of 404s to the count, against thousands of requests.
 */
async function control(pid: number, port: number, command: '--instr=on' | '--instr=off' | '--dump'): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    const proc = spawn('callgrind_control', [command, String(pid)], { stdio: 'ignore' });
    proc.once('error', reject);
    proc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${command} exited with ${code}`))));
  });
  let finished = false;
  const finish = (): void => {
    finished = true;
  };
  done.then(finish, finish);
  while (!finished) {
    await wake(port);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await done;
}

/**
 * One request that wakes the server (a 404 of the host's). The warm-up sends it around its chunks too, as
 * {@link control} does around the counted ones: a server that first saw it when counting began deoptimised its HTTP
 * path for the new request shape (V8's "wrong map" on some thirty functions of node:http and the framework) and
 * compiled them again inside the window, several hundred thousand instructions per request of a 1,000-request count.
 */
async function wake(port: number): Promise<void> {
  await fetch(`http://${HOST}:${port}/instructions-bench-wake`).then(
    (response) => response.arrayBuffer(),
    () => undefined,
  );
}

/** Instructions per request of one server, all threads and (INSTRUCTIONS_THREADS=1) the main thread alone. */
interface Count {
  total: number;
  main?: number;
}

/** Instructions per request of one server: `WARM_UP` requests uncounted, then `REQUESTS` requests counted. */
async function count(subject: Subject, jwk: string, publicJwk: Parameters<FlowLoad['prepare']>[0], brand?: Brand): Promise<Count> {
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-instructions-'));
  const port = await freePort();
  const child = await startCounted(subject, port, join(dir, 'callgrind.out'), jwk);
  try {
    const load = await loads(subject, port, publicJwk, brand);
    const pid = child.pid as number;
    let answered = 0;
    for (let sent = 0; sent < WARM_UP + REQUESTS; ) {
      const counted = sent >= WARM_UP;
      const n = Math.min(CHUNK, (counted ? WARM_UP + REQUESTS : WARM_UP) - sent);
      const options = await load.next(n);
      if (counted) await control(pid, port, '--instr=on');
      else await wake(port);
      const result = await autocannon(options);
      if (counted) await control(pid, port, '--instr=off');
      else await wake(port);
      const right = checkAnswers(`${subject.name}${counted ? '' : ' warm-up'}`, result, load.status, n);
      if (counted) answered += right;
      sent += n;
    }
    await control(pid, port, '--dump');
    let total = 0;
    let main: number | undefined;
    for (const file of readdirSync(dir)) {
      const totals = /^totals: (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
      if (!totals) continue;
      total += Number(totals[1]);
      // With --separate-threads=yes each thread dumps to its own file; the process's first thread ends in -01.
      if (file.endsWith('-01')) main = Number(totals[1]) / answered;
    }
    if (total === 0) throw new Error(`${subject.name}: callgrind counted nothing`);
    return main === undefined ? { total: total / answered } : { total: total / answered, main };
  } finally {
    child.kill('SIGKILL');
    if (process.env.INSTRUCTIONS_KEEP === '1') console.log(`  callgrind output kept in ${dir} (callgrind_annotate ${dir}/callgrind.out.1)`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('valgrind is not installed (apt-get install -y valgrind)');
  }
  // The first requests of a path run through valgrind's translator: a sign-in on a loaded host can outlast 10 s.
  process.env.BENCH_CHECK_TIMEOUT_S ??= '120';
  const chosen = subjects(namesArg ? namesArg.split(',') : DEFAULT_TARGETS);
  await buildLibraryForBench();
  const { privateJwk, publicJwk } = await createKeyPair();
  const jwk = JSON.stringify(privateJwk);
  // Before any server starts: the brand's keys reach the children through the environment.
  const brand = chosen.some((subject) => isJwtBearer(subject.workload)) ? await Brand.create(WARM_UP + REQUESTS + 10) : undefined;
  const figures = new Map<string, number>();
  console.log(
    `instructions per request: ${WARM_UP} requests of warm-up, ${REQUESTS} counted, ${LOAD.connections} connections, ` +
      `${RUNS} run(s) per row (median)`,
  );
  for (const subject of chosen) {
    const counts: Count[] = [];
    for (let run = 0; run < RUNS; run++) counts.push(await count(subject, jwk, publicJwk, brand));
    const runs = counts.map((c) => c.total);
    const perRequest = median(runs);
    figures.set(subject.name, perRequest);
    const each = RUNS > 1 ? `  (${runs.map((r) => (r / 1000).toFixed(1)).join(', ')})` : '';
    const mains = counts.flatMap((c) => (c.main === undefined ? [] : [c.main]));
    const mainThread =
      mains.length === 0
        ? ''
        : `; main thread ${(median(mains) / 1000).toFixed(1)} k${RUNS > 1 ? ` (${mains.map((m) => (m / 1000).toFixed(1)).join(', ')})` : ''}`;
    console.log(`${subject.name.padEnd(32)} ${(perRequest / 1000).toFixed(1).padStart(8)} k${each}${mainThread}`);
  }
  console.log('');
  for (const [name, perRequest] of figures) {
    const spec = floorOf(name);
    const floor = spec && figures.get(spec.floor);
    if (spec === undefined || floor === undefined) continue;
    const value = perRequest / floor;
    const goal = spec.goal === undefined ? '' : `  goal ≤ ${spec.goal}×: ${value <= spec.goal ? 'met' : 'not met'}`;
    console.log(`${name} ÷ its floor ${spec.floor}: ${value.toFixed(2)}×${goal}`);
  }
  for (const [numerator, denominator] of PAIRS) {
    const a = figures.get(numerator);
    const b = figures.get(denominator);
    if (a !== undefined && b !== undefined) console.log(`${numerator} ÷ ${denominator}: ${(a / b).toFixed(2)}×`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
