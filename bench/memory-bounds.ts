/**
 * `node --import tsx bench/memory-bounds.ts [N]`: what MemoryStore records cost and what its byte bounds hold. Each
 * scenario runs in a fresh `node --expose-gc` child (three GCs before and after); the table goes to stdout and to
 * the `memory` section of bench/RESULTS.md (`BENCH_OUT` elsewhere).
 *
 * - `sessions`, `interactions`: N records (default 100,000) written straight into a store with room for all of
 *   them: RSS and V8 heap growth per record. Sessions are the core's own key and value (`sessionKey`,
 *   `encodeSessionRecord`); interactions the JSON of a validated authorize request. The random ids are cut from one
 *   buffer drawn before the first reading: drawing them per record leaves freed native blocks that RSS would charge
 *   to the records. Goal: 100,000 live sessions in at most 50 MB of RSS.
 * - `overhead`: 100,000 tiny entries, to check the per-entry overhead MemoryStore charges against the real cost.
 * - `interactions-short`, `interactions-longest`: 2,000 abandoned /authorize requests through `sentinel.handle()`
 *   (real interaction records) with a short `state` and with the longest one the interaction cap accepts: heap growth
 *   per interaction beside the bytes MemoryStore charges for it.
 * - `flood`: 40,000 of the longest through the default store: heap growth stays near the per-prefix budget.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { writeResultsSection } from './results-section.js';

const MB = 1024 * 1024;
const SESSION_GOAL_MB = 50;
const SCENARIOS = ['sessions', 'interactions', 'overhead', 'interactions-short', 'interactions-longest', 'flood'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Measurement {
  scenario: Scenario;
  count: number;
  liveEntries: number;
  rssGrowthMB: number;
  heapGrowthMB: number;
  heapBytesPerEntry: number;
  chargedBytesPerEntry: number;
  stateLength?: number;
}

type Store = { set(key: string, value: string, ttlMs: number): Promise<unknown>; size: number; bytes: number };
type Sentinel = { handle(request: unknown): Promise<{ headers: Record<string, unknown> } | null> };

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

async function measure(scenario: Scenario, n: number): Promise<Measurement> {
  const { createSentinel, generatePrivateJWK, MemoryStore } = await import('../src/index.js');
  const result = (count: number, before: NodeJS.MemoryUsage, store: Store, stateLength?: number): Measurement => {
    const after = settle();
    const live = Math.max(1, store.size);
    return {
      scenario,
      count,
      liveEntries: store.size,
      rssGrowthMB: (after.rss - before.rss) / MB,
      heapGrowthMB: (after.heapUsed - before.heapUsed) / MB,
      heapBytesPerEntry: Math.round((after.heapUsed - before.heapUsed) / live),
      chargedBytesPerEntry: Math.round(store.bytes / live),
      ...(stateLength === undefined ? {} : { stateLength }),
    };
  };
  if (scenario === 'sessions' || scenario === 'interactions' || scenario === 'overhead') {
    const count = scenario === 'overhead' ? 100_000 : n;
    const make = await recordMaker(scenario, count);
    // Warm the code paths on a throwaway store first, so that what follows is only the records.
    const warm = new MemoryStore({ max: 1000 });
    for (let i = 0; i < 1000; i++) await warm.set(...make(i), 3_600_000);
    const before = settle();
    // Room for every record: this measures what records cost, not the byte budget.
    const store = scenario === 'overhead' ? new MemoryStore() : new MemoryStore({ max: Math.max(200_000, count), maxBytes: 2 ** 31 });
    for (let i = 0; i < count; i++) await store.set(...make(1000 + i), 8 * 3_600_000);
    if (store.size !== count) throw new Error(`store holds ${store.size} records, expected ${count}`);
    return result(count, before, store);
  }
  const make = (into: Store): Sentinel =>
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
      store: into as InstanceType<typeof MemoryStore>,
    }) as unknown as Sentinel;
  // The longest state the interaction cap accepts for this request, found by bisection on a throwaway store.
  let state = 'st-1';
  if (scenario !== 'interactions-short') {
    const probing = make(new MemoryStore());
    let [low, high] = [0, 65_536];
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (await authorize(probing, 'x'.repeat(mid))) low = mid;
      else high = mid - 1;
    }
    state = 'x'.repeat(low);
  }
  const count = scenario === 'flood' ? 40_000 : 2_000;
  const store = new MemoryStore();
  const measured = make(store);
  const before = settle();
  for (let i = 0; i < count; i++) await authorize(measured, state);
  return result(count, before, store, state.length);
}

/** Key and value of record `i`: a device session as the core writes it, an interaction, or a tiny entry. */
async function recordMaker(scenario: Scenario, count: number): Promise<(i: number) => [string, string]> {
  const session = (await import('../src/authorize/state/session.js')) as {
    sessionKey(sessionId: string): string;
    encodeSessionRecord(record: { userId: string; accountId: string; authTime: number; expiresAt: number }): string;
  };
  // At most 128 random bytes per record (an interaction's id, state, challenge and CSRF secret), drawn at once.
  const pool = randomBytes((count + 1000) * 128);
  let offset = 0;
  const b64 = (bytes: number): string => {
    offset += bytes;
    if (offset > pool.length) throw new Error('random pool exhausted');
    return pool.subarray(offset - bytes, offset).toString('base64url');
  };
  const now = Date.now();
  if (scenario === 'overhead') return (i) => [`k:${i}`, 'v'];
  if (scenario === 'sessions') {
    return (i) => [
      session.sessionKey(b64(32)),
      session.encodeSessionRecord({
        userId: `u-${10000 + (i % 90000)}`,
        accountId: '123456',
        authTime: Math.floor(now / 1000) - (i % 3600),
        expiresAt: now + 8 * 3600 * 1000,
      }),
    ];
  }
  return (i) => [
    `interaction:${b64(32)}`,
    JSON.stringify({
      accountId: '123456',
      clientId: randomUUID(),
      redirectUri: 'https://app.example.com/oauth/callback',
      responseType: 'code',
      state: b64(24),
      codeChallenge: b64(32),
      codeChallengeMethod: 'S256',
      csrf: b64(32),
      v: '1.0',
      createdAt: now - (i % 600) * 1000,
      expiresAt: now + 600 * 1000,
    }),
  ];
}

async function authorize(sentinel: Sentinel, state: string): Promise<boolean> {
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

function runChild(scenario: Scenario, n: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const args = ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', scenario, String(n)];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
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

function section(results: Measurement[], n: number): string {
  const sessions = results.find((r) => r.scenario === 'sessions');
  const met = sessions !== undefined && sessions.count >= 100_000 && sessions.rssGrowthMB <= SESSION_GOAL_MB;
  return [
    '<!-- memory:start -->',
    '## Memory (MemoryStore)',
    '',
    `Written by \`node --import tsx bench/memory-bounds.ts ${n}\` on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node.js ${process.version}; default MemoryStore (64 MiB per prefix, 32 MiB security state) unless the row says otherwise; growth measured after full GCs.`,
    '',
    '| scenario | records written | state chars | live entries | RSS growth MB | heap growth MB | heap B/entry | charged B/entry |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.count} | ${r.stateLength ?? '-'} | ${r.liveEntries} | ${r.rssGrowthMB.toFixed(1)} | ${r.heapGrowthMB.toFixed(1)} | ${r.heapBytesPerEntry} | ${r.chargedBytesPerEntry} |`,
    ),
    '',
    `Goal: 100,000 live sessions ≤ ${SESSION_GOAL_MB} MB RSS — ${met ? 'met' : '**not met**'}${sessions ? ` (${sessions.count}: ${sessions.rssGrowthMB.toFixed(1)} MB)` : ''}.`,
    '<!-- memory:end -->',
  ].join('\n');
}

if (process.argv[2] === '--child') {
  measure(process.argv[3] as Scenario, Number(process.argv[4])).then(
    (measurement) => console.log(JSON.stringify(measurement)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  const n = Number(process.argv[2] ?? 100_000);
  const results: Measurement[] = [];
  for (const scenario of SCENARIOS) {
    results.push(await runChild(scenario, n));
    console.log(JSON.stringify(results.at(-1)));
  }
  writeResultsSection(process.env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url)), 'memory', section(results, n));
}
