/**
 * `node --import tsx bench/dpop-guard.ts` — the guard's throughput with DPoP-bound tokens vs Bearer tokens, in
 * the same run, against the same server.
 *
 * The server (this file in `server` mode, a child process) is sentinel-idp in Express 5 with
 * `requireAccessToken` on the token-retrieval API route, default options (MemoryStore). The runner mints one
 * Bearer and one DPoP-bound consumer token from the v2 endpoint, then alternates rounds: Bearer (the same token
 * every request) and DPoP (the bound token with a fresh proof per request: new `jti`, `iat`, `ath`, signed ES256).
 * Proofs are pre-signed before each DPoP round so the load generator spends no CPU on them during the window.
 * A non-200 answer fails the run (a proof pool running dry would show up here, not as a number).
 *
 * Writes its own section of bench/RESULTS.md between `<!-- dpop-guard:start -->` and `<!-- dpop-guard:end -->`.
 * Env: BENCH_DURATION (s, default 5), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 20), BENCH_OUT.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createSentinel, generatePrivateJWK } from '../src/index.js';
import { requireAccessToken, toExpress } from '../adapters/express/index.js';
import { ACCOUNT_ID, CLIENT_ID, CLIENT_SECRET, CONSUMER_ID, HOST } from './fixtures.js';
import { writeResultsSection } from './results-section.js';

const API_PATH = `/api/account/${ACCOUNT_ID}/consumer/${CONSUMER_ID}/brand/tokens`;
const TOKEN_PATH = `/sentinel/api/v2/account/${ACCOUNT_ID}/app/token?state=${CONSUMER_ID}`;

async function serve(port: number): Promise<void> {
  const { default: express } = await import('express');
  const sentinel = createSentinel({
    issuer: `http://${HOST}:${port}`,
    keys: [JSON.parse(process.env.BENCH_SIGNING_JWK as string)],
    apps: [
      { accountId: ACCOUNT_ID, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [], grantTypes: ['client_credentials'] },
    ],
  });
  const app = express();
  app.use(toExpress(sentinel));
  app.get('/api/account/:accountId/consumer/:consumerId/brand/tokens', requireAccessToken(sentinel), (_request, response) => {
    response.json({ ok: true });
  });
  app.listen(port, HOST, () => process.send?.({ type: 'ready' }));
  process.on('disconnect', () => process.exit(0));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A DPoP signer with its public JWK (node:crypto, synchronous: fast enough to pre-sign tens of thousands). */
function dpopSigner(): { key: KeyObject; header: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })).toString('base64url');
  return { key: createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })), header };
}

function proof(signer: { key: KeyObject; header: string }, claims: Record<string, unknown>): string {
  const input = `${signer.header}.${Buffer.from(JSON.stringify({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(input), { key: signer.key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

async function mint(base: string, dpop?: string): Promise<string> {
  const response = await fetch(`${base}${TOKEN_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop === undefined ? {} : { dpop }) },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
  });
  const body = (await response.json()) as { access_token?: string; token_type?: string };
  if (response.status !== 200 || body.access_token === undefined) throw new Error(`token request failed: ${response.status}`);
  if (body.token_type !== (dpop === undefined ? 'Bearer' : 'DPoP')) throw new Error(`unexpected token_type ${body.token_type}`);
  return body.access_token;
}

async function load(base: string, seconds: number, connections: number, headers: () => Record<string, string>): Promise<number> {
  const result = await autocannon({
    url: `${base}${API_PATH}`,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...headers() } }) }],
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) throw new Error(`${bad} requests failed (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  return result.requests.average;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

async function run(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
  const out = process.env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['server', String(port)], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_SIGNING_JWK: JSON.stringify(generatePrivateJWK('ES256')) },
  });
  const kill = (): void => {
    if (child.exitCode === null) child.kill();
  };
  process.on('exit', kill);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server did not start')), 30_000);
      child.once('message', () => {
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const signer = dpopSigner();
    const bearer = await mint(base);
    const bound = await mint(base, proof(signer, { htm: 'POST', htu: `${base}/sentinel/api/v2/account/${ACCOUNT_ID}/app/token` }));
    const ath = createHash('sha256').update(bound).digest('base64url');
    const bearerRates: number[] = [];
    const dpopRates: number[] = [];
    // Warm-up: both paths, briefly.
    await load(base, 1, connections, () => ({ authorization: `Bearer ${bearer}` }));
    for (let round = 0; round < rounds; round += 1) {
      bearerRates.push(await load(base, seconds, connections, () => ({ authorization: `Bearer ${bearer}` })));
      // Generously sized: a pool that runs dry fails the round loudly instead of reusing proofs.
      const pool = Array.from({ length: Math.ceil((bearerRates[round] as number) * seconds * 1.5) + 2000 }, () =>
        proof(signer, { htm: 'GET', htu: `${base}${API_PATH}`, ath }),
      );
      let next = 0;
      dpopRates.push(await load(base, seconds, connections, () => ({ authorization: `DPoP ${bound}`, dpop: pool[next++] as string })));
    }
    const bearerMedian = median(bearerRates);
    const dpopMedian = median(dpopRates);
    const section = [
      '<!-- dpop-guard:start -->',
      '## Guard: DPoP-bound vs Bearer tokens',
      '',
      `Written by \`node --import tsx bench/dpop-guard.ts\` on ${new Date().toISOString().slice(0, 10)}: Express 5 + \`requireAccessToken\`, ` +
        `default options (MemoryStore), ${connections} connections, ${rounds} rounds of ${seconds} s per row (alternating), ` +
        `${cpus().length} CPUs shared with other work (1-min load average ${loadavg()[0]?.toFixed(1)} at the end). DPoP requests carry a fresh ES256 proof each (pre-signed), so the ` +
        'server verifies the token, the proof signature, htm/htu/iat/ath, and records the jti in the Store.',
      '',
      '| token | req/s (median) | rounds | vs Bearer |',
      '|---|---:|---|---:|',
      `| Bearer | ${Math.round(bearerMedian)} | ${bearerRates.map(Math.round).join(', ')} | 1.00 |`,
      `| DPoP-bound | ${Math.round(dpopMedian)} | ${dpopRates.map(Math.round).join(', ')} | ${(dpopMedian / bearerMedian).toFixed(2)} |`,
      '<!-- dpop-guard:end -->',
    ].join('\n');
    writeResultsSection(out, 'dpop-guard', section);
    console.log(section);
  } finally {
    kill();
  }
}

if (process.argv[2] === 'server') {
  serve(Number(process.argv[3])).catch((error: unknown) => {
    console.error(error);
    process.exit(2);
  });
} else {
  run().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
