/**
 * `node --import tsx bench/logout-delivery.ts [sessions] [--redis]`: back-channel logout delivery (issue 37).
 *
 * - **Throughput**: `sessions` device sessions (default 1,000), each with two apps that registered a
 *   `backchannelLogoutUri`, are ended one after another with `sentinel.endSession()`; measured: the time from the
 *   first ending until every logout token (2 per session) has been answered 200 by the receivers, and the service
 *   process's CPU time (user + system) over that span divided by the deliveries. The receivers run in a child
 *   process, so their CPU is not counted; they only count and answer (validation is the app's cost, not ours).
 * - **Latency with an app hanging**: 200 sessions ended one at a time, first with both apps answering, then with
 *   app B never answering: the ending's latency (p50, p99) must not grow, since it only queues.
 *
 * The sessions are put in the session index directly (the functions sign-in uses), so the run measures ending and
 * delivery, not the login pages. `--redis` runs on a RedisStore at REDIS_URL (default 127.0.0.1:6379) under a prefix
 * of its own, removed afterwards; the default is MemoryStore.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const ACCOUNT = 'bench-account';
const APPS = ['bench-app-a', 'bench-app-b'];

/** Child mode: two receivers; the first line of stdout is their ports; `GET /count` answers how many took a token. */
async function receivers(): Promise<void> {
  let count = 0;
  let hangB = false;
  const make = (hangs: () => boolean) =>
    createServer((request, response) => {
      if (request.method === 'GET' && request.url === '/count') {
        response.end(String(count));
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
      });
    }).listen(0, '127.0.0.1');
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
  const base = `http://127.0.0.1:${ports[0]}`;
  const count = async (): Promise<number> => Number(await (await fetch(`${base}/count`)).text());

  const { createSentinel, generatePrivateJWK, MemoryStore } = await import('../src/index.js');
  const { contextOf } = await import('../src/http/context.js');
  const { attachGrant, indexSession, sessionSid } = await import('../src/sessions/session-index.js');
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
      backchannelLogoutUri: `http://127.0.0.1:${ports[at]}/logout`,
    })),
    logger: { warn: () => {} },
  });
  const context = contextOf(sentinel);

  /** `count` sessions of distinct users, each with a grant of both apps; their sids. */
  async function makeSessions(count: number): Promise<string[]> {
    const now = Math.floor(Date.now() / 1000);
    const sids: string[] = [];
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
        });
      }
      sids.push(sid);
    }
    return sids;
  }

  // Throughput.
  const sids = await makeSessions(n);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  for (const sid of sids) {
    if (!(await sentinel.endSession({ accountId: ACCOUNT, sid }))) throw new Error('a session was not found');
  }
  const endedMs = performance.now() - started;
  while ((await count()) < 2 * n) await new Promise((resolve) => setTimeout(resolve, 10));
  const deliveredMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerDeliveryUs = (cpu.user + cpu.system) / (2 * n);

  // Latency of an ending, both apps answering, then app B hanging.
  const latencies = async (): Promise<number[]> => {
    const batch = await makeSessions(200);
    const taken: number[] = [];
    for (const sid of batch) {
      const at = performance.now();
      if (!(await sentinel.endSession({ accountId: ACCOUNT, sid }))) throw new Error('a session was not found');
      taken.push(performance.now() - at);
    }
    return taken.sort((x, y) => x - y);
  };
  const answering = await latencies();
  await fetch(`http://127.0.0.1:${ports[1]}/hang`, { method: 'POST' });
  const hanging = await latencies();

  const ms = (value: number) => value.toFixed(2);
  console.log(`store: ${onRedis ? 'RedisStore (one Redis)' : 'MemoryStore'}; ${n} sessions × 2 apps`);
  console.log(
    `all ${n} endSession calls returned after ${ms(endedMs)} ms; all ${2 * n} logout tokens answered 200 after ${ms(deliveredMs)} ms`,
  );
  console.log(`service CPU per delivery: ${cpuPerDeliveryUs.toFixed(0)} µs (user+system over the span, receivers excluded)`);
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
else await main();
