/**
 * What MemoryStore's byte bounds hold in practice, each measurement in a fresh `node --expose-gc` child:
 *
 * - `interactions-short` / `interactions-longest`: N abandoned /authorize requests through `sentinel.handle()`
 *   (real interaction records), with a short `state` and with the longest `state` the interaction cap accepts;
 *   V8 heap growth per interaction and the bytes MemoryStore charges for it.
 * - `flood`: 40,000 of the longest through the default store: heap growth stays near the per-prefix budget.
 * - `overhead`: 100,000 tiny entries, to check ENTRY_OVERHEAD_BYTES against the real per-entry cost.
 *
 *   node --import tsx bench/memory-bounds.ts          # runs all, prints JSON, rewrites its own section of RESULTS.md
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeResultsSection } from './results-section.js';

const MB = 1024 * 1024;
const SECTION = 'throttle-hardening';

interface Measurement {
  scenario: string;
  count: number;
  heapGrowthMB: number;
  heapBytesPerEntry: number;
  chargedBytesPerEntry: number;
  liveEntries: number;
  chargedMB: number;
}

function settle(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function measureInChild(scenario: string): Promise<Measurement> {
  const { createSentinel, generatePrivateJWK, MemoryStore } = await import('../src/index.js');
  const { MAX_INTERACTION_CHARS } = await import('../src/authorize/state/interaction.js');
  const store = new MemoryStore();
  if (scenario === 'overhead') {
    const count = 100_000;
    const before = settle();
    for (let i = 0; i < count; i++) await store.set(`k:${i}`, 'v', 3_600_000);
    const after = settle();
    return result(scenario, count, after - before, store);
  }
  const make = (into: InstanceType<typeof MemoryStore>) =>
    createSentinel({
      issuer: 'https://id.example.com',
      keys: [generatePrivateJWK('ES256')],
      apps: [
        {
          accountId: '123456',
          clientId: 'c-1',
          clientSecret: 'bench-secret-bench-secret',
          redirectUris: ['https://app.example.com/cb'],
          name: 'Bench App',
        },
      ],
      users: { authenticate: () => null },
      store: into,
    });
  // The longest state the cap accepts for this request, found once by bisection on a throwaway store.
  let state = 'st-1';
  if (scenario !== 'interactions-short') {
    const probing = make(store);
    let low = 0;
    let high = MAX_INTERACTION_CHARS;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (await authorize(probing, 'x'.repeat(mid))) low = mid;
      else high = mid - 1;
    }
    state = 'x'.repeat(low);
  }
  const count = scenario === 'flood' ? 40_000 : 2_000;
  const fresh = new MemoryStore();
  const measured = make(fresh);
  const before = settle();
  for (let i = 0; i < count; i++) await authorize(measured, state);
  const after = settle();
  return { ...result(scenario, count, after - before, fresh), stateLength: state.length } as Measurement;
}

async function authorize(
  sentinel: { handle(request: unknown): Promise<{ status: number; headers: Record<string, unknown> } | null> },
  state: string,
): Promise<boolean> {
  const query = new URLSearchParams({ response_type: 'code', client_id: 'c-1', redirect_uri: 'https://app.example.com/cb', state });
  const response = await sentinel.handle({
    method: 'GET',
    path: '/sentinel/api/account/123456/authorize',
    query,
    headers: {},
    ip: '203.0.113.7',
  });
  return String(response?.headers.location ?? '').includes('/login?interaction=');
}

function result(scenario: string, count: number, growth: number, store: { size: number; bytes: number }): Measurement {
  const live = store.size;
  return {
    scenario,
    count,
    heapGrowthMB: Number((growth / MB).toFixed(1)),
    heapBytesPerEntry: Math.round(growth / Math.max(1, live)),
    chargedBytesPerEntry: Math.round(store.bytes / Math.max(1, live)),
    liveEntries: live,
    chargedMB: Number((store.bytes / MB).toFixed(1)),
  };
}

function runChild(scenario: string): Promise<Measurement> {
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, '--child', scenario], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`${scenario} exited with ${code}`));
      else resolve(JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as Measurement);
    });
  });
}

function section(results: Measurement[]): string {
  const rows = results.map(
    (r) =>
      `| ${r.scenario} | ${r.count} | ${(r as Measurement & { stateLength?: number }).stateLength ?? '-'} | ${r.liveEntries} | ${r.heapBytesPerEntry} | ${r.chargedBytesPerEntry} | ${r.heapGrowthMB} | ${r.chargedMB} |`,
  );
  return [
    `<!-- ${SECTION}:start -->`,
    '## MemoryStore byte bounds (bench/memory-bounds.ts)',
    '',
    `Node ${process.version}, default MemoryStore (64 MiB per prefix, 32 MiB security state), V8 heap after gc.`,
    '',
    '| scenario | requests | state chars | live entries | heap B/entry | charged B/entry | heap growth MB | charged MB |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    `<!-- ${SECTION}:end -->`,
  ].join('\n');
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  if (process.argv[2] === '--child') {
    measureInChild(process.argv[3] ?? 'overhead').then(
      (measurement) => console.log(JSON.stringify(measurement)),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  } else {
    const results: Measurement[] = [];
    for (const scenario of ['overhead', 'interactions-short', 'interactions-longest', 'flood']) results.push(await runChild(scenario));
    console.log(JSON.stringify(results, null, 2));
    const path = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
    writeResultsSection(path, SECTION, section(results));
  }
}
