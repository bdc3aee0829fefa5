/**
 * The database of `--redis` in the built CLI (`keys list|rotate|revoke`, `sessions list|end`). ioredis sends the
 * URL's path to SELECT during its handshake and reports a refusal only as an 'error' event: with `/99999` the
 * command ran on database 0 (`keys revoke` revoked database 0's live key and exited 0), and with `/x` the reply
 * killed the process with a stack trace. A path that is not a database number is a usage error (exit 2); a database
 * the server refuses is a connection failure (exit 1), with nothing done anywhere.
 *
 * Skipped (with the reason printed) when no Redis answers at REDIS_URL, unless SENTINEL_REQUIRE_REDIS=1.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ensureBuilt, runCli } from './helpers/dist.js';
import { baseOptions } from './helpers/fixtures.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('cli-redis-database');
const PREFIX = `sentinel-cli-db-test:${randomBytes(8).toString('hex')}:`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64url');

/** Runs the built CLI with the ring's encryption key in its environment. */
const cli = (args: string[]) => runCli(args, { ...process.env, SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });

/** REDIS_URL with `path` (and `search`) in place of its own database. */
function urlWith(path: string, search = ''): string {
  const url = new URL(REDIS_URL);
  url.pathname = path;
  url.search = search;
  return url.href;
}

/** The kid and state of each key of the ring on `client`, as `keys list` would show them. */
async function ringStates(client: Redis): Promise<string[]> {
  const ring = JSON.parse((await client.get(`${PREFIX}keyring:default`)) as string) as { keys: { kid: string; revokedAt?: number }[] };
  return ring.keys.map((key) => `${key.kid} ${key.revokedAt === undefined ? 'live' : 'revoked'}`);
}

/** Creates the ring of an instance with keyRotation on the database `client` is on; the kid that signs. */
async function startRing(client: Redis): Promise<string> {
  const sentinel = createSentinel(
    baseOptions({
      keys: undefined,
      store: new RedisStore(client, { prefix: PREFIX }),
      keyRotation: { encryptionKey: ENCRYPTION_KEY, algorithms: ['ES256'], rotateEverySeconds: 3600, prePublishSeconds: 600 },
    }),
  );
  await sentinel.ready();
  await sentinel.close();
  return sentinel.jwks().keys[0]?.kid as string;
}

describe.skipIf(redis.skip)('the database of --redis', () => {
  let db0: Redis;
  let db1: Redis;

  beforeAll(async () => {
    requireAvailable(redis);
    ensureBuilt();
    db0 = new Redis(urlWith('/0'), { maxRetriesPerRequest: 1 });
    db1 = new Redis(urlWith('/1'), { maxRetriesPerRequest: 1 });
  }, 180_000);

  afterAll(async () => {
    for (const client of [db0, db1]) {
      if (client === undefined) continue;
      await deleteByPrefix(client, PREFIX);
      client.disconnect();
    }
  });

  it('refuses a path that is not a database number as a usage error, touching nothing and printing no stack', async () => {
    const kid = await startRing(db0);
    const before = await ringStates(db0);
    const urls = [urlWith('/x'), urlWith('/-1'), urlWith('/1/2'), urlWith('/1.5'), urlWith('', '?db=x')];
    for (const url of urls) {
      const run = await cli(['keys', 'revoke', '--kid', kid, '--redis', url, '--prefix', PREFIX]);
      expect(run.code, `${url}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/^sentinel-idp: --redis must name its database as \/<number> \(a non-negative integer\), or not at all\n/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    const sessions = await cli(['sessions', 'list', '--account', 'a', '--user', 'u', '--redis', urlWith('/x'), '--prefix', PREFIX]);
    expect(sessions.code, sessions.stderr).toBe(2);
    // Never the URL, which may carry a password.
    const secret = await cli(['keys', 'list', '--redis', 'redis://:s3cret-pw@127.0.0.1:6379/x', '--prefix', PREFIX]);
    expect(secret.code).toBe(2);
    expect(secret.stderr).not.toContain('s3cret-pw');
    expect(await ringStates(db0)).toEqual(before);
  });

  it('fails a database the server refuses (exit 1) and never falls back to database 0', async () => {
    const kid = await startRing(db0);
    const before = await ringStates(db0);
    expect(before).toContain(`${kid} live`);
    for (const args of [
      ['keys', 'revoke', '--kid', kid],
      ['keys', 'rotate'],
      ['keys', 'list'],
      ['sessions', 'end', '--account', 'a', '--user', 'u'],
    ]) {
      const run = await cli([...args, '--redis', urlWith('/99999'), '--prefix', PREFIX]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('sentinel-idp: the Redis given by --redis refused to select database 99999\n');
    }
    expect(await ringStates(db0)).toEqual(before);
  });

  it('acts on the database it names, given as a path or as the db parameter ioredis reads', async () => {
    const kid = await startRing(db1);
    await db0.del(`${PREFIX}keyring:default`);
    for (const url of [urlWith('/1'), urlWith('/01'), urlWith('', '?db=1')]) {
      const list = await cli(['keys', 'list', '--redis', url, '--prefix', PREFIX]);
      expect(list.code, list.stderr).toBe(0);
      expect((JSON.parse(list.stdout) as { kid: string }[]).map((key) => key.kid)).toContain(kid);
    }
    for (const url of [urlWith('/'), urlWith('/0'), urlWith('')]) {
      const list = await cli(['keys', 'list', '--redis', url, '--prefix', PREFIX]);
      expect(list.code).toBe(1);
      expect(list.stderr).toMatch(/no key ring in this store/);
    }
  });
});
