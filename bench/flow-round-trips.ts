/**
 * `node --import tsx bench/flow-round-trips.ts`: the Redis commands and round trips of one authorize (with a
 * session), one code exchange and one refresh rotation of sentinel-idp on RedisStore, counted at the ioredis client
 * (its `sendCommand`). Commands sent before the event loop next polls for I/O share one round trip (they leave on
 * the socket together); a command sent after awaiting another's answer starts a new one. Prints a table; writes
 * nothing.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { codeFromLocation, login } from './client.js';
import { CLIENT_ID, CLIENT_SECRET, CODE_VERIFIER, createKeyPair, FORM_CONTENT_TYPE, HOST, redirectUriFor } from './fixtures.js';
import { buildLibraryForBench } from './library-build.js';
import { deleteBenchKeys } from './targets/redis-bench.js';
import { importRepoModule } from './targets/sentinel-common.js';

interface Counter {
  commands: string[];
  trips: number;
  open: boolean;
}

const counter: Counter = { commands: [], trips: 0, open: false };

function count(client: Redis): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, stream?: unknown) => {
    counter.commands.push(command.name.toUpperCase());
    if (!counter.open) {
      counter.trips++;
      counter.open = true;
      setImmediate(() => {
        counter.open = false;
      });
    }
    return send(command as never, stream as never);
  }) as typeof client.sendCommand;
}

async function measure(what: string, run: () => Promise<void>): Promise<void> {
  counter.commands = [];
  counter.trips = 0;
  await run();
  const names = counter.commands.join(', ');
  console.log(`| ${what} | ${counter.commands.length} | ${counter.trips} | ${names} |`);
}

async function main(): Promise<void> {
  await buildLibraryForBench();
  const { privateJwk } = await createKeyPair();
  process.env.BENCH_PRIVATE_JWK = JSON.stringify(privateJwk);
  const { startFastify } = await import('./targets/sentinel-fastify.js');
  const { RedisStore, redisClientOptions } = await importRepoModule<{
    RedisStore: new (client: Redis, options?: { prefix?: string }) => unknown;
    redisClientOptions(): Record<string, unknown>;
  }>('src/stores/redis.js');
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', redisClientOptions());
  count(client);
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('error', reject);
  });
  const prefix = `bench-trips:${process.pid}:`;
  // One request first so that per-process preparation (e.g. loading a script into Redis) is not counted.
  const port = 47000 + (process.pid % 1000);
  const server = await startFastify(port, undefined, new RedisStore(client, { prefix }));
  const base = `http://${HOST}:${port}`;
  try {
    const cookie = await login(port);
    const authorizeUrl = `${base}/sentinel/api/account/123456/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: redirectUriFor(port),
      scope: 'openid offline_access',
      state: 'trips-state-0123456789',
      code_challenge: createHash('sha256').update(CODE_VERIFIER).digest('base64url'),
      code_challenge_method: 'S256',
    })}`;
    const authorize = async (): Promise<string> => {
      const response = await fetch(authorizeUrl, { redirect: 'manual', headers: { cookie } });
      const code = codeFromLocation(response.headers.get('location') ?? '', port);
      if (code === null) throw new Error(`authorize answered ${response.status}`);
      return code;
    };
    const token = async (body: Record<string, string>): Promise<Record<string, string>> => {
      const response = await fetch(`${base}/sentinel/api/account/123456/token`, {
        method: 'POST',
        headers: { 'content-type': FORM_CONTENT_TYPE },
        body: new URLSearchParams({ ...body, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      });
      const json = (await response.json()) as Record<string, string>;
      if (response.status !== 200) throw new Error(`token endpoint answered ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const exchange = (code: string) =>
      token({ grant_type: 'authorization_code', code, redirect_uri: redirectUriFor(port), code_verifier: CODE_VERIFIER });
    let refresh = (await exchange(await authorize())).refresh_token as string;
    refresh = (await token({ grant_type: 'refresh_token', refresh_token: refresh })).refresh_token as string;

    console.log('| operation | commands | round trips | commands sent |\n|---|---:|---:|---|');
    let code = '';
    await measure('authorize with a session', async () => {
      code = await authorize();
    });
    await measure('code exchange + PKCE', async () => {
      refresh = (await exchange(code)).refresh_token as string;
    });
    await measure('refresh rotation', async () => {
      refresh = (await token({ grant_type: 'refresh_token', refresh_token: refresh })).refresh_token as string;
    });
  } finally {
    await server.close();
    await deleteBenchKeys(client, prefix);
    client.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
