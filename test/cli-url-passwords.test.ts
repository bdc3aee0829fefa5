/**
 * Passwords of the stores the CLI connects to stay off its command line, which other users see in process lists and
 * which shell history keeps: the Redis URL can come from SENTINEL_REDIS_URL instead of `--redis`, and a `--redis`
 * or `--database` URL that does carry a password is still used, with a warning on stderr that does not repeat it.
 *
 * Against the real Redis and PostgreSQL (trust authentication: the password in the URL is accepted and ignored);
 * each half is skipped, with the reason printed, when its server does not answer.
 */
import { describe, expect, it } from 'vitest';
import { runDbMigrate } from '../src/cli/db-migrate.js';
import { runKeysList } from '../src/cli/keys-ring.js';
import { runSessionsList } from '../src/cli/sessions.js';
import { capturedIO } from './helpers/cli-io.js';
import { requirePostgres, sharedPostgres, useThrowawayDatabase } from './helpers/postgres.js';
import { REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('cli-url-passwords');
const postgres = await sharedPostgres('cli-url-passwords');
const PASSWORD = 'pw-0f3c9a7e-not-for-ps';

/** `url` with `PASSWORD` written into it. */
function withPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = PASSWORD;
  return parsed.toString();
}

/** A captured run whose environment sets SENTINEL_REDIS_URL. */
function withEnvironment(url: string): ReturnType<typeof capturedIO> {
  return Object.assign(capturedIO(), { env: { SENTINEL_REDIS_URL: url } });
}

const LIST = ['--account', '123456', '--user', 'u-cli-url-passwords', '--prefix', 'sentinel-cli-url-passwords:'];

describe.skipIf(redis.skip)('the Redis URL of the keys and sessions commands', () => {
  it('comes from SENTINEL_REDIS_URL when --redis is left out; --redis wins when both are given', async () => {
    requireAvailable(redis);
    const io = withEnvironment(REDIS_URL);
    expect(await runSessionsList(LIST, io)).toBe(0);
    expect(JSON.parse(io.out)).toEqual([]);
    expect(io.err).toBe('');

    // A missing ring, found through the environment: the command connected, and says so (exit 1, not a usage error).
    const keys = withEnvironment(REDIS_URL);
    expect(await runKeysList(['--prefix', 'sentinel-cli-url-passwords:'], keys)).toBe(1);
    expect(keys.err).toMatch(/no key ring in this store/);

    const both = withEnvironment('http://not-redis');
    expect(await runSessionsList([...LIST, '--redis', REDIS_URL], both)).toBe(0);
    // Without either, the usage error names both ways.
    await expect(runSessionsList(LIST, capturedIO())).rejects.toThrow(/--redis is required \(or set SENTINEL_REDIS_URL\)/);
    await expect(runSessionsList(LIST, withEnvironment('http://x'))).rejects.toThrow(
      /SENTINEL_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/,
    );
  });

  it('warns, without repeating it, about a password written in --redis', async () => {
    requireAvailable(redis);
    const io = capturedIO();
    expect(await runSessionsList([...LIST, '--redis', withPassword(REDIS_URL)], io)).toBe(0);
    expect(io.err).toMatch(/warning: the password in --redis is visible .* set SENTINEL_REDIS_URL instead/);
    expect(io.err + io.out).not.toContain(PASSWORD);
    const quiet = capturedIO();
    expect(await runSessionsList([...LIST, '--redis', REDIS_URL], quiet)).toBe(0);
    expect(quiet.err).toBe('');
  });

  it('warns about a password written as the password query parameter of --redis, which ioredis reads too', async () => {
    requireAvailable(redis);
    const url = new URL(REDIS_URL);
    url.searchParams.set('password', PASSWORD);
    const io = capturedIO();
    expect(await runSessionsList([...LIST, '--redis', url.toString()], io)).toBe(0);
    expect(io.err).toMatch(/warning: the password in --redis is visible .* set SENTINEL_REDIS_URL instead/);
    expect(io.err + io.out).not.toContain(PASSWORD);
  });
});

describe.skipIf(postgres.skip)('the PostgreSQL URL of the registry commands', () => {
  const database = useThrowawayDatabase(postgres);

  it('warns, without repeating it, about a password written in --database, and points at PGPASSWORD', async () => {
    requirePostgres(postgres);
    const io = capturedIO();
    expect(await runDbMigrate(['--database', withPassword(database().url), '--json'], io)).toBe(0);
    expect(io.err).toMatch(/warning: the password in --database is visible .* set PGPASSWORD \(or a ~\/\.pgpass entry\) instead/);
    expect(io.err + io.out).not.toContain(PASSWORD);
    const quiet = capturedIO();
    expect(await runDbMigrate(['--database', database().url, '--json'], quiet)).toBe(0);
    expect(quiet.err).toBe('');
  });

  it('warns about a password written as the password query parameter of --database, which pg reads too', async () => {
    requirePostgres(postgres);
    const url = new URL(database().url);
    url.searchParams.set('password', PASSWORD);
    const io = capturedIO();
    expect(await runDbMigrate(['--database', url.toString(), '--json'], io)).toBe(0);
    expect(io.err).toMatch(/warning: the password in --database is visible .* set PGPASSWORD/);
    expect(io.err + io.out).not.toContain(PASSWORD);
  });
});
