/**
 * OpenID Connect figures: what UserInfo costs over a plain bearer check, and what an RS256 ID token costs in the
 * code exchange compared with an ES256 one. `node --import tsx bench/oidc.ts` (knobs: OIDC_BENCH_ROUNDS,
 * OIDC_BENCH_DURATION, OIDC_BENCH_CODES, OIDC_BENCH_CONNECTIONS, OIDC_BENCH_OUT) writes its own section of
 * bench/RESULTS.md, between the `openid-connect` markers, and leaves the rest of the file alone.
 *
 * The server runs in a child process (`bench/oidc.ts serve`) on 127.0.0.1 through the Node adapter helpers; the
 * load generator (autocannon) runs here. Every row is checked once before it is measured (a 200 with the expected
 * body), and any non-2xx response during a window fails the row instead of producing a number.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import autocannon, { type AutocannonOptions } from 'autocannon';
import { median } from './report.js';
import { writeResultsSection } from './results-section.js';

const ACCOUNT = 'bench-oidc';
const CLIENT_RS = 'c0000000-0000-4000-8000-000000000001';
const CLIENT_ES = 'c0000000-0000-4000-8000-000000000002';
const SECRET = randomBytes(32).toString('base64url');
const PASSWORD = randomBytes(12).toString('base64url');
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const REDIRECT = 'https://app.example.com/cb';
const FORM = 'application/x-www-form-urlencoded';

const ROUNDS = Number(process.env.OIDC_BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.OIDC_BENCH_DURATION ?? 5);
const CODES = Number(process.env.OIDC_BENCH_CODES ?? 1500);
const CONNECTIONS = Number(process.env.OIDC_BENCH_CONNECTIONS ?? 20);
const OUT = process.env.OIDC_BENCH_OUT ?? new URL('./RESULTS.md', import.meta.url).pathname;

async function serve(): Promise<void> {
  const { createSentinel, generatePrivateJWK } = await import('../src/index.js');
  const { fromNodeRequest, writeNodeResponse } = await import('../adapters/node/index.js');
  const password = process.env.OIDC_BENCH_PASSWORD ?? '';
  const secret = process.env.OIDC_BENCH_SECRET ?? '';
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const app = { accountId: ACCOUNT, clientSecret: secret, redirectUris: [REDIRECT] };
  const sentinel = createSentinel({
    issuer: `http://127.0.0.1:${port}`,
    keys: [generatePrivateJWK('ES256'), generatePrivateJWK('RS256')],
    apps: [
      { ...app, clientId: CLIENT_RS },
      { ...app, clientId: CLIENT_ES, idTokenSignedResponseAlg: 'ES256' },
    ],
    users: {
      authenticate: async ({ username, password: given }) => (username === 'alice' && given === password ? { id: 'u-alice' } : null),
      claims: async ({ userId }) => ({ name: `User ${userId}`, email: 'alice@example.com', email_verified: true }),
    },
    codeTtl: 600,
    logger: { warn: () => {} },
  });
  server.on('request', (req, res) => {
    // Baseline: the same bearer verification (signature, claims, revocation check) without the claims hook.
    if (req.url === '/guarded') {
      sentinel.checkBearer(req.headers.authorization, { accountId: ACCOUNT }).then((result) => {
        if (!result.ok) return writeNodeResponse(res, result.response);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sub: result.claims.sub }));
      });
      return;
    }
    sentinel
      .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
      .then((response) => (response === null ? res.writeHead(404).end() : writeNodeResponse(res, response)))
      .catch(() => res.writeHead(500).end());
  });
  process.send?.({ port });
}

interface Row {
  name: string;
  label: string;
  reqPerSec: number[];
  p99: number[];
  failed?: string;
}

async function signIn(base: string): Promise<string> {
  const authorize = `${base}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({ response_type: 'code', client_id: CLIENT_RS, redirect_uri: REDIRECT, scope: 'openid' })}`;
  const toLogin = await fetch(authorize, { redirect: 'manual' });
  const loginURL = `${base}${toLogin.headers.get('location')}`;
  const page = await (await fetch(loginURL)).text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const signedIn = await fetch(loginURL, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': FORM, 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ csrf_token: csrf, username: 'alice', password: PASSWORD }),
  });
  const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  if (!cookie.startsWith('sentinel_session=')) throw new Error(`sign-in failed: ${signedIn.status}`);
  return cookie;
}

async function mintCodes(base: string, cookie: string, clientId: string, count: number): Promise<string[]> {
  const path = `${base}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    nonce: 'bench-nonce',
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  })}`;
  const codes: string[] = [];
  while (codes.length < count) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, count - codes.length) }, async () => {
        const response = await fetch(path, { redirect: 'manual', headers: { cookie } });
        const code = new URL(response.headers.get('location') ?? '', REDIRECT).searchParams.get('code');
        if (code === null) throw new Error(`authorize did not return a code (${response.status})`);
        return code;
      }),
    );
    codes.push(...batch);
  }
  return codes;
}

function exchangeBody(clientId: string, code: string): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: clientId,
    client_secret: SECRET,
    code_verifier: VERIFIER,
  }).toString();
}

/**
 * Runs autocannon. Amount-bound runs end on autocannon's 1-second tick, so their window is measured from the start
 * to the last response (recorded by `onResponse`), not to autocannon's finish time.
 */
async function measure(options: AutocannonOptions): Promise<{ reqPerSec: number; p99: number; bad: number }> {
  const startedAt = process.hrtime.bigint();
  let lastAt = startedAt;
  const requests = options.requests?.map((request) => ({
    ...request,
    onResponse: () => {
      lastAt = process.hrtime.bigint();
    },
  }));
  const result = await autocannon({ connections: CONNECTIONS, ...options, ...(requests === undefined ? {} : { requests }) });
  const bad = result.non2xx + result.errors + result.timeouts;
  const seconds = requests === undefined ? result.duration : Number(lastAt - startedAt) / 1e9;
  return { reqPerSec: result.requests.total / seconds, p99: result.latency.p99, bad };
}

async function main(): Promise<void> {
  const started = Date.now();
  const child: ChildProcess = fork(new URL(import.meta.url).pathname, ['serve'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_ENV: 'production', OIDC_BENCH_PASSWORD: PASSWORD, OIDC_BENCH_SECRET: SECRET },
  });
  const exit = () => child.kill();
  process.on('exit', exit);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (message) => resolve((message as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    const base = `http://127.0.0.1:${port}`;
    const cookie = await signIn(base);
    const [code] = await mintCodes(base, cookie, CLIENT_RS, 1);
    const first = await fetch(`${base}/sentinel/api/account/${ACCOUNT}/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: exchangeBody(CLIENT_RS, code as string),
    });
    const tokens = (await first.json()) as { access_token: string; id_token: string };
    const header = JSON.parse(Buffer.from(tokens.id_token.split('.')[0] ?? '', 'base64url').toString()) as { alg: string };
    if (first.status !== 200 || header.alg !== 'RS256') throw new Error('the first exchange did not return an RS256 ID token');
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const userinfo = await fetch(`${base}/sentinel/api/account/${ACCOUNT}/userinfo`, { headers: bearer });
    const userinfoBody = (await userinfo.json()) as { sub?: string; email?: string };
    if (userinfo.status !== 200 || userinfoBody.sub !== 'u-alice' || userinfoBody.email !== 'alice@example.com') {
      throw new Error('the first UserInfo answer is wrong');
    }

    const rows: Row[] = [
      { name: 'guarded', label: 'bearer check only (`sentinel.checkBearer`), baseline', reqPerSec: [], p99: [] },
      { name: 'userinfo', label: 'UserInfo GET (bearer check + `users.claims` + scope filter)', reqPerSec: [], p99: [] },
      { name: 'exchange-es256', label: 'code exchange, ID token ES256 (app choice)', reqPerSec: [], p99: [] },
      { name: 'exchange-rs256', label: 'code exchange, ID token RS256 (default with an RSA key)', reqPerSec: [], p99: [] },
    ];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = [...rows.slice(round % rows.length), ...rows.slice(0, round % rows.length)];
      for (const row of order) {
        if (row.failed !== undefined) continue;
        let outcome: { reqPerSec: number; p99: number; bad: number };
        if (row.name === 'guarded' || row.name === 'userinfo') {
          const path = row.name === 'guarded' ? '/guarded' : `/sentinel/api/account/${ACCOUNT}/userinfo`;
          outcome = await measure({ url: `${base}${path}`, headers: bearer, duration: DURATION });
        } else {
          const clientId = row.name === 'exchange-es256' ? CLIENT_ES : CLIENT_RS;
          const codes = await mintCodes(base, cookie, clientId, CODES);
          let next = 0;
          outcome = await measure({
            url: `${base}/sentinel/api/account/${ACCOUNT}/token`,
            method: 'POST',
            headers: { 'content-type': FORM },
            amount: codes.length,
            requests: [{ setupRequest: (request) => ({ ...request, body: exchangeBody(clientId, codes[next++] as string) }) }],
          });
        }
        if (outcome.bad > 0) row.failed = `${outcome.bad} failed responses`;
        row.reqPerSec.push(outcome.reqPerSec);
        row.p99.push(outcome.p99);
      }
    }
    writeSection(rows, Math.round((Date.now() - started) / 1000));
  } finally {
    exit();
  }
}

function writeSection(rows: Row[], seconds: number): void {
  const value = (name: string): number => median(rows.find((row) => row.name === name)?.reqPerSec ?? [Number.NaN]);
  const lines = [
    '<!-- openid-connect:start -->',
    '## OpenID Connect (bench/oidc.ts)',
    '',
    `Generated by \`node --import tsx bench/oidc.ts\` on ${new Date().toISOString()} (${seconds} s wall time); ${cpus().length} cores, load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')} at the end; Node.js ${process.version}.`,
    `Server: \`sentinel.handle\` through the Node adapter helpers on 127.0.0.1 in a child process; autocannon ${CONNECTIONS} connections in this process. ${ROUNDS} rounds, order rotated, medians. UserInfo rows: ${DURATION} s windows. Exchange rows: ${CODES} codes minted before each window (outside it), one redeemed per request, \`scope=openid email\`, nonce, PKCE. Every row was checked once first; a non-2xx response fails the row.`,
    '',
    '| row | req/s (median) | p99 ms (median) | status |',
    '|---|---:|---:|---|',
    ...rows.map((row) => `| ${row.label} | ${Math.round(median(row.reqPerSec))} | ${median(row.p99).toFixed(1)} | ${row.failed ?? 'ok'} |`),
    '',
    `Ratios (same run): UserInfo / bearer check = ${(value('userinfo') / value('guarded')).toFixed(2)}; code exchange RS256 / ES256 = ${(value('exchange-rs256') / value('exchange-es256')).toFixed(2)}.`,
    '<!-- openid-connect:end -->',
  ];
  const section = lines.join('\n');
  writeResultsSection(OUT, 'openid-connect', section);
  console.log(section);
}

if (process.argv[2] === 'serve') {
  await serve();
} else {
  await main();
  process.exit(0);
}
