/**
 * The key ring across two *processes* sharing a real Redis (test/helpers/key-rotation-server.ts): rotation under load
 * (client credentials and the guard on both) with zero failed verifications; an emergency revocation refused on
 * both within refreshSeconds; a restart that keeps the ring; a wrong encryption key that stops the start; and the
 * `sentinel-idp keys list|rotate|revoke` commands acting on the same ring.
 *
 * Skipped (with the reason printed) when no Redis answers at REDIS_URL, unless SENTINEL_REQUIRE_REDIS=1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysList, runKeysRevoke, runKeysRotate } from '../src/cli/keys-ring.js';
import type { RingEntry } from '../src/keys/keyring/document.js';
import { newEntry } from '../src/keys/keyring/mutations.js';
import { parseEncryptionKey } from '../src/keys/keyring/seal.js';
import type { CLIIO } from '../src/cli/io.js';
import { createSentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, baseOptions, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID } from './helpers/fixtures.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';
import { kidOf } from './helpers/jwt.js';

const redis = await sharedRedis('key-rotation-redis');
const PREFIX = `sentinel-keyring-test:${randomBytes(8).toString('hex')}:`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64url');
/** refreshSeconds of the instances: a request arriving that long after a change must see it (no slack needed). */
const REFRESH_MS = 1000;
/** For waits that are not the guarantee under test (a pending key showing up). */
const SLACK_MS = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Instance {
  name: string;
  base: string;
  child: ChildProcess;
}

function start(name: string, encryptionKey = ENCRYPTION_KEY): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/key-rotation-server.ts'], {
    cwd: process.cwd(),
    env: { ...process.env, INSTANCE: name, REDIS_URL, REDIS_PREFIX: PREFIX, ENCRYPTION_KEY: encryptionKey, ROTATE_EVERY: '4' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 30_000);
    const collect = (chunk: Buffer): void => {
      output += chunk.toString();
      const port = /listening on (\d+)/.exec(output)?.[1];
      if (port !== undefined) {
        clearTimeout(timer);
        resolve({ name, base: `http://127.0.0.1:${port}`, child });
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`${name} exited with ${code}:\n${output}`), { code, output }));
    });
  });
}

function stop(instance: Instance): Promise<void> {
  return new Promise((resolve) => {
    if (instance.child.exitCode !== null) return resolve();
    instance.child.once('exit', () => resolve());
    instance.child.kill('SIGTERM');
  });
}

async function issue(instance: Instance): Promise<string> {
  const response = await fetch(`${instance.base}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    body: 'grant_type=client_credentials',
  });
  if (response.status !== 200) throw new Error(`token request at ${instance.name}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function guardAccepts(instance: Instance, token: string): Promise<boolean> {
  const response = await fetch(`${instance.base}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/ping`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200 && response.status !== 401) throw new Error(`guard at ${instance.name}: ${response.status}`);
  return response.status === 200;
}

async function jwksKids(instance: Instance): Promise<string[]> {
  const response = await fetch(`${instance.base}/sentinel/well-known/jwks`);
  if (response.status !== 200) throw new Error(`JWKS at ${instance.name}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort();
}

/** Milliseconds until `check` holds (polled every 50 ms), or throws after `limit`. */
async function within(limit: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > limit) throw new Error(`not within ${limit} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function io(env: Record<string, string> = {}): CLIIO & { out: string; err: string } {
  const captured = {
    out: '',
    err: '',
    env,
    stdout: (text: string) => {
      captured.out += text;
    },
    stderr: (text: string) => {
      captured.err += text;
    },
    readSecret: async () => null,
  };
  return captured;
}

describe.skipIf(redis.skip)('key ring shared by two processes over Redis', () => {
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    requireAvailable(redis);
    [a, b] = await Promise.all([start('A'), start('B')]);
  });

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map(stop));
    const client = new Redis(REDIS_URL);
    await deleteByPrefix(client, PREFIX);
    client.disconnect();
  });

  it('both instances publish the same ring, created once', async () => {
    expect(await jwksKids(a)).toEqual(await jwksKids(b));
  });

  it('rotates under load (scheduled every 4 s, plus one on demand) with zero failed verifications', async () => {
    const kids = new Set<string>();
    const recent: string[] = [];
    let verified = 0;
    let failed = 0;
    // 12 s: a rotated key signs only after prePublishSeconds (2 s), and each rotation first generates an RSA key
    // for the ring's RS256 slot, which takes seconds of CPU when the whole suite loads the machine.
    const deadline = Date.now() + 12_000;
    let rotatedOnDemand = false;
    const worker = async (index: number): Promise<void> => {
      while (Date.now() < deadline) {
        const [from, to] = index % 2 === 0 ? [a, b] : [b, a];
        const token = await issue(from);
        kids.add(kidOf(token));
        recent.push(token);
        if (recent.length > 200) recent.shift();
        // The fresh token on both instances, and an older one (up to a few seconds old, still unexpired).
        const older = recent[Math.max(0, recent.length - 150)] as string;
        for (const [instance, candidate] of [
          [to, token],
          [from, token],
          [to, older],
        ] as const) {
          if (await guardAccepts(instance, candidate)) verified += 1;
          else failed += 1;
        }
        if (!rotatedOnDemand && Date.now() > deadline - 5000) {
          rotatedOnDemand = true;
          expect((await fetch(`${a.base}/ops/rotate`, { method: 'POST' })).status).toBe(200);
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    expect(failed).toBe(0);
    expect(verified).toBeGreaterThan(100);
    expect(kids.size).toBeGreaterThanOrEqual(3);
  }, 30_000);

  it('emergency revoke: the key leaves the JWKS and both instances refuse its tokens within refreshSeconds', async () => {
    const token = await issue(a);
    const kid = kidOf(token);
    expect(await guardAccepts(b, token)).toBe(true);
    const revoked = await fetch(`${a.base}/ops/revoke?kid=${encodeURIComponent(kid)}`, { method: 'POST' });
    expect(await revoked.json()).toEqual({ revoked: true });
    expect(await guardAccepts(a, token)).toBe(false);
    expect(await jwksKids(a)).not.toContain(kid);
    // Any request reaching B refreshSeconds after the revocation is decided on a ring read after it.
    await sleep(REFRESH_MS);
    expect(await guardAccepts(b, token)).toBe(false);
    expect(await jwksKids(b)).not.toContain(kid);
    // After the refresh, what either instance signs verifies on both again.
    await sleep(REFRESH_MS);
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const fresh = await issue(from);
      expect(kidOf(fresh)).not.toBe(kid);
      expect(await guardAccepts(to, fresh)).toBe(true);
    }
  });

  it('a restarted instance keeps the ring: tokens from before the restart verify on it', async () => {
    const token = await issue(a);
    await stop(b);
    b = await start('B');
    expect(await guardAccepts(b, token)).toBe(true);
    expect(await jwksKids(b)).toContain(kidOf(token));
  });

  it('an instance with a wrong encryption key does not start, with a ConfigurationError naming the option', async () => {
    const failure = (await start('C', randomBytes(32).toString('base64url')).then(
      (instance) => stop(instance).then(() => new Error('started')),
      (error: unknown) => error,
    )) as { code?: number; output?: string };
    expect(failure.code).toBe(3);
    expect(failure.output).toMatch(/keyRotation\.encryptionKey/);
  });

  it('sentinel-idp keys list|rotate|revoke act on the same ring', async () => {
    const list = io();
    expect(await runKeysList(['--redis', REDIS_URL, '--prefix', PREFIX], list)).toBe(0);
    const ring = JSON.parse(list.out) as { kid: string; state: string }[];
    const active = ring.find((key) => key.state === 'active');
    expect(active).toBeDefined();
    expect(list.out).not.toMatch(/"d"|sealed/);

    const wrongKey = io({ SENTINEL_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url') });
    await expect(runKeysRotate(['--redis', REDIS_URL, '--prefix', PREFIX], wrongKey)).rejects.toThrow(/encryptionKey/);
    const withoutKey = io();
    await expect(runKeysRotate(['--redis', REDIS_URL, '--prefix', PREFIX], withoutKey)).rejects.toThrow(/SENTINEL_KEY_ENCRYPTION_KEY/);
    const rotate = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(['--redis', REDIS_URL, '--prefix', PREFIX], rotate)).toBe(0);
    const pending = (JSON.parse(rotate.out) as { kid: string; alg: string; state: string }[]).filter((key) => key.state === 'pending');
    // The instances issue ID tokens, so their ring holds RS256 beside ES256 by default: both rotate together.
    expect(pending.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    await within(REFRESH_MS + SLACK_MS, async () => {
      const published = await jwksKids(b);
      return pending.every((key) => published.includes(key.kid));
    });

    const token = await issue(b);
    const revoke = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRevoke(['--kid', kidOf(token), '--redis', REDIS_URL, '--prefix', PREFIX], revoke)).toBe(0);
    await sleep(REFRESH_MS);
    expect(await guardAccepts(a, token)).toBe(false);
    expect(await guardAccepts(b, token)).toBe(false);
    const again = io();
    expect(await runKeysRevoke(['--kid', kidOf(token), '--redis', REDIS_URL, '--prefix', PREFIX], again)).toBe(1);
  });
});

describe.skipIf(redis.skip)('keys commands on a per-account ring (keysPerAccount)', () => {
  const prefix = `sentinel-keyring-test:${randomBytes(8).toString('hex')}:`;
  let client: Redis;

  beforeAll(() => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    await deleteByPrefix(client, prefix);
    client.disconnect();
  });

  it('keys rotate refuses a wrong encryption key even when a rotation is already under way', async () => {
    const ringPrefix = `${prefix}pending:`;
    const sentinel = createSentinel(
      baseOptions({
        keys: undefined,
        store: new RedisStore(client, { prefix: ringPrefix }),
        keyRotation: { encryptionKey: ENCRYPTION_KEY, rotateEverySeconds: 3600, prePublishSeconds: 600, refreshSeconds: 60 },
      }),
    );
    await sentinel.ready();
    const args = ['--redis', REDIS_URL, '--prefix', ringPrefix];
    const first = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(args, first)).toBe(0);
    const pending = (JSON.parse(first.out) as { alg: string; state: string }[]).filter((key) => key.state === 'pending');
    expect(pending.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256']);
    // A second rotation has nothing to add (one is pending for 600 s), but the wrong key is still refused.
    const wrongKey = io({ SENTINEL_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url') });
    await expect(runKeysRotate(args, wrongKey)).rejects.toThrow(/encryptionKey/);
    const again = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(args, again)).toBe(0);
    expect((JSON.parse(again.out) as { state: string }[]).filter((key) => key.state === 'pending')).toEqual(pending);
  });

  it('keys rotate dates the new key once it holds the ring lock, so waiting for it takes nothing off the pre-publication', async () => {
    const ringPrefix = `${prefix}lock-wait:`;
    const store = new RedisStore(client, { prefix: ringPrefix });
    const sentinel = createSentinel(
      baseOptions({
        keys: undefined,
        store,
        keyRotation: { encryptionKey: ENCRYPTION_KEY, algorithms: ['ES256'], rotateEverySeconds: 3600, prePublishSeconds: 600 },
      }),
    );
    await sentinel.ready();
    // Another writer holds the ring's lock for 1.5 s when the command asks for it.
    const asked = Date.now();
    expect(await store.increment('keyring-lock:default', 1500)).toBe(1);
    const rotate = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(['--redis', REDIS_URL, '--prefix', ringPrefix], rotate)).toBe(0);
    const ring = JSON.parse((await store.get('keyring:default')) as string) as { keys: RingEntry[] };
    const pending = ring.keys.find((entry) => entry.activatesAt > Date.now());
    // Written (published) after the lock was freed, it signs prePublishSeconds after that.
    expect(pending?.activatesAt).toBeGreaterThanOrEqual(asked + 1500 + 600_000);
  });

  it('keys revoke of the signing key without a successor names the environment variable it reads', async () => {
    const ringPrefix = `${prefix}revoke-no-key:`;
    const store = new RedisStore(client, { prefix: ringPrefix });
    const sentinel = createSentinel(
      baseOptions({
        keys: undefined,
        store,
        keyRotation: { encryptionKey: ENCRYPTION_KEY, algorithms: ['ES256'], rotateEverySeconds: 3600, prePublishSeconds: 600 },
      }),
    );
    await sentinel.ready();
    const ring = JSON.parse((await store.get('keyring:default')) as string) as { keys: RingEntry[] };
    const kid = ring.keys[0]?.kid as string;
    const failed = runKeysRevoke(['--kid', kid, '--redis', REDIS_URL, '--prefix', ringPrefix], io());
    await expect(failed).rejects.toThrow(/SENTINEL_KEY_ENCRYPTION_KEY/);
    // Nothing written: the key is still live.
    const after = JSON.parse((await store.get('keyring:default')) as string) as { keys: RingEntry[] };
    expect(after.keys.find((entry) => entry.kid === kid)?.revokedAt).toBeUndefined();
  });

  it('keys rotate drops the keys past their retention from the ring, as the instances do', async () => {
    const ringPrefix = `${prefix}pruned:`;
    const store = new RedisStore(client, { prefix: ringPrefix });
    const sentinel = createSentinel(
      baseOptions({
        keys: undefined,
        store,
        keyRotation: { encryptionKey: ENCRYPTION_KEY, algorithms: ['ES256'], rotateEverySeconds: 3600, prePublishSeconds: 600 },
      }),
    );
    await sentinel.ready();
    // Keys of rotations long past, as a ring written before pruning holds them: retired for days, and revoked.
    const ring = JSON.parse((await store.get('keyring:default')) as string) as { keys: RingEntry[] };
    const day = 86_400_000;
    const sealedBy = parseEncryptionKey(ENCRYPTION_KEY);
    const past = [3, 2].map((days) => newEntry('ES256', sealedBy, Date.now() - days * day, Date.now() - days * day));
    const { sealed: _erased, ...revoked } = {
      ...newEntry('ES256', sealedBy, Date.now() - 2 * day, Date.now() - 2 * day),
      revokedAt: Date.now() - 2 * day,
    };
    // The live key has signed for a day: the last of them retired that long ago.
    const live = ring.keys.map((entry) => ({ ...entry, activatesAt: Date.now() - day }));
    await store.set('keyring:default', JSON.stringify({ ...ring, keys: [...past, revoked, ...live] }), day);

    const rotate = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(['--redis', REDIS_URL, '--prefix', ringPrefix], rotate)).toBe(0);
    const listed = JSON.parse(rotate.out) as { kid: string; state: string }[];
    expect(listed.map((key) => key.state).sort()).toEqual(['active', 'pending']);
    const stored = (await store.get('keyring:default')) as string;
    for (const entry of [...past, revoked]) expect(stored).not.toContain(entry.kid);
  });

  it('keys rotate gives no new key to an algorithm the instances dropped (its key retires instead)', async () => {
    const ringPrefix = `${prefix}dropped:`;
    const store = new RedisStore(client, { prefix: ringPrefix });
    const keyRotation = { encryptionKey: ENCRYPTION_KEY, rotateEverySeconds: 3600, prePublishSeconds: 600 };
    const before = createSentinel(baseOptions({ keys: undefined, store, keyRotation: { ...keyRotation, algorithms: ['ES256', 'RS256'] } }));
    await before.ready();
    await before.close();
    // The deployment without RS256 rotates: the RS256 key is marked to retire.
    const after = createSentinel(baseOptions({ keys: undefined, store, keyRotation: { ...keyRotation, algorithms: ['ES256'] } }));
    await after.rotateKeys();
    const rotate = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRotate(['--redis', REDIS_URL, '--prefix', ringPrefix], rotate)).toBe(0);
    const listed = JSON.parse(rotate.out) as { alg: string; state: string }[];
    expect(listed.filter((key) => key.alg === 'RS256').map((key) => key.state)).toEqual(['active']);
    await after.close();
  });

  it('--account lists and revokes the keys of that account only', async () => {
    const sentinel = createSentinel(
      baseOptions({
        keys: undefined,
        store: new RedisStore(client, { prefix }),
        jwksMaxAge: 1,
        accessTokenTtl: 10,
        idTokenTtl: 10,
        keysPerAccount: true,
        keyRotation: { encryptionKey: ENCRYPTION_KEY, rotateEverySeconds: 600, prePublishSeconds: 2, refreshSeconds: 1 },
      }),
    );
    await sentinel.ready();
    const response = await call(sentinel, {
      method: 'POST',
      path: appTokenPath(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      body: 'grant_type=client_credentials',
    });
    const token = (JSON.parse(response.body as string) as { access_token: string }).access_token;
    const kid = kidOf(token);
    const serviceRing = io();
    expect(await runKeysList(['--redis', REDIS_URL, '--prefix', prefix], serviceRing)).toBe(0);
    expect(serviceRing.out).not.toContain(kid);
    const accountRing = io();
    expect(await runKeysList(['--redis', REDIS_URL, '--prefix', prefix, '--account', ACCOUNT], accountRing)).toBe(0);
    expect(accountRing.out).toContain(kid);

    const options = { accountId: ACCOUNT, consumerId: CONSUMER_UUID };
    expect((await sentinel.checkBearer(`Bearer ${token}`, options)).ok).toBe(true);
    const revoke = io({ SENTINEL_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
    expect(await runKeysRevoke(['--kid', kid, '--account', ACCOUNT, '--redis', REDIS_URL, '--prefix', prefix], revoke)).toBe(0);
    await sleep(REFRESH_MS);
    expect((await sentinel.checkBearer(`Bearer ${token}`, options)).ok).toBe(false);
  });
});
