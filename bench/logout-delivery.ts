/**
 * `node --import tsx bench/logout-delivery.ts [sessions] [--redis] [--https]`: back-channel logout delivery (issue 37).
 *
 * - **Throughput**: `sessions` device sessions (default 1,000), each with two apps that registered a
 *   `backchannelLogoutUri`, are ended one after another with `sentinel.endSession()`; measured: the time from the
 *   first ending until every logout token (2 per session) has been answered 200 by the receivers, and the service
 *   process's CPU time (user + system) over that span divided by the deliveries. The receivers run in a child
 *   process, so their CPU is not counted; they only count and answer (validation is the app's cost, not ours).
 * - **Against a hand-written baseline**, in the same run and the same process, to the same receivers: jose signing
 *   a logout token with the same claims for each of the same sessions × apps and POSTing it over keep-alive
 *   connections, as many in flight as the service has delivery slots (bench/logout-baseline.ts); deliveries per
 *   second and CPU per delivery of both, and their ratios. The baseline has no queue, no store and no retry: the
 *   ratio is what that machinery and the per-attempt connection cost over the least a host could write.
 * - **Latency with an app hanging**: 200 sessions ended one at a time, first with both apps answering, then with
 *   app B never answering: the ending's latency (p50, p99) must not grow, since it only queues.
 *
 * The sessions are put in the session index directly (the functions sign-in uses), so the run measures ending and
 * delivery, not the login pages. `--redis` runs on a RedisStore at REDIS_URL (default 127.0.0.1:6379) under a prefix
 * of its own, removed afterwards; the default is MemoryStore.
 *
 * `--https` serves the receivers over TLS, as apps' receivers are outside a loopback test: each connection the
 * service or the baseline opens then costs a TLS handshake too. The certificate is made for the run (the tests'
 * loopback certificate, test/helpers/loopback-tls.ts) and trusted through NODE_EXTRA_CA_CERTS, which node reads only
 * at startup: the run starts itself again with it set.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { loopbackTLS } from '../test/helpers/loopback-tls.js';
import { type Delivery, deliverByHand } from './logout-baseline.js';

const ACCOUNT = 'bench-account';
const APPS = ['bench-app-a', 'bench-app-b'];
/** The baseline's deliveries in flight: the service's delivery slots per instance (docs/guides/sessions-and-logout.md). */
const BASELINE_IN_FLIGHT = 32;
/** With `--https`: the folder holding the run's `key.pem` and `cert.pem` (set for the restarted run and its receivers). */
const TLS_DIR = process.env.BENCH_LOGOUT_TLS_DIR;
const SCHEME = TLS_DIR === undefined ? 'http' : 'https';

/** A listening server: over TLS with the run's certificate when there is one. */
function listenAny(handler: RequestListener) {
  const server =
    TLS_DIR === undefined
      ? createServer(handler)
      : createHttpsServer({ key: readFileSync(join(TLS_DIR, 'key.pem')), cert: readFileSync(join(TLS_DIR, 'cert.pem')) }, handler);
  return server.listen(0, '127.0.0.1');
}

/** `--https`: makes the run's certificate, runs this bench again trusting it, and resolves with its exit code. */
async function restartWithTLS(): Promise<number> {
  // The tests' loopback certificate: key.pem and cert.pem in a fresh temporary folder of their own.
  const dir = dirname(loopbackTLS().certFile);
  try {
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_LOGOUT_TLS_DIR: dir, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') },
    });
    return await new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Child mode: two receivers; the first line of stdout is their ports; `GET /count` answers how many took a token,
 * `GET /wait?count=N` the same once N have (or after 30 s), so the runner waits without polling: a poll every few
 * milliseconds would land in the CPU time measured per delivery.
 */
async function receivers(): Promise<void> {
  let count = 0;
  let hangB = false;
  const waiters = new Set<{ until: number; answer: () => void }>();
  const make = (hangs: () => boolean) =>
    listenAny((request, response) => {
      if (request.method === 'GET' && request.url === '/count') {
        response.end(String(count));
        return;
      }
      if (request.method === 'GET' && request.url?.startsWith('/wait?count=')) {
        const waiter = { until: Number(request.url.slice('/wait?count='.length)), answer: () => response.end(String(count)) };
        if (count >= waiter.until) return waiter.answer();
        waiters.add(waiter);
        setTimeout(() => waiters.delete(waiter) && waiter.answer(), 30_000);
        return;
      }
      if (request.method === 'POST' && request.url === '/hang') {
        hangB = true;
        response.end();
        return;
      }
      request.resume();
      request.on('end', () => {
        if (hangs()) return;
        count++;
        response.writeHead(200).end();
        for (const waiter of waiters) {
          if (count >= waiter.until && waiters.delete(waiter)) waiter.answer();
        }
      });
    });
  const a = make(() => false);
  const b = make(() => hangB);
  await Promise.all([a, b].map((server) => new Promise((resolve) => server.once('listening', resolve))));
  process.stdout.write(`${JSON.stringify([a, b].map((server) => (server.address() as AddressInfo).port))}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

async function main(): Promise<void> {
  const n = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 1000);
  const onRedis = process.argv.includes('--redis');
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'receivers'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ports = await new Promise<number[]>((resolve) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString().split('\n')[0] as string)));
  });
  const base = `${SCHEME}://127.0.0.1:${ports[0]}`;
  const count = async (): Promise<number> => Number(await (await fetch(`${base}/count`)).text());

  const { createSentinel, generatePrivateJWK, MemoryStore } = await import('../src/index.js');
  const { contextOf } = await import('../src/http/context.js');
  const { attachGrant, sessionSid } = await import('../src/sessions/session-index.js');
  const { indexSession } = await import('../src/sessions/carry-over.js');
  const { RedisStore } = await import('../src/stores/redis.js');
  let redis: import('ioredis').Redis | undefined;
  const prefix = `bench-logout:${randomBytes(6).toString('hex')}:`;
  if (onRedis) {
    const { Redis } = await import('ioredis');
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  }
  const store = redis === undefined ? new MemoryStore() : new RedisStore(redis, { prefix });
  const sentinel = createSentinel({
    issuer: 'http://localhost',
    keys: [generatePrivateJWK('ES256')],
    store,
    clientJwks: { allowPrivateAddresses: true },
    apps: APPS.map((clientId, at) => ({
      accountId: ACCOUNT,
      clientId,
      clientSecret: randomBytes(24).toString('base64url'),
      redirectUris: ['https://app.example.com/cb'],
      backchannelLogoutUri: `${SCHEME}://127.0.0.1:${ports[at]}/logout`,
    })),
    logger: { warn: () => {} },
  });
  const context = contextOf(sentinel);

  /** `count` sessions of distinct users, each with a grant of both apps; their sids and users. */
  async function makeSessions(count: number): Promise<Array<{ sid: string; userId: string }>> {
    const now = Math.floor(Date.now() / 1000);
    const sessions: Array<{ sid: string; userId: string }> = [];
    for (let i = 0; i < count; i++) {
      const userId = `u-${randomBytes(6).toString('hex')}`;
      const sessionDigest = randomBytes(32).toString('base64url').slice(0, 43);
      await indexSession(context, { accountId: ACCOUNT, userId, sessionDigest, authTime: now, sessionEnd: now + 3600 });
      const sid = sessionSid(ACCOUNT, userId, sessionDigest);
      for (const clientId of APPS) {
        await attachGrant(context, {
          accountId: ACCOUNT,
          userId,
          sid,
          clientId,
          grantId: randomBytes(16).toString('hex'),
          until: now + 3600,
          maxGrantsPerApp: context.config.session.maxGrantsPerApp,
          maxAppsPerSession: context.config.session.maxAppsPerSession,
        });
      }
      sessions.push({ sid, userId });
    }
    return sessions;
  }

  // Throughput.
  const sessions = await makeSessions(n);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (const { sid } of sessions) {
    if (!(await sentinel.endSession({ accountId: ACCOUNT, sid }))) throw new Error('a session was not found');
  }
  const endedMs = performance.now() - started;
  while (Number(await (await fetch(`${base}/wait?count=${2 * n}`)).text()) < 2 * n);
  const deliveredMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerDeliveryUs = (cpu.user + cpu.system) / (2 * n);

  // The hand-written baseline: the same sessions × apps, the same receivers, once the service's deliveries are done.
  const deliveries: Delivery[] = sessions.flatMap(({ sid, userId }) =>
    APPS.map((clientId, at) => ({ url: `${SCHEME}://127.0.0.1:${ports[at]}/logout`, clientId, userId, sid })),
  );
  const countBefore = await count();
  const baseline = await deliverByHand(context.accountIssuer(ACCOUNT), deliveries, BASELINE_IN_FLIGHT);
  if ((await count()) - countBefore !== 2 * n) throw new Error('the receivers did not count every baseline delivery');
  const baselineCpuPerDeliveryUs = baseline.cpuUs / (2 * n);

  // Latency of an ending, both apps answering, then app B hanging.
  const latencies = async (): Promise<number[]> => {
    const batch = await makeSessions(200);
    const taken: number[] = [];
    for (const { sid } of batch) {
      const at = performance.now();
      if (!(await sentinel.endSession({ accountId: ACCOUNT, sid }))) throw new Error('a session was not found');
      taken.push(performance.now() - at);
    }
    return taken.sort((x, y) => x - y);
  };
  const answering = await latencies();
  await fetch(`${SCHEME}://127.0.0.1:${ports[1]}/hang`, { method: 'POST' });
  const hanging = await latencies();

  const ms = (value: number) => value.toFixed(2);
  console.log(`store: ${onRedis ? 'RedisStore (one Redis)' : 'MemoryStore'}; ${n} sessions × 2 apps; receivers over ${SCHEME}`);
  console.log(
    `all ${n} endSession calls returned after ${ms(endedMs)} ms; all ${2 * n} logout tokens answered 200 after ${ms(deliveredMs)} ms`,
  );
  console.log(`service CPU per delivery: ${cpuPerDeliveryUs.toFixed(0)} µs (user+system over the span, receivers excluded)`);
  const rate = (spanMs: number) => (2 * n) / (spanMs / 1000);
  console.log(
    `hand-written baseline (jose + node:${SCHEME} keep-alive, ${BASELINE_IN_FLIGHT} in flight): all ${2 * n} answered after ${ms(baseline.ms)} ms; CPU per delivery ${baselineCpuPerDeliveryUs.toFixed(0)} µs`,
  );
  console.log(
    `deliveries/s: sentinel-idp ${rate(deliveredMs).toFixed(0)}, baseline ${rate(baseline.ms).toFixed(0)}, ratio ${(rate(deliveredMs) / rate(baseline.ms)).toPrecision(2)}×; CPU per delivery ratio ${(cpuPerDeliveryUs / baselineCpuPerDeliveryUs).toFixed(2)}×`,
  );
  console.log(`endSession latency, both apps answering: p50 ${ms(percentile(answering, 50))} ms, p99 ${ms(percentile(answering, 99))} ms`);
  console.log(`endSession latency, app B hanging:       p50 ${ms(percentile(hanging, 50))} ms, p99 ${ms(percentile(hanging, 99))} ms`);

  await sentinel.close();
  child.kill();
  if (redis !== undefined) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) await redis.del(key);
    } while (cursor !== '0');
    redis.disconnect();
  }
}

if (process.argv[2] === 'receivers') void receivers();
else if (process.argv.includes('--https') && TLS_DIR === undefined) process.exitCode = await restartWithTLS();
else await main();
