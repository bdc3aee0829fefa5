/**
 * `node --import tsx bench/key-signing.ts` — client-credentials req/s by where the signing key lives: the `keys`
 * option before and after the key ring was added (same code path, so this is the hot-path regression check), the
 * managed key ring, and a SoftHSM2 token through sentinel-idp/pkcs11 (ES256 and RS256, next to in-process RS256).
 *
 * Each row runs in its own child (bench/key-signing-server.ts); its first token is verified with jose against the
 * row's own JWKS; any non-200 or error during load fails the row. Medians over KEYBENCH_ROUNDS (default 3; RESULTS.md uses 5) of
 * KEYBENCH_DURATION s (default 5) at KEYBENCH_CONNECTIONS (default 16), after 1 s warm-up; rows interleave per round.
 * The "before" row needs KEYBENCH_BASE: a directory holding an export of the commit before the key ring with this
 * checkout's node_modules linked in (see bench/README.md). Writes its own section of bench/RESULTS.md, between
 * the key-management markers, and leaves the rest of the file alone.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createTestToken, softhsmProblem } from '../test/helpers/softhsm.js';
import { CC_BODY, CONSUMER_ID, FORM_CONTENT_TYPE, HOST, TOKEN_PATH } from './fixtures.js';
import { writeResultsSection } from './results-section.js';

const rounds = Number(process.env.KEYBENCH_ROUNDS ?? 3);
const duration = Number(process.env.KEYBENCH_DURATION ?? 5);
const connections = Number(process.env.KEYBENCH_CONNECTIONS ?? 16);
const base = process.env.KEYBENCH_BASE;
const here = fileURLToPath(new URL('.', import.meta.url));
const repo = fileURLToPath(new URL('..', import.meta.url));
const OUT = process.env.KEYBENCH_OUT ?? `${here}RESULTS.md`;

interface Row {
  name: string;
  label: string;
  variant: string;
  root: string;
}

const rows: Row[] = [
  ...(base !== undefined && existsSync(`${base}/src/index.ts`)
    ? [{ name: 'before', label: '`keys` option, ES256 — commit before the key ring', variant: 'static-es256', root: base }]
    : []),
  { name: 'static-es256', label: '`keys` option, ES256 (in process, thread pool)', variant: 'static-es256', root: repo },
  { name: 'ring-es256', label: '`keyRotation` ring, ES256 (MemoryStore)', variant: 'ring-es256', root: repo },
  { name: 'static-rs256', label: '`keys` option, RS256 (in process, thread pool)', variant: 'static-rs256', root: repo },
];
const hsmProblem = softhsmProblem();
let pkcs11Env: Record<string, string> = {};
if (hsmProblem === null) {
  const token = createTestToken([
    { label: 'es256', kind: 'EC-P256' },
    { label: 'rs256', kind: 'RSA-2048' },
  ]);
  process.on('exit', () => token.remove());
  pkcs11Env = {
    SOFTHSM2_CONF: process.env.SOFTHSM2_CONF as string,
    KEYBENCH_PKCS11: JSON.stringify({ library: token.library, tokenLabel: token.tokenLabel, pin: token.pin }),
  };
  rows.push(
    { name: 'pkcs11-es256', label: 'SoftHSM2 via `pkcs11Signer`, ES256', variant: 'pkcs11-es256', root: repo },
    { name: 'pkcs11-rs256', label: 'SoftHSM2 via `pkcs11Signer`, RS256', variant: 'pkcs11-rs256', root: repo },
  );
} else {
  console.warn(`[key-signing] PKCS#11 rows skipped: ${hsmProblem}`);
}

const path = `${TOKEN_PATH}?state=${CONSUMER_ID}`;
const headers = { 'content-type': FORM_CONTENT_TYPE };
const body = CC_BODY;

interface Sample {
  rps: number;
  cpuMicrosPerRequest: number;
}

async function measure(row: Row, verify: boolean): Promise<Sample> {
  const child = fork(`${here}key-signing-server.ts`, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...pkcs11Env, KEYBENCH_ROOT: row.root, KEYBENCH_VARIANT: row.variant },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (message: { port: number }) => resolve(message.port));
      child.once('exit', (code) => reject(new Error(`${row.name} exited with ${code}`)));
    });
    const url = `http://${HOST}:${port}`;
    if (verify) {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers, body });
      if (response.status !== 200) throw new Error(`${row.name}: first response ${response.status}`);
      const { access_token: token } = (await response.json()) as { access_token: string };
      const jwks = await (await fetch(`${url}/sentinel/well-known/jwks`)).json();
      await jwtVerify(token, createLocalJWKSet(jwks));
    }
    const run = (seconds: number) =>
      autocannon({ url: `${url}${path}`, method: 'POST', headers, body, connections, duration: seconds, timeout: 10 });
    const cpu = () =>
      new Promise<number>((resolve) => {
        child.once('message', (message: { usage: { user: number; system: number } }) => resolve(message.usage.user + message.usage.system));
        child.send({ type: 'cpu' });
      });
    await run(1);
    const cpuBefore = await cpu();
    const result = await run(duration);
    const cpuAfter = await cpu();
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(`${row.name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    }
    return { rps: result.requests.average, cpuMicrosPerRequest: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
  } finally {
    child.kill();
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const samples = new Map<string, number[]>(rows.map((row) => [row.name, []]));
const cpuSamples = new Map<string, number[]>(rows.map((row) => [row.name, []]));
for (let round = 0; round < rounds; round += 1) {
  const order = rows.map((_, index) => rows[(index + round) % rows.length] as Row);
  for (const row of order) {
    const value = await measure(row, round === 0);
    samples.get(row.name)?.push(value.rps);
    cpuSamples.get(row.name)?.push(value.cpuMicrosPerRequest);
    console.log(`round ${round + 1} ${row.name}: ${Math.round(value.rps)} req/s, ${Math.round(value.cpuMicrosPerRequest)} µs CPU/req`);
  }
}

const medians = new Map(rows.map((row) => [row.name, median(samples.get(row.name) ?? [])]));
const cpuMedians = new Map(rows.map((row) => [row.name, median(cpuSamples.get(row.name) ?? [])]));
const cpuReference = cpuMedians.get('static-es256') as number;
const reference = medians.get('static-es256') as number;
const ratio = (name: string, to: number) => `${((medians.get(name) as number) / to).toFixed(2)}×`;
const lines = [
  '<!-- key-management:start -->',
  '## Signing keys: key ring and PKCS#11',
  '',
  `\`node --import tsx bench/key-signing.ts\` — POST client credentials (consumer-bound token), sentinel.handle on bare node:http, ` +
    `${connections} connections, ${duration} s × ${rounds} rounds (median), ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
    'on a shared 2-core machine (ratios within the run are the figures to read).',
  '',
  '| Row | req/s (median) | range over rounds | ÷ `keys` ES256 | CPU µs/req (median) | ÷ `keys` ES256 |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map((row) => {
    const values = samples.get(row.name) ?? [];
    const range = `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;
    const cpuMedian = cpuMedians.get(row.name) as number;
    return `| ${row.label} | ${Math.round(medians.get(row.name) as number)} | ${range} | ${ratio(row.name, reference)} | ${Math.round(cpuMedian)} | ${(cpuMedian / cpuReference).toFixed(2)}× |`;
  }),
  '',
];
if (medians.has('pkcs11-rs256')) {
  lines.push(`- SoftHSM2 RS256 ÷ in-process RS256: ${ratio('pkcs11-rs256', medians.get('static-rs256') as number)}.`);
}
if (medians.has('before'))
  lines.push(`- \`keys\` ES256 after ÷ before the key ring: ${ratio('static-es256', medians.get('before') as number)}.`);
lines.push(
  '',
  "CPU µs/req is the server process's own CPU time (main thread and thread pool) per completed request: it barely " +
    'moves when other work shares the cores, so it is the figure to compare when the req/s ranges are wide. The ' +
    'ring and the `keys` option sign through the same code (an imported KeyObject on the thread pool); the ring adds ' +
    'one clock comparison per request.',
  '<!-- key-management:end -->',
);
const section = lines.join('\n');
writeResultsSection(OUT, 'key-management', section);
console.log(section);
process.exit(0);
