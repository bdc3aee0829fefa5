/**
 * `sentinel-idp sessions list|end` against the Redis the instances share: the CLI sees the sessions a running
 * instance made, ends one by sid and the rest by user, the instance refuses the ended tokens at once, and the
 * instance's delivery loop sends the logout tokens the CLI queued (validated per §2.6 by a real receiver).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeysList } from '../src/cli/keys-ring.js';
import { runSessionsEnd, runSessionsList } from '../src/cli/sessions.js';
import { type AppStore, hashClientSecret, MemoryAppStore, type Sentinel } from '../src/index.js';
import { LogoutQueue } from '../src/logout/logout-queue.js';
import { queueLogoutTokens } from '../src/logout/queue-logout-tokens.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { type FlowApp, MAIN_APP, signInWithSession, tokenStanding } from './helpers/logout-flow.js';
import { type LogoutReceiver, startReceiver } from './helpers/logout-receiver.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';
import { capturedIO } from './helpers/cli-io.js';

const redis = await sharedRedis('cli-sessions-redis');
const PREFIX = `sentinel-cli-sessions-test:${randomBytes(8).toString('hex')}:`;
const ENDED = { guard: false, introspection: false, refresh: false };
const ISSUER_OF_ACCOUNT = `http://localhost/sentinel/api/account/${ACCOUNT}`;
/** An app of the host's registry whose client id is an https URL (an OpenID Federation entity id, say). */
const HTTPS_APP: FlowApp = {
  clientId: 'https://rp.example.com',
  clientSecret: 'secret-of-the-https-app-0123456789',
  redirectUri: 'https://rp.example.com/cb',
};
const LIVE = { guard: true, introspection: true, refresh: true };

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

    const listed = capturedIO();
    expect(await runSessionsList([...common, '--user', USER_ID], listed)).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      { sid: first.tokens.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID] },
      { sid: second.tokens.sid, authTime: expect.any(Number), clientIds: [CLIENT_ID] },
    ]);

    const one = capturedIO();
    expect(await runSessionsEnd([...common, '--sid', first.tokens.sid], one)).toBe(0);
    expect(JSON.parse(one.out)).toEqual({ ended: 1 });
    expect(await tokenStanding(sentinel, first.tokens, MAIN_APP)).toEqual(ENDED);
    expect(await tokenStanding(sentinel, second.tokens, MAIN_APP)).toEqual(LIVE);
    await receiver.waitFor(1);
    expect(receiver.received[0]?.sid).toBe(first.tokens.sid);

    const again = capturedIO();
    expect(await runSessionsEnd([...common, '--sid', first.tokens.sid], again)).toBe(1);
    expect(JSON.parse(again.out)).toEqual({ ended: 0 });
    expect(again.err).toMatch(/no such session/);

    const everyone = capturedIO();
    expect(await runSessionsEnd([...common, '--user', USER_ID], everyone)).toBe(0);
    expect(JSON.parse(everyone.out)).toEqual({ ended: 1 });
    expect(await tokenStanding(sentinel, second.tokens, MAIN_APP)).toEqual(ENDED);
    await receiver.waitFor(2);
    expect(receiver.received.map((entry) => entry.sid)).toEqual([first.tokens.sid, second.tokens.sid]);
    expect(receiver.problems).toEqual([]);

    const none = capturedIO();
    expect(await runSessionsList([...common, '--user', USER_ID], none)).toBe(0);
    expect(JSON.parse(none.out)).toEqual([]);
  }, 30_000);

  it('refuses a wrong command line before connecting', async () => {
    const base = ['--account', ACCOUNT, '--redis', REDIS_URL];
    await expect(runSessionsEnd([...base, '--sid', 'x', '--user', USER_ID], capturedIO())).rejects.toThrow(/--sid or --user/);
    await expect(runSessionsEnd(base, capturedIO())).rejects.toThrow(/--sid or --user/);
    await expect(runSessionsList(['--account', ACCOUNT, '--user', USER_ID], capturedIO())).rejects.toThrow(/--redis is required/);
    await expect(runSessionsList([...base, '--user', USER_ID, '--sid', 'x'], capturedIO())).rejects.toThrow(
      /--sid belongs to sessions end/,
    );
    await expect(runSessionsList(['--user', USER_ID, '--redis', REDIS_URL], capturedIO())).rejects.toThrow(/--account is required/);
    await expect(runSessionsEnd([...base, '--user', USER_ID, '--redis', 'http://nope'], capturedIO())).rejects.toThrow(/only once/);
    // A URL of another scheme is a wrong command line (exit 2), as a wrong --database is, not a failure to connect.
    await expect(runSessionsList(['--account', ACCOUNT, '--user', USER_ID, '--redis', 'http://x'], capturedIO())).rejects.toMatchObject({
      name: 'UsageError',
      message: expect.stringMatching(/--redis must be a redis:\/\/ or rediss:\/\/ URL/),
    });
    const help = capturedIO();
    expect(await runSessionsList(['--help'], help)).toBe(0);
    expect(help.out).toMatch(/sessions end --account/);
  });

  it("refuses a --prefix the instances' RedisStore could not have as a usage error, before connecting", async () => {
    // An unclosed "{" was refused by the store only once connected: exit 1 instead of 2, and the open connection
    // kept the process from ever ending.
    const base = ['--account', ACCOUNT, '--redis', REDIS_URL, '--prefix', '{idp:'];
    const refusal = { name: 'UsageError', message: expect.stringMatching(/^--prefix must not open a '\{' it does not close/) };
    await expect(runSessionsList([...base, '--user', USER_ID], capturedIO())).rejects.toMatchObject(refusal);
    await expect(runKeysList(base, capturedIO())).rejects.toMatchObject(refusal);
    // A closed hash tag (Redis Cluster) is a prefix the store takes, and so does the CLI.
    const tagged = capturedIO();
    expect(await runSessionsList(['--account', ACCOUNT, '--redis', REDIS_URL, '--prefix', `{${PREFIX}}:`, '--user', USER_ID], tagged)).toBe(
      0,
    );
    expect(JSON.parse(tagged.out)).toEqual([]);
  });
});

describe.skipIf(redis.skip)('sentinel-idp sessions end and an https client id', () => {
  let client: Redis;
  const running: { close(): Promise<void> }[] = [];

  beforeAll(() => {
    requireAvailable(redis);
    client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    for (const item of running.reverse()) await item.close();
    if (client !== undefined) {
      await deleteByPrefix(client, PREFIX);
      client.disconnect();
    }
  });

  it('with documents off, the app is a registry app: its grants end and it gets its logout token, as with endSession', async () => {
    const prefix = `${PREFIX}https-registry:`;
    let sentinel: Sentinel | undefined;
    const receiver = await startReceiver({
      issuer: ISSUER_OF_ACCOUNT,
      clientId: HTTPS_APP.clientId,
      jwks: () => (sentinel as Sentinel).jwks(),
    });
    running.push(receiver);
    const registry = new MemoryAppStore([
      {
        accountId: ACCOUNT,
        clientId: HTTPS_APP.clientId,
        clientSecretHash: hashClientSecret(HTTPS_APP.clientSecret as string),
        redirectUris: [HTTPS_APP.redirectUri],
        grantTypes: ['authorization_code', 'refresh_token'],
        tokenEndpointAuthMethod: 'client_secret_basic',
        backchannelLogoutUri: receiver.uri,
      },
    ]);
    sentinel = makeSentinel({
      apps: [],
      appStore: registry,
      store: new RedisStore(client, { prefix }),
      clientJwks: { allowPrivateAddresses: true },
    });
    running.push(sentinel);
    expect(sentinel.config.clientIdMetadataDocuments.enabled).toBe(false);
    const { tokens } = await signInWithSession(sentinel, HTTPS_APP);

    const ended = capturedIO();
    expect(await runSessionsEnd(['--account', ACCOUNT, '--user', USER_ID, '--redis', REDIS_URL, '--prefix', prefix], ended)).toBe(0);
    expect(JSON.parse(ended.out)).toEqual({ ended: 1 });
    expect(await tokenStanding(sentinel, tokens, HTTPS_APP)).toEqual(ENDED);
    await receiver.waitFor(1, 10_000);
    expect(receiver.received).toEqual([{ sid: tokens.sid, sub: USER_ID, jti: expect.any(String), answered: 200 }]);
    expect(receiver.problems).toEqual([]);
  }, 30_000);

  it('with documents on, an instance drops what the CLI queued for a document client, without looking it up', async () => {
    const prefix = `${PREFIX}https-document:`;
    const store = new RedisStore(client, { prefix });
    const jobs = `${prefix}queue:{logout}:jobs`;
    // What the CLI queues when it ends a session an agent signed in through: it cannot tell an agent from an app.
    const cli = { store, logoutQueue: new LogoutQueue(store), emit: () => {} };
    const agent = 'https://agent.example.com/client.json';
    await queueLogoutTokens(cli, { accountId: ACCOUNT, userId: USER_ID, sid: 'sid-of-the-agent', clientIds: [agent] });
    expect(await client.hlen(jobs)).toBe(1);
    // Every lookup of a document client asks the registry whether the account exists first (it does: then the
    // document would be fetched).
    const registry = new MemoryAppStore([
      {
        accountId: ACCOUNT,
        clientId: HTTPS_APP.clientId,
        clientSecretHash: hashClientSecret(HTTPS_APP.clientSecret as string),
        redirectUris: [HTTPS_APP.redirectUri],
        grantTypes: ['authorization_code'],
        tokenEndpointAuthMethod: 'client_secret_basic',
      },
    ]);
    let documentLookups = 0;
    const apps: AppStore = {
      findApp: (accountId, clientId) => registry.findApp(accountId, clientId),
      hasAccount: (accountId) => {
        documentLookups++;
        return registry.hasAccount(accountId);
      },
    };
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      apps: [],
      appStore: apps,
      store,
      clientIdMetadataDocuments: { enabled: true },
      onError: (error) => errors.push(error),
    });
    running.push(sentinel);
    const deadline = Date.now() + 5000;
    while ((await client.hlen(jobs)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await client.hlen(jobs)).toBe(0);
    expect(documentLookups).toBe(0);
    expect(errors).toEqual([]);
  }, 30_000);
});
