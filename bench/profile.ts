/**
 * `node --import tsx bench/profile.ts <row> [seconds] [connections]`: where a row's server spends its main thread.
 * Starts the row of bench/registry.ts (client credentials, a brand JWT exchange or a code flow) as `npm run bench`
 * does, warms it up, then records V8's sampling CPU profiler (the one `node --cpu-prof` runs, through the inspector
 * so that only the load window is recorded; 100 µs interval) while autocannon drives the row's workload, and prints
 * the main thread's busy time per request by place (sentinel-idp, node's internals by module, packages, GC, native)
 * and the top functions. The profile is left in `.tmp/profiles/` for Chrome DevTools.
 *
 * Why both this and bench/instructions.ts: the instruction count says how much work a request costs, not where it
 * goes; callgrind has no names for V8's compiled JavaScript. A sampling profile names the JavaScript, at the price
 * of noise: read its shares, not its microseconds, and compare profiles taken back to back.
 *
 * PROFILE_PERF=1 records the window with Linux `perf record -e task-clock` instead (the server started with
 * `--perf-basic-prof`, so compiled JavaScript has names): every thread's CPU time, native frames included (OpenSSL,
 * V8's builtins and GC, libuv, the kernel), counted only while a thread runs. V8's own sampler counts wall-clock
 * time on the main thread, which on a shared 2-core host includes the time it spent preempted. PROFILE_CALLGRAPH=1
 * records the call chains too (`perf record -g`; V8 keeps frame pointers), for `perf script` or `perf report -G`:
 * which JavaScript function a runtime call or an inline-cache miss came from.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';
import { Brand, brandAlgorithmOf, isJwtBearer } from './brand-assertions.js';
import { loadOptions, type WorkloadState } from './client.js';
import { createKeyPair } from './fixtures.js';
import { FlowLoad, isFlowWorkload } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import { TARGETS } from './registry.js';
import { freePort } from './server-child.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [rowName = 'sentinel-node', secondsArg = '8', connectionsArg = '20'] = process.argv.slice(2);
const repo = fileURLToPath(new URL('..', import.meta.url));
const usePerf = process.env.PROFILE_PERF === '1';
const withCallGraph = process.env.PROFILE_CALLGRAPH === '1';

const OPENSSL =
  /^(__)?(ecp_|ec_|EC_|ECDSA|EVP_|evp_|OPENSSL_|OSSL_|ossl_|BN_|bn_|sha\d|SHA\d|CRYPTO_|ERR_|OBJ_|ASN1|asn1|RAND_|rand_|do_name|x509|X509|DER_|der_|PROV|prov_|digest_|drbg|aes|ECDSA_)/;

/** The category of a perf symbol: sentinel-idp's JavaScript, node's, a package's, V8, OpenSSL, libuv, the kernel. */
export function perfPlaceOf(dso: string, symbol: string): string {
  if (dso.includes('kernel')) return 'kernel (syscalls: socket writes, futex wake-ups)';
  // OpenSSL is linked into the node binary: its symbols, not the file, tell it apart.
  if (dso.includes('libcrypto') || dso.includes('libssl') || OPENSSL.test(symbol)) return 'OpenSSL (signatures, digests)';
  if (dso.startsWith('libc') || dso.includes('libc.so') || dso.includes('ld-linux')) return 'libc (memcpy, malloc, locks)';
  if (
    symbol.startsWith('JS:') ||
    symbol.startsWith('LazyCompile:') ||
    symbol.startsWith('Function:') ||
    dso.includes('JIT') ||
    dso.startsWith('perf-')
  ) {
    if (/bench-dist|\/src\/|\/adapters\//.test(symbol)) return 'JS: sentinel-idp';
    if (/node:/.test(symbol)) return 'JS: node internals (http, streams, net, events)';
    if (/node_modules/.test(symbol)) return 'JS: packages';
    if (/\/bench\//.test(symbol)) return 'JS: bench target';
    return 'JS: other (stubs, regexps, unnamed)';
  }
  if (symbol.startsWith('Builtins_')) return 'V8 builtins (promises, JSON, strings, calls)';
  if (/Heap|Scaveng|Mark|Sweep|GC|Evacuat|Marking|Compact|Minor|Young|OldGen|Object.*Visit/.test(symbol)) return 'V8 GC';
  if (/Compil|Turbofan|Maglev|compiler::|Pipeline|Optimiz|Deoptim|Interpreter|Bytecode/.test(symbol)) return 'V8 compilers';
  if (/^uv_|uv__/.test(symbol)) return 'libuv';
  if (/node::crypto|ncrypto/.test(symbol)) return 'node crypto (C++)';
  if (/node::/.test(symbol)) return 'node (C++)';
  return 'V8 runtime and other native';
}

function summarizePerf(file: string, requests: number): void {
  const text = execFileSync(
    'perf',
    ['report', '-i', file, '--no-children', '--sort', 'dso,sym', '--stdio', '-F', 'overhead,period,dso,sym', '-t', '\t'],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const byPlace = new Map<string, number>();
  const bySymbol = new Map<string, number>();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [, periodText = '', dso = '', rawSymbol = ''] = line.split('\t');
    const period = Number(periodText.trim());
    if (!Number.isFinite(period)) continue;
    const symbol = rawSymbol.replace(/^\[[.k]\]\s*/, '').trim();
    const us = period / 1000; // task-clock periods are nanoseconds
    total += us;
    const place = perfPlaceOf(dso.trim(), symbol);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const name = `${symbol.slice(0, 110)} (${place.split(' (')[0]})`;
    bySymbol.set(name, (bySymbol.get(name) ?? 0) + us);
  }
  const rows = (map: Map<string, number>, n: number): string =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `| ${name.replace(/\|/g, '\\|')} | ${((100 * us) / total).toFixed(1)} % | ${(us / requests).toFixed(1)} |`)
      .join('\n');
  console.log(
    `\n${requests} requests; all threads' CPU ${(total / 1000).toFixed(0)} ms = ${(total / requests).toFixed(1)} µs per request\n`,
  );
  console.log(`| place | share of CPU | µs/request |\n|---|---:|---:|\n${rows(byPlace, 20)}\n`);
  console.log(`| symbol | share of CPU | µs/request |\n|---|---:|---:|\n${rows(bySymbol, 40)}`);
}

/** The place a frame belongs to: sentinel-idp (the bench build), a node module, a package, or V8's own entries. */
export function placeOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  if (url.includes('/.tmp/bench-dist/') || url.includes('/src/') || url.includes('/adapters/')) return 'sentinel-idp';
  if (url.startsWith('node:'))
    return url
      .replace(/^node:(internal\/)?/, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/');
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  return url.includes('/bench/') ? 'bench target' : url;
}

function summarize(file: string, requests: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = (byId.get(id) as ProfileNode).callFrame;
    if (functionName === '(idle)') return;
    const us = profile.timeDeltas[i] ?? 0;
    busy += us;
    const place = placeOf(functionName, url);
    const name = `${functionName || '(anonymous)'} ${url === '' ? '' : `${place}:${lineNumber + 1}`}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  });
  const rows = (map: Map<string, number>, n: number): string =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => `| ${name} | ${((100 * us) / busy).toFixed(1)} % | ${(us / requests).toFixed(1)} |`)
      .join('\n');
  console.log(`\n${requests} requests; main thread busy ${(busy / 1000).toFixed(0)} ms = ${(busy / requests).toFixed(1)} µs per request\n`);
  console.log(`| place | share of busy | µs/request |\n|---|---:|---:|\n${rows(byPlace, 16)}\n`);
  console.log(`| function | share of busy | µs/request |\n|---|---:|---:|\n${rows(byFunction, 30)}`);
}

async function main(): Promise<void> {
  const row = TARGETS.find((t) => t.name === rowName);
  if (row === undefined) throw new Error(`unknown row ${rowName}`);
  if (row.workload.startsWith('guard')) throw new Error('guard rows are not profiled here');
  await buildLibraryForBench();
  const { privateJwk, publicJwk } = await createKeyPair();
  // The exchange rows: the brand's keys reach the child through the environment, so they are made before it starts.
  const seconds = Number(secondsArg);
  const brand = isJwtBearer(row.workload) ? await Brand.create(Math.ceil(8_000 * (seconds + 4))) : undefined;
  const port = await freePort();
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [row.module, String(port)], {
    execArgv: usePerf ? ['--perf-basic-prof', '--logfile=/dev/null', '--import', 'tsx'] : ['--import', 'tsx'],
    env: { ...process.env, BENCH_PRIVATE_JWK: JSON.stringify(privateJwk), NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const reply = (): Promise<{ type: string; error?: string }> => new Promise((resolve) => child.once('message', resolve));
  const ready = await reply();
  if (ready.type !== 'ready') throw new Error(`${rowName}: ${ready.error}`);
  const load = { connections: Number(connectionsArg), timeoutSeconds: 10 };
  let options: AutocannonOptions;
  if (isFlowWorkload(row.workload)) {
    const flow = new FlowLoad(row.workload, port, load);
    console.log(await flow.prepare(publicJwk));
    await flow.warmUp(3, (o) => autocannon(o) as unknown as Promise<AutocannonResult>);
    options = await flow.measureOptions(seconds);
  } else {
    const state: WorkloadState = { port };
    if (brand !== undefined && isJwtBearer(row.workload)) state.brand = brand.assertions(brandAlgorithmOf(row.workload));
    const base = loadOptions(row.workload, state, load);
    await autocannon({ ...base, duration: 3 });
    options = { ...base, duration: seconds };
  }
  const dir = join(repo, '.tmp', 'profiles');
  mkdirSync(dir, { recursive: true });
  if (usePerf) {
    const file = join(dir, `${rowName}-${new Date().toISOString().replace(/[:.]/g, '-')}.perf.data`);
    const perf = spawn(
      'perf',
      [
        'record',
        ...(withCallGraph ? ['-g'] : []),
        '-e',
        'task-clock',
        '-F',
        '4000',
        '-p',
        String(child.pid),
        '-o',
        file,
        '--',
        'sleep',
        String(seconds),
      ],
      {
        stdio: 'ignore',
      },
    );
    const recorded = new Promise((resolve) => perf.once('exit', resolve));
    const result = await autocannon(options);
    await recorded;
    child.send({ type: 'close' });
    console.log(`${rowName}: ${result.requests.total} requests, status ${JSON.stringify(result.statusCodeStats)}; perf data ${file}`);
    summarizePerf(file, result.requests.total);
    return;
  }
  child.send({ type: 'profile-start' });
  await reply();
  const result = await autocannon(options);
  const file = join(dir, `${rowName}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  child.send({ type: 'profile-stop', file });
  await reply();
  child.send({ type: 'close' });
  console.log(`${rowName}: ${result.requests.total} requests, status ${JSON.stringify(result.statusCodeStats)}; profile ${file}`);
  summarize(file, result.requests.total);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
