/**
 * `npm run soak`: two sentinel-idp instances sharing one private Redis under mixed load for a configurable time,
 * then what an operator needs to size Redis: memory slopes (process and Redis), Redis keys per live grant, and
 * measured bytes per live grant, per device session and per pending interaction.
 *
 *   npm run soak                       # 60 s, 8 virtual users
 *   npm run soak -- --seconds 540 --users 16
 *
 * The two instances live in this process (each with its own ioredis client, RedisStore and node:http server on its
 * own port); every flow alternates between them, so codes, sessions and refresh tokens cross instances. The Redis is
 * a private `redis-server` on a spare port, started and killed here. Every response is checked: a 5xx, a code
 * redeemed twice or a rotated refresh token accepted again is counted and printed as a failure.
 *
 * The figures go to stdout and to bench/RESULTS.md between the `store` markers (only that section is rewritten).
 */
import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { fromNodeRequest, writeNodeResponse } from '../adapters/node/index.js';
import { createSentinel, generatePrivateJWK, type Sentinel } from '../src/index.js';
import { RedisStore, redisClientOptions } from '../src/stores/redis.js';
import { writeResultsSection } from './results-section.js';
import { freePort } from './server-child.js';

const args = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const index = args.indexOf(`--${name}`);
  const value = index === -1 ? process.env[`SOAK_${name.toUpperCase()}`] : args[index + 1];
  const parsed = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number`);
  return parsed;
}
const SECONDS = option('seconds', 60);
const USERS = option('users', 8);
const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
const ACCOUNT = 'soak-account';
const CLIENT_ID = 'c0ffee00-0000-4000-8000-000000000001';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const PASSWORD = randomBytes(12).toString('base64url');
const REDIRECT_URI = 'https://app.example.com/cb';
const ISSUER = 'http://localhost';
const PREFIX = 'soak:';
const RESULTS = process.env.BENCH_OUT ?? new URL('./RESULTS.md', import.meta.url);

async function startRedis(): Promise<{ port: number; stop(): Promise<void> }> {
  if (!existsSync(REDIS_SERVER)) throw new Error(`no redis-server at ${REDIS_SERVER} (set REDIS_SERVER)`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-soak-'));
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  return {
    port,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Instance {
  sentinel: Sentinel;
  client: Redis;
  server: Server;
  base: string;
}

async function startInstance(redisPort: number, keys: ReturnType<typeof generatePrivateJWK>[]): Promise<Instance> {
  const client = new Redis(`redis://127.0.0.1:${redisPort}`, redisClientOptions());
  client.on('error', () => {});
  const sentinel = createSentinel({
    issuer: ISSUER,
    keys,
    store: new RedisStore(client, { prefix: PREFIX }),
    apps: [
      {
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [REDIRECT_URI],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
    ],
    users: { authenticate: async ({ username, password }) => (password === PASSWORD ? { id: `user-${username}` } : null) },
    // The soak signs in the same few users over and over from one address; throttling is measured elsewhere.
    throttle: { maxFailures: 1000, maxFailuresPerIp: 100_000, windowSeconds: 60 },
    // Every sign-in starts from this one address too: the per-address bound on sign-ins started (default 1000 per
    // interactionTtl) would answer the rest 429 before their login page, within the first minute of a run.
    interactionsPerAddress: 1_000_000_000,
    logger: { warn: () => {} },
    onError: (error) => {
      failures.serverErrors.push(error instanceof Error ? error.message : String(error));
    },
  });
  const server = createServer((req, res) => {
    sentinel
      .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
      .then((response) => {
        if (response === null) {
          res.writeHead(404).end();
          return;
        }
        writeNodeResponse(res, response);
      })
      .catch(() => res.writeHead(500).end());
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { sentinel, client, server, base: `http://127.0.0.1:${port}` };
}

const failures = {
  fiveHundreds: 0,
  doubleRedemptions: 0,
  reuseAccepted: 0,
  /** Every unexpected status is counted; the first 20 are listed. */
  unexpectedCount: 0,
  unexpected: [] as string[],
  serverErrors: [] as string[],
};
const counts = { requests: 0, signIns: 0, exchanges: 0, refreshes: 0, revokes: 0, abandoned: 0, consumerTokens: 0, introspections: 0 };

async function send(url: string, init: RequestInit = {}): Promise<Response> {
  counts.requests++;
  const response = await fetch(url, { redirect: 'manual', ...init });
  if (response.status >= 500) failures.fiveHundreds++;
  return response;
}

function form(body: Record<string, string>): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() };
}

function expectStatus(step: string, response: Response, status: number): void {
  if (response.status === status) return;
  failures.unexpectedCount++;
  if (failures.unexpected.length < 20) failures.unexpected.push(`${step}: ${response.status}`);
}

/** The browser part: authorize, login page, login POST; the code of the 303 back to the app. */
async function signIn(instance: Instance, user: string): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    state: 's',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const authorize = await send(`${instance.base}/sentinel/api/account/${ACCOUNT}/authorize?${query}`);
  // To the login page; anything else (a 429 of a throttle) is named here, not as the login post it breaks.
  expectStatus('authorize', authorize, 302);
  const login = new URL(authorize.headers.get('location') ?? '', instance.base);
  const page = await send(`${instance.base}${login.pathname}${login.search}`);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const posted = await send(
    `${instance.base}${login.pathname}${login.search}`,
    form({ csrf_token: csrf, username: user, password: PASSWORD }),
  );
  expectStatus('login', posted, 303);
  counts.signIns++;
  const code = new URL(posted.headers.get('location') ?? 'x:', 'http://x').searchParams.get('code') ?? '';
  return { code, verifier };
}

const tokenPath = (instance: Instance) => `${instance.base}/sentinel/api/account/${ACCOUNT}/token`;

/** One virtual user: sign in, exchange, refresh a few times across instances, sometimes revoke, sometimes abandon. */
async function virtualUser(index: number, instances: [Instance, Instance], until: number): Promise<void> {
  let turn = index;
  const next = (): Instance => instances[turn++ % 2] as Instance;
  for (let round = index; Date.now() < until; round += USERS) {
    const user = `u${index}-${turn % 50}`;
    const { code, verifier } = await signIn(next(), user);
    const redemption = form({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
    const exchanged = await send(tokenPath(next()), redemption);
    expectStatus('exchange', exchanged, 200);
    counts.exchanges++;
    // The same code again, at the other instance: it must be refused.
    const replay = await send(tokenPath(next()), redemption);
    if (replay.status === 200) failures.doubleRedemptions++;
    let tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
    for (let i = 0; i < 3 && tokens.refresh_token !== undefined; i++) {
      const previous = tokens.refresh_token;
      const rotated = await send(
        tokenPath(next()),
        form({ grant_type: 'refresh_token', refresh_token: previous, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
      );
      expectStatus('refresh', rotated, 200);
      counts.refreshes++;
      tokens = (await rotated.json()) as typeof tokens;
      const reuse = await send(
        tokenPath(next()),
        form({ grant_type: 'refresh_token', refresh_token: previous, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
      );
      if (reuse.status === 200) failures.reuseAccepted++;
    }
    const introspected = await send(
      `${tokenPath(next())}/introspect`,
      form({ token: tokens.access_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
    );
    expectStatus('introspect', introspected, 200);
    counts.introspections++;
    if (round % 3 === 0) {
      // A third of the grants end by revocation; the rest stay live (what sizing is about).
      const revoked = await send(
        `${tokenPath(next())}/revoke`,
        form({ token: tokens.refresh_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
      );
      expectStatus('revoke', revoked, 200);
      counts.revokes++;
    }
    if (round % 4 === 0) {
      // An abandoned authorize: a pending interaction nobody completes.
      await send(
        `${next().base}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI })}`,
      );
      counts.abandoned++;
    }
    const consumer = await send(
      `${next().base}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${'0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b'}`,
      form({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
    );
    expectStatus('client_credentials', consumer, 200);
    counts.consumerTokens++;
  }
}

/** Least-squares slope of `y` over `x`. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Keys per type (`grant`, `code`, `session`, …) and the mean MEMORY USAGE of up to 300 keys of each type. */
async function census(client: Redis): Promise<Map<string, { keys: number; meanBytes: number }>> {
  const byType = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [nextCursor, keys] = await client.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = nextCursor;
    for (const key of keys) {
      const type = key.slice(PREFIX.length).split(':')[0] as string;
      const list = byType.get(type) ?? [];
      list.push(key);
      byType.set(type, list);
    }
  } while (cursor !== '0');
  const result = new Map<string, { keys: number; meanBytes: number }>();
  for (const [type, keys] of byType) {
    const sample = keys.slice(0, 300);
    let total = 0;
    for (const key of sample) total += Number((await client.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
    result.set(type, { keys: keys.length, meanBytes: Math.round(total / Math.max(1, sample.length)) });
  }
  return result;
}

async function main(): Promise<void> {
  const redis = await startRedis();
  try {
    await soak(redis.port);
  } finally {
    await redis.stop();
  }
}

async function soak(redisPort: number): Promise<void> {
  const redis = { port: redisPort };
  const keys = [generatePrivateJWK('ES256')];
  const instances: [Instance, Instance] = [await startInstance(redis.port, keys), await startInstance(redis.port, keys)];
  const admin = new Redis(`redis://127.0.0.1:${redis.port}`);
  const started = Date.now();
  const until = started + SECONDS * 1000;
  const samples: Array<{ t: number; rss: number; heap: number; redis: number; dbsize: number }> = [];
  const sampler = (async () => {
    while (Date.now() < until) {
      // A full collection first (npm run soak passes --expose-gc), so the heap figure is live data, not garbage.
      (globalThis as { gc?: () => void }).gc?.();
      const info = await admin.info('memory');
      samples.push({
        t: (Date.now() - started) / 60_000,
        rss: process.memoryUsage().rss,
        heap: process.memoryUsage().heapUsed,
        redis: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0),
        dbsize: await admin.dbsize(),
      });
      await sleep(1000);
    }
  })();
  console.log(`soak: ${SECONDS} s, ${USERS} virtual users, two instances on ${instances.map((i) => i.base).join(' and ')}`);
  await Promise.all(Array.from({ length: USERS }, (_, index) => virtualUser(index, instances, until)));
  await sampler;
  const elapsed = (Date.now() - started) / 1000;
  const types = await census(admin);
  for (const instance of instances) {
    await new Promise((resolve) => instance.server.close(resolve));
    instance.client.disconnect();
  }
  admin.disconnect();

  // The first fifth is warm-up (caches filling, JIT); slopes come from the rest.
  const steady = samples.filter((sample) => sample.t >= (SECONDS / 60) * 0.2);
  const kbPerMin = (pick: (sample: (typeof samples)[number]) => number) =>
    (slope(steady.map((sample) => [sample.t, pick(sample)])) / 1024).toFixed(0);
  const grants = types.get('grant')?.keys ?? 0;
  const userKeys = (types.get('grant')?.keys ?? 0) + (types.get('code')?.keys ?? 0);
  const typeRows = [...types.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, { keys: n, meanBytes }]) => `| \`${type}:\` | ${n} | ${meanBytes} |`);
  const ok =
    failures.fiveHundreds === 0 && failures.doubleRedemptions === 0 && failures.reuseAccepted === 0 && failures.unexpectedCount === 0;
  const report = [
    `Generated by \`npm run soak -- --seconds ${SECONDS} --users ${USERS}\` (bench/soak.ts) on ${new Date().toISOString()}, Node.js ${process.version}, ${elapsed.toFixed(0)} s.`,
    '',
    `- Requests: ${counts.requests} (${(counts.requests / elapsed).toFixed(0)}/s) — sign-ins ${counts.signIns}, code exchanges ${counts.exchanges}, refreshes ${counts.refreshes}, introspections ${counts.introspections}, revocations ${counts.revokes}, abandoned authorizations ${counts.abandoned}, client-credentials tokens ${counts.consumerTokens}; every exchange is followed by a replay of its code and every rotation by a reuse of the old token.`,
    `- Failures: ${failures.fiveHundreds} responses 5xx, ${failures.doubleRedemptions} codes redeemed twice, ${failures.reuseAccepted} rotated refresh tokens accepted again, ${failures.unexpectedCount} other unexpected statuses${failures.unexpected.length > 0 ? ` (first: ${failures.unexpected.join(', ')})` : ''} — ${ok ? 'clean' : 'NOT CLEAN'}.`,
    `- Memory slopes after warm-up (least squares over 1 s samples${typeof (globalThis as { gc?: unknown }).gc === 'function' ? ', each after a full GC' : ''}, KiB/min): process RSS ${kbPerMin((s) => s.rss)}, V8 heap ${kbPerMin((s) => s.heap)}, Redis used_memory ${kbPerMin((s) => s.redis)} (Redis grows with live grants and sessions until their TTLs; see keys below).`,
    `- Redis keys per live grant: ${grants === 0 ? 'n/a' : (userKeys / grants).toFixed(2)} (\`grant:\` + \`code:\` keys ÷ live grants; ${grants} live grants at the end, after ${counts.refreshes} rotations).`,
    '',
    '| key type | keys at the end | mean bytes per key (Redis MEMORY USAGE) |',
    '|---|---|---|',
    ...typeRows,
  ].join('\n');
  console.log(`\n${report}\n`);
  writeSection(report);
  if (!ok) process.exitCode = 1;
}

/** Replaces (or appends) the section between the store markers of bench/RESULTS.md, leaving the rest untouched. */
function writeSection(report: string): void {
  writeResultsSection(RESULTS, 'store', `<!-- store:start -->\n## Store soak (two instances, one Redis)\n\n${report}\n<!-- store:end -->`);
}

await main();
