/**
 * Memory cost of MemoryStore records: RSS (and V8 heap) growth for N live device sessions and N pending authorize
 * interactions, each measured in a fresh child process run with --expose-gc (gc before and after, the store kept
 * alive across the second measurement). Sessions are the core's own: key and value come from
 * `src/authorize/state/session.ts` (`sessionKey`, `encodeSessionRecord`); interactions have realistic sizes
 * (`interaction:<43-char id>`, the JSON of a validated authorize request).
 *
 * The random ids are cut from one buffer drawn before the first measurement: drawing 32 random bytes per record
 * (randomBytes, a Hash object per digest) leaves the allocator's freed native blocks in the process, which RSS
 * then charges to the records although no record holds them.
 *
 *   node --import tsx bench/memory.ts            # both measurements, prints JSON
 *   node --import tsx bench/memory.ts --write    # and rewrites the memory section of bench/RESULTS.md
 *   BENCH_MEMORY_N=100000 (default)
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export type MemoryKind = 'sessions' | 'interactions';

export interface MemoryResult {
  kind: MemoryKind;
  count: number;
  rssGrowthMB: number;
  heapGrowthMB: number;
  bytesPerRecord: number;
  sampleKeyLength: number;
  sampleValueLength: number;
}

const MB = 1024 * 1024;

interface SessionModule {
  sessionKey(sessionId: string): string;
  encodeSessionRecord(record: { userId: string; accountId: string; authTime: number; expiresAt: number }): string;
}

/** Random bytes for every id of a measurement, drawn once (see the header). */
class RandomPool {
  readonly #bytes: Buffer;
  #offset = 0;
  constructor(size: number) {
    this.#bytes = randomBytes(size);
  }
  /** `bytes` fresh random bytes, base64url, as `randomSecret()` returns them. */
  b64(bytes: number): string {
    if (this.#offset + bytes > this.#bytes.length) throw new Error('random pool exhausted');
    const slice = this.#bytes.subarray(this.#offset, this.#offset + bytes);
    this.#offset += bytes;
    return slice.toString('base64url');
  }
}

type RecordMaker = (i: number, now: number, pool: RandomPool) => [string, string];

function sessionMaker(session: SessionModule): RecordMaker {
  return (i, now, pool) => [
    session.sessionKey(pool.b64(32)),
    session.encodeSessionRecord({
      userId: `u-${10000 + (i % 90000)}`,
      accountId: '123456',
      authTime: Math.floor(now / 1000) - (i % 3600),
      expiresAt: now + 8 * 3600 * 1000,
    }),
  ];
}

function interactionRecord(i: number, now: number, pool: RandomPool): [string, string] {
  const b64 = (bytes: number) => pool.b64(bytes);
  const key = `interaction:${b64(32)}`;
  const value = JSON.stringify({
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
  });
  return [key, value];
}

async function measureInChild(kind: MemoryKind, count: number): Promise<MemoryResult> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const { MemoryStore } = await import('../src/stores/memory.js');
  const session = (await import('../src/authorize/state/session.js')) as SessionModule;
  const settle = () => {
    for (let i = 0; i < 3; i++) gc();
  };
  const now = Date.now();
  const make = kind === 'sessions' ? sessionMaker(session) : interactionRecord;
  // At most 128 random bytes per record (an interaction's id, state, challenge and CSRF secret).
  const pool = new RandomPool((count + 1000) * 128);
  // Warm the code paths (LRU, JSON, crypto) on a throwaway store first, so what follows is only the records.
  const warm = new MemoryStore({ max: 1000 });
  for (let i = 0; i < 1000; i++) {
    const [k, v] = make(i, now, pool);
    await warm.set(k, v, 3_600_000);
  }
  settle();
  const before = process.memoryUsage();
  // Room for every record: this measures what records cost, not the byte budget (bench/memory-bounds.ts does).
  const store = new MemoryStore({ max: Math.max(200_000, count), maxBytes: 2 ** 31 });
  let sample: [string, string] = ['', ''];
  for (let i = 0; i < count; i++) {
    const record = make(i, now, pool);
    if (i === 0) sample = record;
    await store.set(record[0], record[1], kind === 'sessions' ? 8 * 3_600_000 : 600_000);
  }
  settle();
  const after = process.memoryUsage();
  if (store.size !== count) throw new Error(`store holds ${store.size} records, expected ${count}`);
  const rssGrowth = after.rss - before.rss;
  return {
    kind,
    count,
    rssGrowthMB: rssGrowth / MB,
    heapGrowthMB: (after.heapUsed - before.heapUsed) / MB,
    bytesPerRecord: Math.round(rssGrowth / count),
    sampleKeyLength: sample[0].length,
    sampleValueLength: sample[1].length,
  };
}

/** The goal for the session row: 100,000 live sessions in at most this many MB of RSS growth. */
const SESSION_GOAL_MB = 50;

/**
 * The `memory` section of RESULTS.md (markers included): the full run writes it in place, and
 * `node --import tsx bench/memory.ts --write` replaces it alone through writeResultsSection (bench/report.ts writes it in a full run).
 */
export function memorySection(memory: MemoryResult[] | undefined, memoryError?: string): string {
  const lines = ['<!-- memory:start -->', '## Memory (MemoryStore)', ''];
  if (memory && memory.length > 0) {
    lines.push('| records | RSS growth | V8 heap growth | RSS bytes/record | key / value length |', '|---|---:|---:|---:|---|');
    for (const m of memory) {
      lines.push(
        `| ${m.count.toLocaleString('en-US')} ${m.kind === 'sessions' ? 'live device sessions' : 'pending interactions'} | ${m.rssGrowthMB.toFixed(1)} MB | ${m.heapGrowthMB.toFixed(1)} MB | ${m.bytesPerRecord} | ${m.sampleKeyLength} / ${m.sampleValueLength} chars |`,
      );
    }
    const sessions = memory.find((m) => m.kind === 'sessions');
    if (sessions) {
      const met = sessions.count >= 100_000 && sessions.rssGrowthMB <= SESSION_GOAL_MB;
      lines.push(
        '',
        `Goal: 100,000 live sessions ≤ ${SESSION_GOAL_MB} MB RSS — ${met ? 'met' : '**not met**'} (${sessions.count.toLocaleString('en-US')}: ${sessions.rssGrowthMB.toFixed(1)} MB RSS).`,
      );
    }
  } else {
    lines.push(memoryError ? `FAILED: ${memoryError}` : 'Not measured in this run (BENCH_MEMORY=0).');
  }
  lines.push('<!-- memory:end -->');
  return lines.join('\n');
}

/** Runs one measurement in a fresh `node --expose-gc --import tsx` child; bounded by a timeout. */
export function measureMemory(kind: MemoryKind, count: number, timeoutMs = 120_000): Promise<MemoryResult> {
  const script = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, '--child', kind, String(count)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`memory measurement (${kind}) timed out`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`memory measurement (${kind}) exited with ${code}`));
        return;
      }
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as MemoryResult);
      } catch (err) {
        reject(err);
      }
    });
  });
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  if (process.argv[2] === '--child') {
    const kind = process.argv[3] === 'interactions' ? 'interactions' : 'sessions';
    measureInChild(kind, Number(process.argv[4] ?? 100_000)).then(
      (result) => {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  } else {
    const count = Number(process.env.BENCH_MEMORY_N ?? 100_000);
    (async () => {
      const results: MemoryResult[] = [];
      for (const kind of ['sessions', 'interactions'] as const) {
        const result = await measureMemory(kind, count);
        results.push(result);
        console.log(JSON.stringify(result));
      }
      if (process.argv.includes('--write')) {
        const { writeResultsSection } = await import('./results-section.js');
        writeResultsSection(new URL('./RESULTS.md', import.meta.url), 'memory', memorySection(results));
      }
    })().catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  }
}
