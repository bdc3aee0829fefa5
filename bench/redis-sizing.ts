/**
 * `node --import tsx bench/redis-sizing.ts [users] [concurrency]`: Redis memory per live signed-in user. Signs in
 * `users` users (default 100,000) through the service's own pages on a RedisStore, each with the code flow an app
 * runs (authorize → login page → credentials → code → code exchange with PKCE, `openid offline_access`), then reads
 * `MEMORY USAGE` of every key the run left and prints the bytes per user by key type, and the table of
 * docs/guides/deploying-instances-and-store.md ("Sizing Redis"). Writes nothing but its keys, which it removes.
 *
 * What a live signed-in user holds: the device session (`session:`), the grant its app's refresh token belongs to
 * (`grant:`; the code is replaced by it on redemption) and the user's session index (`user-sessions:`,
 * src/sessions/session-index.ts). Every other key type the run leaves is printed too, so nothing is left out.
 *
 * The server is sentinel.handle() on node:http in this process, with the library as published
 * (bench/library-build.ts); the user hook answers every correct password with a new user id, so every sign-in is a
 * different user. Keys live under a 5-character prefix of their own (as the README's table assumes) on the Redis at
 * REDIS_URL (default 127.0.0.1:6379), which may be shared: SCAN, never KEYS or FLUSHDB. `used_memory` before and
 * after is printed as a cross-check; on a shared Redis it also moves with the other tenants' keys.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { signIn } from './client.js';
import {
  ACCOUNT_ID,
  CLIENT_ID,
  CLIENT_SECRET,
  CODE_VERIFIER,
  FORM_CONTENT_TYPE,
  HOST,
  PASSWORD,
  createKeyPair,
  issuerFor,
  redirectUriFor,
} from './fixtures.js';
import { sentinelAuthorizePath } from './flow-client.js';
import { buildLibraryForBench } from './library-build.js';
import type { SentinelLike, SentinelRequestLike, SentinelResponseLike } from './targets/sentinel-common.js';
import { importRepoModule } from './targets/sentinel-common.js';
import { closeServer, listen } from './targets/util.js';
import { freePort } from './server-child.js';

interface CoreModule {
  createSentinel(options: Record<string, unknown>): SentinelLike;
}
interface RedisModule {
  RedisStore: new (client: unknown, options: { prefix: string }) => unknown;
  redisClientOptions(): Record<string, unknown>;
}
interface NodeHelpers {
  fromNodeRequest(request: IncomingMessage, input: { url: string; parsedBody: () => unknown }): SentinelRequestLike;
  writeNodeResponse(response: ServerResponse, result: SentinelResponseLike): void;
}

const USERS = Number(process.argv[2] ?? 100_000);
const CONCURRENCY = Number(process.argv[3] ?? 16);
/** The state of a live signed-in user; every other key type is reported apart. */
const PER_USER = ['session', 'grant', 'user-sessions'];

/** A prefix of 5 characters (4 + ':') that no key of the Redis has yet. */
async function freshPrefix(client: Redis): Promise<string> {
  for (;;) {
    const prefix = `z${randomBytes(3).toString('hex').slice(0, 3)}:`;
    const [, keys] = await client.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 10_000);
    if (keys.length === 0) return prefix;
  }
}

async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const all: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    cursor = next;
    all.push(...keys);
  } while (cursor !== '0');
  return all;
}

/** MEMORY USAGE of every key (SAMPLES 0: every element of a collection), summed by key type (`grant`, `session`, …). */
async function bytesByType(client: Redis, prefix: string, keys: string[]): Promise<Map<string, { keys: number; bytes: number }>> {
  const byType = new Map<string, { keys: number; bytes: number }>();
  for (let i = 0; i < keys.length; i += 2000) {
    const batch = keys.slice(i, i + 2000);
    const pipeline = client.pipeline();
    for (const key of batch) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    const results = (await pipeline.exec()) ?? [];
    batch.forEach((key, j) => {
      const [error, bytes] = results[j] ?? [null, null];
      if (error || typeof bytes !== 'number') return; // expired between SCAN and MEMORY USAGE
      const type = key.slice(prefix.length).split(':', 1)[0] ?? '?';
      const entry = byType.get(type) ?? { keys: 0, bytes: 0 };
      entry.keys++;
      entry.bytes += bytes;
      byType.set(type, entry);
    });
  }
  return byType;
}

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

async function main(): Promise<void> {
  await buildLibraryForBench();
  const core = await importRepoModule<CoreModule>('src/index.js');
  const { RedisStore, redisClientOptions } = await importRepoModule<RedisModule>('src/stores/redis.js');
  const { fromNodeRequest, writeNodeResponse } = await importRepoModule<NodeHelpers>('adapters/node/index.js');
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', redisClientOptions());
  await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
  const prefix = await freshPrefix(client);
  const { privateJwk } = await createKeyPair();
  const port = await freePort();
  let users = 0;
  /** Requests the service answered 500 (a store timeout on a loaded host): the user is signed in again. */
  let failures = 0;
  const sentinel = core.createSentinel({
    issuer: issuerFor(port),
    apps: [
      {
        accountId: ACCOUNT_ID,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [redirectUriFor(port)],
        grantTypes: ['authorization_code', 'refresh_token'],
      },
    ],
    keys: [privateJwk],
    // Each sign-in is a user of its own, with a username of its own (as 100,000 people signing in would be).
    users: {
      authenticate: async ({ username, password }: { username: string; password: string }) =>
        /^user-\d{6}$/.test(username) && password === PASSWORD ? { id: username } : null,
    },
    store: new RedisStore(client, { prefix }),
    // Every sign-in comes from this one address: the per-address bound on sign-ins started (default 1000 per
    // interactionTtl) would send the rest back to the app before their login page.
    interactionsPerAddress: USERS + 1000,
    logger: { warn: () => {}, error: (message: string) => console.error(message) },
    onError: (error: unknown) => {
      failures++;
      if (failures <= 3) console.error('  onError:', error instanceof Error ? error.message : error);
    },
  });
  const server = await listen(
    (req, res) => {
      sentinel
        .handle(fromNodeRequest(req, { url: req.url ?? '/', parsedBody: () => undefined }))
        .then((response) => {
          if (response === null) {
            res.writeHead(404);
            res.end();
          } else writeNodeResponse(res, response);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
    },
    port,
    HOST,
  );
  try {
    const before = await usedMemory(client);
    const started = Date.now();
    let next = 0;
    const tokenUrl = `http://${HOST}:${port}/sentinel/api/account/${ACCOUNT_ID}/token`;
    /** One user's sign-in and code exchange; a 500 (a store command timing out on a loaded host) is tried again. */
    const signInUser = async (username: string): Promise<void> => {
      for (let attempt = 1; ; attempt++) {
        try {
          const { code } = await signIn(port, sentinelAuthorizePath(port), username);
          const response = await fetch(tokenUrl, {
            method: 'POST',
            headers: { 'content-type': FORM_CONTENT_TYPE },
            body: new URLSearchParams({
              grant_type: 'authorization_code',
              code,
              redirect_uri: redirectUriFor(port),
              client_id: CLIENT_ID,
              client_secret: CLIENT_SECRET,
              code_verifier: CODE_VERIFIER,
            }).toString(),
            signal: AbortSignal.timeout(30_000),
          });
          const body = (await response.json()) as { refresh_token?: unknown; id_token?: unknown };
          if (response.status === 200 && typeof body.refresh_token === 'string' && typeof body.id_token === 'string') return;
          throw new Error(`code exchange answered ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
    };
    // A user whose sign-in failed three times (the Redis timing out under a loaded host) is left out and counted;
    // beyond 1 % of the users the run stops.
    let skipped = 0;
    const worker = async (): Promise<void> => {
      while (next < USERS) {
        try {
          await signInUser(`user-${String(++next).padStart(6, '0')}`);
          users++;
        } catch (error) {
          if (++skipped > USERS / 100) throw error;
        }
      }
    };
    const progress = setInterval(() => console.error(`  ${users} users signed in`), 30_000);
    await Promise.all(Array.from({ length: CONCURRENCY }, worker)).finally(() => clearInterval(progress));
    const seconds = (Date.now() - started) / 1000;
    const after = await usedMemory(client);
    const keys = await keysUnder(client, prefix);
    const byType = await bytesByType(client, prefix, keys);
    let perUser = 0;
    console.log(
      `${users} users signed in (authorize → login → code exchange with PKCE, openid offline_access) in ${seconds.toFixed(0)} s; ` +
        `Redis ${(await client.info('server')).match(/^redis_version:(\S+)/m)?.[1]}, keys under a 5-character prefix\n`,
    );
    console.log('| key type | keys | keys per user | mean bytes per key | bytes per user |\n|---|---:|---:|---:|---:|');
    for (const [type, { keys: count, bytes }] of [...byType].sort((a, b) => b[1].bytes - a[1].bytes)) {
      // Mean bytes per key of each type: a user signed in again after a 500 holds one session more than the others.
      if (PER_USER.includes(type)) perUser += bytes / count;
      const throttle = type === 'throttle' || type === 'throttle-user';
      const note = PER_USER.includes(type) ? '' : throttle ? ' (login throttle, expires with its window)' : ' (not per user)';
      console.log(
        `| \`${type}:\`${note} | ${count} | ${(count / users).toFixed(2)} | ` +
          `${Math.round(bytes / count)} | ${Math.round(bytes / users)} |`,
      );
    }
    console.log(`\nper live signed-in user (session + grant + session index): ${Math.round(perUser)} B (goal ≤ 500 B)`);
    console.log(`requests answered 500 and tried again: ${failures}; users left out after three failures: ${skipped}`);
    console.log(`${users.toLocaleString('en')} users: ${((perUser * users) / 1e6).toFixed(1)} MB by MEMORY USAGE`);
    console.log(
      `used_memory grew ${((after - before) / 1e6).toFixed(1)} MB (${Math.round((after - before) / users)} B per user; the Redis may be shared)`,
    );
    if (process.env.SIZING_SHOW === '1') {
      for (const type of PER_USER) {
        const key = keys.find((k) => k.startsWith(`${prefix}${type}:`));
        if (key !== undefined)
          console.log(
            `\n${key} (${await client.type(key)}, TTL ${await client.ttl(key)} s):`,
            await client.dump(key).then(() => client.get(key).catch(() => client.hgetall(key))),
          );
      }
    }
  } finally {
    await closeServer(server);
    const left = await keysUnder(client, prefix);
    for (let i = 0; i < left.length; i += 1000) await client.unlink(...left.slice(i, i + 1000));
    client.disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
