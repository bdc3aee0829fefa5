/**
 * What the page languages cost: the built-in login page rendered in the default language, in the language of an
 * `Accept-Language` header (Arabic, right to left), and in the language of the app's `ui_locales` (Japanese), with
 * the passkey button on. The service runs in a child process (Express adapter) so the load generator does not
 * share its event loop; each case runs `BENCH_ROUNDS` rounds and the median requests/s is reported with its ratio
 * to the default-language page in the same run. Writes its own section of bench/RESULTS.md.
 *
 * `node --import tsx bench/login-pages.ts` (BENCH_DURATION, BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_OUT).
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { writeResultsSection } from './results-section.js';

const ACCOUNT = '123456';
const CLIENT_ID = 'bench-client';
const TOPIC = 'login-languages';

async function serve(): Promise<void> {
  const [{ createSentinel, MemoryPasskeys }, { toExpress }, { default: express }] = await Promise.all([
    import('../src/index.js'),
    import('../adapters/express/index.js'),
    import('express'),
  ]);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const sentinel = createSentinel({
    issuer: url,
    apps: [
      {
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        clientSecret: 'bench-secret-bench-secret-0001',
        redirectUris: [`${url}/cb`],
        name: 'Bench',
      },
    ],
    users: { authenticate: () => null, passkeys: new MemoryPasskeys() },
    logger: { warn: () => {} },
  });
  const app = express();
  app.use(toExpress(sentinel));
  server.on('request', app);
  process.send?.({ url });
}

async function loginPath(url: string, extra: Record<string, string>): Promise<string> {
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: `${url}/cb`, state: 's', ...extra });
  const response = await fetch(`${url}/sentinel/api/account/${ACCOUNT}/authorize?${query}`, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (response.status !== 302 || location === null) throw new Error(`authorize answered ${response.status}`);
  return location;
}

async function measure(url: string, path: string, headers: Record<string, string>, seconds: number, connections: number): Promise<number> {
  const result = await autocannon({ url: `${url}${path}`, headers, duration: seconds, connections });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message) => resolve((message as { url: string }).url));
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const cases: { name: string; path: string; headers: Record<string, string> }[] = [
      { name: 'default language (English)', path: await loginPath(url, {}), headers: {} },
      {
        name: 'Accept-Language: ar (right to left)',
        path: await loginPath(url, {}),
        headers: { 'accept-language': 'ar-EG,ar;q=0.9,en;q=0.5' },
      },
      { name: 'ui_locales=ja', path: await loginPath(url, { ui_locales: 'ja en' }), headers: { 'accept-language': 'de' } },
    ];
    const samples = cases.map(() => [] as number[]);
    await measure(url, cases[0]?.path ?? '', {}, 1, connections); // warm-up
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, entry] of cases.entries())
        samples[index]?.push(await measure(url, entry.path, entry.headers, seconds, connections));
    }
    const medians = samples.map(median);
    const base = medians[0] ?? 1;
    const rows = cases.map(
      (entry, index) => `| ${entry.name} | ${Math.round(medians[index] ?? 0)} | ${((medians[index] ?? 0) / base).toFixed(2)}x |`,
    );
    const section = [
      `<!-- ${TOPIC}:start -->`,
      '## Login page languages',
      '',
      `GET of the built-in login page with the passkey button, Express adapter, ${connections} connections, ${rounds} rounds of ${seconds} s, median requests/s (\`bench/login-pages.ts\`).`,
      '',
      '| Page language | req/s | vs default |',
      '|---|---|---|',
      ...rows,
      `<!-- ${TOPIC}:end -->`,
    ].join('\n');
    console.log(section);
    const out = process.env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
    writeResultsSection(out, TOPIC, section);
  } finally {
    child.kill();
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
