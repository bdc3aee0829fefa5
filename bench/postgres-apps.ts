/**
 * Client-credentials throughput with the app registry in PostgreSQL vs in memory:
 * `node --import tsx bench/postgres-apps.ts`. Each mode runs in its own server process (bench/postgres-apps-server.ts),
 * the modes alternate round by round so machine noise hits all of them alike, and the medians and their ratio
 * to MemoryAppStore go into this bench's own section of bench/RESULTS.md. "postgres, no cache" shows what the
 * lookup cache saves. Knobs: BENCH_DURATION (s, default 3), BENCH_WARMUP (s, 1), BENCH_ROUNDS (8),
 * BENCH_CONNECTIONS (20), POSTGRES_URL (the server to make a throwaway database on).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { hashClientSecret } from '../src/client-secrets.js';
import { PostgresAppStore } from '../src/postgres/index.js';
import { freePort } from '../test/helpers/free-port.js';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, CONSUMER_ID, FORM_CONTENT_TYPE, HOST, TOKEN_PATH } from './fixtures.js';
import { median } from './report.js';
import { writeResultsSection } from './results-section.js';

const MODES = ['memory', 'postgres', 'postgres-nocache'] as const;
type Mode = (typeof MODES)[number];
const LABELS: Record<Mode, string> = {
  memory: 'MemoryAppStore',
  postgres: 'PostgresAppStore (lookup cache on, the default)',
  'postgres-nocache': 'PostgresAppStore, cache: false (a query per request)',
};
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SERVER_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RESULTS = new URL('./RESULTS.md', import.meta.url);
const START = '<!-- postgres-registry:start -->';
const END = '<!-- postgres-registry:end -->';
const AUTHORIZATION = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function startServer(mode: Mode, databaseUrl: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(new URL('./postgres-apps-server.ts', import.meta.url), [mode, String(port)], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', (message: { type: string; error?: string }) =>
      message.type === 'ready' ? resolve() : reject(new Error(message.error)),
    );
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { port, child };
}

async function load(port: number, seconds: number): Promise<{ rps: number; non2xx: number }> {
  const result = await autocannon({
    url: `http://${HOST}:${port}${TOKEN_PATH}?state=${CONSUMER_ID}`,
    method: 'POST',
    headers: { 'content-type': FORM_CONTENT_TYPE, authorization: AUTHORIZATION },
    body: 'grant_type=client_credentials',
    connections: CONNECTIONS,
    duration: seconds,
  });
  return { rps: result.requests.average, non2xx: result.non2xx + result.errors };
}

async function main(): Promise<void> {
  const name = `sentinel_bench_${randomBytes(5).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const samples: Record<Mode, number[]> = { memory: [], postgres: [], 'postgres-nocache': [] };
  try {
    const store = new PostgresAppStore({ connectionString: databaseUrl });
    await store.migrate();
    await store.saveApp({
      accountId: ACCOUNT_ID,
      clientId: CLIENT_ID,
      clientSecretHash: hashClientSecret(CLIENT_SECRET),
      redirectUris: [],
      grantTypes: ['client_credentials'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    await store.close();
    // All servers up at once (an idle one costs nothing); short loads alternate between them, so a burst of noise
    // from the rest of the machine lands on neighbouring samples of every mode alike.
    const servers = new Map<Mode, { port: number; child: ChildProcess }>();
    try {
      for (const mode of MODES) servers.set(mode, await startServer(mode, databaseUrl));
      for (const mode of MODES) if (WARMUP > 0) await load(servers.get(mode)?.port ?? 0, WARMUP);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? MODES : [...MODES].reverse();
        for (const mode of order) {
          const { rps, non2xx } = await load(servers.get(mode)?.port ?? 0, DURATION);
          if (non2xx > 0) throw new Error(`${mode}: ${non2xx} responses were not 200`);
          samples[mode].push(rps);
          console.log(`round ${round + 1} ${mode}: ${rps.toFixed(0)} req/s`);
        }
      }
    } finally {
      for (const { child } of servers.values()) {
        child.send({ type: 'close' });
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
  } finally {
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
  // The ratio is the median of per-round ratios: each compares samples taken seconds apart.
  const rows = MODES.map((mode) => {
    const ratios = samples[mode].map((value, round) => value / (samples.memory[round] as number));
    const values = samples[mode].map((v) => v.toFixed(0)).join(', ');
    return `| ${LABELS[mode]} | ${median(samples[mode]).toFixed(0)} | ${median(ratios).toFixed(2)} | ${values} |`;
  });
  const section = [
    START,
    '## Application registry: client credentials with PostgresAppStore vs MemoryAppStore',
    '',
    `\`node --import tsx bench/postgres-apps.ts\` — ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
      `${ROUNDS} rounds × ${DURATION} s per mode (order alternating, +${WARMUP} s warm-up), ${CONNECTIONS} connections, ` +
      'POST /sentinel/api/v2/account/{id}/app/token with HTTP Basic, bare node:http, one server process per mode, ' +
      'PostgreSQL on the same machine. Ratio = median of the per-round ratios to MemoryAppStore.',
    '',
    '| AppStore | median req/s | ratio to MemoryAppStore | req/s per round |',
    '|---|---:|---:|---|',
    ...rows,
    '',
    'Every response was checked to be 200. With the lookup cache (NOTIFY-evicted, 30 s TTL) the database is not on ' +
      'the hot path; without it every request pays a query.',
    END,
  ].join('\n');
  writeResultsSection(RESULTS, 'postgres-registry', section);
  console.log(section);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
