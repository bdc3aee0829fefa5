/**
 * The key ring (`keyRotation`) of a deployment that can issue ID tokens holds an RS256 key beside ES256 by default:
 * RS256 is what every OpenID Connect client must verify (go-oidc accepts nothing else unless told) and the default of a
 * client that registered no `id_token_signed_response_alg`. Access tokens keep ES256. A ring stored before this
 * default gains its RS256 key at the first start of an instance with it: published at once, signing after
 * `prePublishSeconds`, then rotated in step with ES256. Run on MemoryStore and on RedisStore.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelOptions, type Store } from '../src/index.js';
import { RedisStore } from '../src/stores/redis.js';
import {
  ACCOUNT_PATH,
  authorizeQuery,
  call,
  consumerToken,
  openLogin,
  postForm,
  postLogin,
  startInteraction,
  TOKEN_PATH,
} from './helpers/direct-flow.js';
import {
  ACCOUNT,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  makeSentinel,
  PASSWORD,
  REDIRECT_URI,
  USERNAME,
} from './helpers/fixtures.js';
import { headerOf } from './helpers/jwt.js';
import { pkcePair } from './helpers/pkce.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('hardening-keyring-rs256');
const PREFIX = `sentinel-rs256-test:${randomBytes(8).toString('hex')}:`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64url');
const _FORM = 'application/x-www-form-urlencoded';

let client: Redis | undefined;
let stores = 0;

const STORES: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  [
    'RedisStore',
    () => {
      if (client === undefined) throw new Error('no Redis client');
      stores += 1;
      return new RedisStore(client, { prefix: `${PREFIX}${stores}:` });
    },
  ],
];

beforeAll(() => {
  if (redis.skip) return;
  requireAvailable(redis);
  client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  if (client === undefined) return;
  await deleteByPrefix(client, PREFIX);
  client.disconnect();
});

let now = Date.UTC(2026, 0, 1);
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now);
}
function advance(seconds: number): void {
  now += seconds * 1000;
  vi.setSystemTime(now);
}

afterEach(() => {
  vi.useRealTimers();
});

function instance(
  store: Store,
  rotation: Partial<NonNullable<SentinelOptions['keyRotation']>> = {},
  overrides: Partial<SentinelOptions> = {},
) {
  const warnings: string[] = [];
  const sentinel = makeSentinel({
    keys: undefined,
    store,
    jwksMaxAge: 10,
    accessTokenTtl: 120,
    idTokenTtl: 60,
    keyRotation: { encryptionKey: ENCRYPTION_KEY, rotateEverySeconds: 600, prePublishSeconds: 20, refreshSeconds: 10, ...rotation },
    logger: { warn: (message: string) => warnings.push(message) },
    ...overrides,
  });
  return { sentinel, warnings };
}

const algorithmsOf = (sentinel: Sentinel): string[] =>
  sentinel
    .jwks()
    .keys.map((key) => String(key.alg))
    .sort();

/** The ID token of a code flow with `openid`, for the confidential app (which registered no ID token algorithm). */
async function idToken(sentinel: Sentinel): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ scope: 'openid', nonce: 'n-1', code_challenge: challenge, code_challenge_method: 'S256' });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const code = new URL(String(login.headers.location)).searchParams.get('code') as string;
  const body = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI };
  const response = await postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({ ...body, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
  );
  expect(response.status).toBe(200);
  return (JSON.parse(response.body as string) as { id_token: string }).id_token;
}

async function advertised(sentinel: Sentinel): Promise<string[]> {
  const response = await call(sentinel, { path: `${ACCOUNT_PATH}/.well-known/openid-configuration` });
  expect(response.status).toBe(200);
  return (JSON.parse(response.body as string) as { id_token_signing_alg_values_supported: string[] }).id_token_signing_alg_values_supported;
}

describe.each(STORES)('keyRotation on %s', (storeName, newStore) => {
  const skip = storeName === 'RedisStore' && redis.skip;

  it.skipIf(skip)('an OpenID Connect ring holds ES256 and RS256: access tokens ES256, ID tokens RS256, no warning', async () => {
    const { sentinel, warnings } = instance(newStore());
    await sentinel.ready();
    expect(algorithmsOf(sentinel)).toEqual(['ES256', 'RS256']);
    expect(headerOf(await consumerToken(sentinel)).alg).toBe('ES256');
    const token = await idToken(sentinel);
    expect(headerOf(token).alg).toBe('RS256');
    const verified = await jwtVerify(token, createLocalJWKSet(sentinel.jwks()), { algorithms: ['RS256'] });
    expect(verified.payload.aud).toBe(CLIENT_ID);
    expect((await advertised(sentinel)).sort()).toEqual(['ES256', 'RS256']);
    expect(warnings.filter((message) => /RS256/.test(message))).toEqual([]);
  });

  it.skipIf(skip)(
    'a ring that cannot issue ID tokens stays ES256 only; algorithms given explicitly are kept, with the warning',
    async () => {
      const ccOnly = {
        apps: [
          {
            accountId: ACCOUNT,
            clientId: CC_ONLY_CLIENT_ID,
            clientSecret: CC_ONLY_SECRET,
            redirectUris: [],
            grantTypes: ['client_credentials' as const],
          },
        ],
      };
      const plain = instance(newStore(), {}, ccOnly);
      await plain.sentinel.ready();
      expect(algorithmsOf(plain.sentinel)).toEqual(['ES256']);
      expect(plain.warnings).toEqual([]);

      const explicit = instance(newStore(), { algorithms: ['ES256'] });
      await explicit.sentinel.ready();
      expect(algorithmsOf(explicit.sentinel)).toEqual(['ES256']);
      expect(explicit.warnings.some((message) => /no RS256 key/.test(message))).toBe(true);
      expect(headerOf(await idToken(explicit.sentinel)).alg).toBe('ES256');
    },
  );

  it.skipIf(skip)('a ring stored without RS256 gains one at start: published at once, signing after prePublishSeconds', async () => {
    fakeClock();
    const store = newStore();
    // An instance of before the default: its ring holds ES256 only.
    const old = instance(store, { algorithms: ['ES256'] });
    await old.sentinel.ready();
    const [oldKey] = old.sentinel.jwks().keys;
    expect(algorithmsOf(old.sentinel)).toEqual(['ES256']);

    advance(60);
    const upgraded = instance(store);
    await upgraded.sentinel.ready();
    // Published now (a new ES256 key with it, so that both rotate in step from here on), signing only after the
    // pre-publication delay: a relying party may hold a JWKS without it until then.
    expect(algorithmsOf(upgraded.sentinel)).toEqual(['ES256', 'ES256', 'RS256']);
    expect(headerOf(await consumerToken(upgraded.sentinel)).kid).toBe(oldKey?.kid);
    expect(headerOf(await idToken(upgraded.sentinel))).toMatchObject({ alg: 'ES256', kid: oldKey?.kid });
    expect(await advertised(upgraded.sentinel)).toEqual(['ES256']);

    // The old instance publishes it too once it has refreshed (refreshSeconds 10).
    advance(11);
    await consumerToken(old.sentinel);
    expect(algorithmsOf(old.sentinel)).toEqual(['ES256', 'ES256', 'RS256']);

    advance(10);
    const rsa = upgraded.sentinel.jwks().keys.find((key) => key.alg === 'RS256');
    const token = await idToken(upgraded.sentinel);
    expect(headerOf(token)).toMatchObject({ alg: 'RS256', kid: rsa?.kid });
    await jwtVerify(token, createLocalJWKSet(old.sentinel.jwks()), { algorithms: ['RS256'] });
    expect(headerOf(await consumerToken(upgraded.sentinel)).kid).not.toBe(oldKey?.kid);
    expect((await advertised(upgraded.sentinel)).sort()).toEqual(['ES256', 'RS256']);
    expect(upgraded.warnings).toEqual([]);
  });

  it.skipIf(skip)('revoking the RS256 key replaces it at once; access tokens keep their ES256 key', async () => {
    const { sentinel } = instance(newStore());
    await sentinel.ready();
    const before = await idToken(sentinel);
    const revoked = String(headerOf(before).kid);
    const accessKid = headerOf(await consumerToken(sentinel)).kid;
    expect(await sentinel.revokeKey(revoked)).toBe(true);
    const after = await idToken(sentinel);
    expect(headerOf(after).alg).toBe('RS256');
    expect(headerOf(after).kid).not.toBe(revoked);
    await jwtVerify(after, createLocalJWKSet(sentinel.jwks()), { algorithms: ['RS256'] });
    expect(sentinel.jwks().keys.map((key) => key.kid)).not.toContain(revoked);
    expect(headerOf(await consumerToken(sentinel)).kid).toBe(accessKid);
  });

  it.skipIf(skip)('the RS256 key rotates on the ES256 schedule', async () => {
    fakeClock();
    const { sentinel } = instance(newStore());
    await sentinel.ready();
    const first = new Map(sentinel.jwks().keys.map((key) => [String(key.alg), String(key.kid)]));
    // 600 s period, 20 s pre-publication: at 581 s the next keys are due, and published.
    advance(581);
    await consumerToken(sentinel);
    expect(algorithmsOf(sentinel)).toEqual(['ES256', 'ES256', 'RS256', 'RS256']);
    expect(headerOf(await idToken(sentinel)).kid).toBe(first.get('RS256'));
    advance(21);
    const token = await idToken(sentinel);
    expect(headerOf(token).alg).toBe('RS256');
    expect(headerOf(token).kid).not.toBe(first.get('RS256'));
    expect(headerOf(await consumerToken(sentinel)).kid).not.toBe(first.get('ES256'));
  });
});
