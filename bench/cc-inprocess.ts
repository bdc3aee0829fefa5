/**
 * CPU per consumer-bound client-credentials request, in process: `sentinel.handle()` called directly with the v2
 * token request (lazy body reader, as the Node adapters hand it over), 20 at a time. Without sockets and a load
 * generator on the same cores, what remains is the service's own work, so a change to the hot path shows up here
 * before it is lost in the HTTP rows' noise.
 *
 *   node --import tsx bench/cc-inprocess.ts [source root] [seconds] [rounds] [sync|threadpool]
 *
 * Source roots (comma-separated; default: this checkout) let one run compare another commit's `src/`
 * (`git archive <commit> src | tar -x -C /tmp/base`, with a `node_modules` link): each round is one child process
 * that loads every root and alternates batches between them; the figure is the median over rounds of CPU µs per
 * request (user + system, all threads), and for the other roots the median per-round ratio to the first.
 * CC_PROFILE_DIR=dir writes a `--cpu-prof` profile of each child.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  ACCOUNT_ID,
  CC_BODY,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_ID,
  createKeyPair,
  FORM_CONTENT_TYPE,
  issuerFor,
  privateJwkFromEnv,
  TOKEN_PATH,
} from './fixtures.js';
import { median } from './report.js';
import type { SentinelLike } from './targets/sentinel-common.js';

const CONCURRENCY = 20;
/** Batches of CONCURRENCY requests one root serves before the next root's turn. */
const BATCHES_PER_TURN = 10;

interface Core {
  createSentinel(options: Record<string, unknown>): SentinelLike;
  MemoryStore: new (options?: { max?: number }) => unknown;
}

async function load(root: string, signing: string): Promise<SentinelLike> {
  const core = (await import(pathToFileURL(`${root}/src/index.ts`).href)) as Core;
  return core.createSentinel({
    issuer: issuerFor(1),
    apps: [
      { accountId: ACCOUNT_ID, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: ['client_credentials'] },
    ],
    keys: [privateJwkFromEnv()],
    store: new core.MemoryStore({ max: 200_000 }),
    signing,
  });
}

/**
 * One child loads every root and alternates batches between them, charging each batch's CPU time to its root: on a
 * machine shared with other work, the roots then see the same contention, and their ratio is what stays steady.
 */
async function child(roots: string[], seconds: number, signing: string): Promise<void> {
  const sentinels = await Promise.all(roots.map((root) => load(root, signing)));
  const body = Buffer.from(CC_BODY);
  const request = () => ({
    method: 'POST',
    path: TOKEN_PATH,
    query: new URLSearchParams({ state: CONSUMER_ID }),
    headers: { host: '127.0.0.1', 'content-type': FORM_CONTENT_TYPE, 'content-length': String(body.length) },
    body: async () => body,
    ip: '127.0.0.1',
  });
  const batch = async (sentinel: SentinelLike): Promise<void> => {
    for (let i = 0; i < BATCHES_PER_TURN; i++) {
      const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => sentinel.handle(request())));
      if (responses.some((response) => response?.status !== 200)) throw new Error('a request was not answered 200');
    }
  };
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) for (const sentinel of sentinels) await batch(sentinel);
  const cpu = sentinels.map(() => 0);
  const until = performance.now() + seconds * 1000 * sentinels.length;
  let turns = 0;
  while (performance.now() < until) {
    for (let index = 0; index < sentinels.length; index++) {
      const start = process.cpuUsage();
      await batch(sentinels[index] as SentinelLike);
      const used = process.cpuUsage(start);
      cpu[index] = (cpu[index] ?? 0) + used.user + used.system;
    }
    turns++;
  }
  const requests = turns * BATCHES_PER_TURN * CONCURRENCY;
  process.stdout.write(`${JSON.stringify(cpu.map((micros) => micros / requests))}\n`);
}

function runChild(roots: string[], seconds: number, signing: string, jwk: string): Promise<number[]> {
  const profile = process.env.CC_PROFILE_DIR;
  const flags = profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profile}`];
  const args = [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), '--child', roots.join(','), String(seconds), signing];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { env: { ...process.env, BENCH_PRIVATE_JWK: jwk }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`child exited with ${code}`));
      resolve(JSON.parse(out.trim()) as number[]);
    });
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    await child((args[1] as string).split(','), Number(args[2]), args[3] as string);
    process.exit(0);
  }
  const here = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
  const roots = (args[0] ?? here).split(',');
  const seconds = Number(args[1] ?? 3);
  const rounds = Number(args[2] ?? 5);
  const signing = args[3] ?? 'sync';
  const jwk = JSON.stringify((await createKeyPair()).privateJwk);
  const perRoot: number[][] = roots.map(() => []);
  for (let round = 0; round < rounds; round++) {
    // Load order alternates too: the first root loaded must not always be the one with the warmer code cache.
    const order = round % 2 === 0 ? roots : [...roots].reverse();
    const figures = await runChild(order, seconds, signing, jwk);
    order.forEach((root, index) => {
      perRoot[roots.indexOf(root)]?.push(figures[index] as number);
    });
  }
  roots.forEach((root, index) => {
    const values = perRoot[index] ?? [];
    const ratio = index === 0 ? undefined : median(values.map((value, round) => value / ((perRoot[0] ?? [])[round] ?? value)));
    console.log(
      JSON.stringify({
        root,
        signing,
        medianCpuMicrosPerRequest: Number(median(values).toFixed(1)),
        ...(ratio === undefined ? {} : { medianRatioToFirst: Number(ratio.toFixed(3)) }),
        rounds: values.map((value) => Number(value.toFixed(1))),
      }),
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
