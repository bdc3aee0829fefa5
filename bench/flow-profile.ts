/**
 * `node --import tsx bench/flow-profile.ts <workload> [module] [seconds]`: runs one code-flow workload (authorize,
 * exchange, refresh, or an `oidc-` one) or `cc` (consumer-bound client credentials) against one bench target (default sentinel-fastify) profiled over
 * the window only (the inspector of bench/server.ts), for `seconds` (default 8) at 50 connections after a short warm-up, then prints where the server's
 * main thread spent its time: self time by function and by package/directory. The profile is left in
 * bench/profiles/ (not committed) for a closer look in Chrome DevTools.
 *
 * BENCH_PERF=<file> records the window with Linux `perf` instead (bench/perf-record.ts): CPU cycles of the main thread,
 * native frames included, where the inspector's wall-clock samples also count the time it spends preempted.
 */
import { fork } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonOptions } from 'autocannon';
import { loadOptions } from './client.js';
import { createKeyPair } from './fixtures.js';
import { FlowLoad, type FlowWorkload, isFlowWorkload } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import { PERF_NODE_FLAGS, printPerfReport, startPerf } from './perf-record.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [workload = 'exchange', module = 'sentinel-fastify', secondsArg = '8'] = process.argv.slice(2);
const dir = fileURLToPath(new URL('./profiles/', import.meta.url));
const perfFile = process.env.BENCH_PERF;

function where(url: string): string {
  if (url === '') return '(native / idle / GC)';
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const repo = url.indexOf('/src/') !== -1 ? url.slice(url.indexOf('/src/') + 1) : url.slice(url.indexOf('/adapters/') + 1);
  return repo;
}

function summarize(file: string, requests: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id) as ProfileNode;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    total += us;
    const place = where(url);
    const name = `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  console.log(`busy (non-idle) main-thread time: ${(total / 1000).toFixed(0)} ms, ${(total / requests).toFixed(0)} µs per request`);
  console.log(`by place:\n${top(byPlace, 15)}\nby function:\n${top(byFunction, 30)}`);
}

async function main(): Promise<void> {
  if (workload !== 'cc' && !isFlowWorkload(workload)) throw new Error(`unknown workload ${workload}`);
  await buildLibraryForBench();
  const { privateJwk, publicJwk } = await createKeyPair();
  const port = 46000 + (process.pid % 1000);
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [module, String(port)], {
    execArgv: perfFile === undefined ? ['--import', 'tsx'] : [...PERF_NODE_FLAGS, '--import', 'tsx'],
    env: { ...process.env, BENCH_PRIVATE_JWK: JSON.stringify(privateJwk), NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', (m: { type: string; error?: string }) => (m.type === 'ready' ? resolve() : reject(new Error(m.error))));
  });
  let options: AutocannonOptions;
  if (workload === 'cc') {
    // Consumer-bound client credentials: one static request, as the `cc` rows of bench/run.ts send it.
    const load = { connections: 50, timeoutSeconds: 10 };
    const state = { port } as Parameters<typeof loadOptions>[1];
    await autocannon({ ...loadOptions('cc', state, load), duration: 2 });
    options = { ...loadOptions('cc', state, load), duration: Number(secondsArg) };
  } else {
    const flow = new FlowLoad(workload as FlowWorkload, port, { connections: 50, timeoutSeconds: 10 });
    console.log(await flow.prepare(publicJwk));
    await flow.warmUp(2, async (flowOptions) => autocannon(flowOptions));
    options = await flow.measureOptions(Number(secondsArg));
  }
  const reply = () => new Promise<void>((resolve) => child.once('message', () => resolve()));
  // perf's window is the load's; it needs the server's pid, which a forked child always has.
  const recording = perfFile === undefined ? undefined : startPerf(child.pid as number, Number(secondsArg), perfFile);
  if (recording === undefined) {
    const started = reply();
    child.send({ type: 'profile-start' });
    await started;
  }
  const result = await autocannon(options);
  await recording;
  console.log(`${result.requests.total} requests, status ${JSON.stringify(result.statusCodeStats)}`);
  if (perfFile !== undefined) {
    child.send({ type: 'close' });
    printPerfReport(perfFile);
    return;
  }
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${module}-${workload}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  const stopped = reply();
  child.send({ type: 'profile-stop', file });
  await stopped;
  child.send({ type: 'close' });
  console.log(`profile: ${file}`);
  summarize(file, result.requests.total);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
