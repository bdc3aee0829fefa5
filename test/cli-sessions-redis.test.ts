/**
 * `sentinel-idp sessions list|end` against the Redis the instances share: the CLI sees the sessions a running
 * instance made, ends one by sid and the rest by user, the instance refuses the ended tokens at once, and the
 * instance's delivery loop sends the logout tokens the CLI queued (validated per §2.6 by a real receiver).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CLIIO } from '../src/cli/io.js';
import { runSessionsEnd, runSessionsList } from '../src/cli/sessions.js';
import type { Sentinel } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { MAIN_APP, signInWithSession, tokenStanding } from './helpers/logout-flow.js';
import { type LogoutReceiver, startReceiver } from './helpers/logout-receiver.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('cli-sessions-redis');
const PREFIX = `sentinel-cli-sessions-test:${randomBytes(8).toString('hex')}:`;
const ENDED = { guard: false, introspection: false, refresh: false };
const LIVE = { guard: true, introspection: true, refresh: true };

function io(): CLIIO & { out: string; err: string } {
  const captured = {
    out: '',
    err: '',
    env: {},
    stdout(text: string) {
      captured.out += text;
    },
    stderr(text: string) {
      captured.err += text;
    },
    readSecret: async () => null,
  };
  return captured;
}

describe.skipIf(redis.skip)('sentinel-idp sessions list|end', () => {
  let client: Redis;
  let sentinel: Sentinel;
  let receiver: LogoutReceiver;

  beforeAll(async () => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    receiver = await startReceiver({
      issuer: `http://localhost/sentinel/api/account/${ACCOUNT}`,
      clientId: CLIENT_ID,
      jwks: () => sentinel.jwks(),
    });
    const apps = (baseOptions().apps ?? []).map((app) =>
      app.clientId === CLIENT_ID ? { ...app, backchannelLogoutUri: receiver.uri } : app,
    );
    sentinel = makeSentinel({ apps, store: new RedisStore(client, { prefix: PREFIX }), clientJwks: { allowPrivateAddresses: true } });
  });

  afterAll(async () => {
    await sentinel?.close();
    await receiver?.close();
    if (client !== undefined) {
      await deleteByPrefix(client, PREFIX);
      client.disconnect();
    }
  });

  it('lists the sessions, ends one by sid and the rest by user; the instance refuses and delivers', async () => {
    const first = await signInWithSession(sentinel);
    const second = await signInWithSession(sentinel);
    const common = ['--account', ACCOUNT, '--redis', REDIS_URL, '--prefix', PREFIX];

    const listed = io();
    expect(await runSessionsList([...common, '--user', USER_ID], listed)).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      { sid: first.tokens.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID] },
      { sid: second.tokens.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID] },
    ]);

    const one = io();
    expect(await runSessionsEnd([...common, '--sid', first.tokens.sid], one)).toBe(0);
    expect(JSON.parse(one.out)).toEqual({ ended: 1 });
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, second.tokens, MAIN_APP)).toEqual(LIVE);
    await receiver.waitFor(1);
    expect(receiver.received[0]?.sid).toBe(first.tokens.sid);

    const again = io();
    expect(await runSessionsEnd([...common, '--sid', first.tokens.sid], again)).toBe(1);
    expect(JSON.parse(again.out)).toEqual({ ended: 0 });
    expect(again.err).toMatch(/no such session/);

    const everyone = io();
    expect(await runSessionsEnd([...common, '--user', USER_ID], everyone)).toBe(0);
    expect(JSON.parse(everyone.out)).toEqual({ ended: 1 });
    expect(await tokenStanding(sentinel, second.tokens, MAIN_APP)).toEqual(ENDED);
    await receiver.waitFor(2);
    expect(receiver.received.map((entry) => entry.sid)).toEqual([first.tokens.sid, second.tokens.sid]);
    expect(receiver.problems).toEqual([]);

    const none = io();
    expect(await runSessionsList([...common, '--user', USER_ID], none)).toBe(0);
    expect(JSON.parse(none.out)).toEqual([]);
  }, 30_000);

  it('refuses a wrong command line before connecting', async () => {
    const base = ['--account', ACCOUNT, '--redis', REDIS_URL];
    await expect(runSessionsEnd([...base, '--sid', 'x', '--user', USER_ID], io())).rejects.toThrow(/--sid or --user/);
    await expect(runSessionsEnd(base, io())).rejects.toThrow(/--sid or --user/);
    await expect(runSessionsList(['--account', ACCOUNT, '--user', USER_ID], io())).rejects.toThrow(/--redis is required/);
    await expect(runSessionsList([...base, '--user', USER_ID, '--sid', 'x'], io())).rejects.toThrow(/--sid belongs to sessions end/);
    await expect(runSessionsList(['--user', USER_ID, '--redis', REDIS_URL], io())).rejects.toThrow(/--account is required/);
    await expect(runSessionsEnd([...base, '--user', USER_ID, '--redis', 'http://nope'], io())).rejects.toThrow(/only once/);
    // A URL of another scheme is a wrong command line (exit 2), as a wrong --database is, not a failure to connect.
    await expect(runSessionsList(['--account', ACCOUNT, '--user', USER_ID, '--redis', 'http://x'], io())).rejects.toMatchObject({
      name: 'UsageError',
      message: expect.stringMatching(/--redis must be a redis:\/\/ or rediss:\/\/ URL/),
    });
    const help = io();
    expect(await runSessionsList(['--help'], help)).toBe(0);
    expect(help.out).toMatch(/sessions end --account/);
  });
});
