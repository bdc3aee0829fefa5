/**
 * A trusted issuer's keys from its `jwksUri`: fetched once and cached, fetched again when a JWT names a `kid` the
 * cached set lacks or, naming none, is verified by none of the cached keys (the issuer rotated), and no more than
 * once per interval however many made-up `kid`s or forged signatures arrive.
 * The brand's key server is a real HTTP server on loopback (`clientJwks.allowPrivateAddresses`, development only)
 * that counts its requests; a request to a `/hang/` path is held unanswered (a client's key host that hangs).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ConfigurationError, isConfigurationError, type Sentinel } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, BRAND_ISSUER, type BrandKey, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { ASSERTION_TYPE, clientAssertion, clientKey } from './helpers/key-bound.js';

// Every signature check node:crypto runs for the service, counted (the checks themselves run as they would).
const verifications = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const verify = ((...args: Parameters<typeof actual.verify>) => {
    verifications.count += 1;
    return (actual.verify as (...a: unknown[]) => unknown)(...args);
  }) as typeof actual.verify;
  return { ...actual, default: { ...actual, verify }, verify };
});

let published: BrandKey[] = [];
let fetches = 0;
let server: Server;
let jwksUri = '';
/** The held `/hang/` requests' answers; `heldChanged` runs whenever one is held. */
const held: (() => void)[] = [];
let heldChanged: () => void = () => {};

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url?.startsWith('/hang/') === true) {
      held.push(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [] })));
      heldChanged();
      return;
    }
    fetches += 1;
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: published.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
});
afterAll(() => {
  server.close();
});

function sentinelFor(first: BrandKey): Sentinel {
  return makeSentinel({
    ...exchangeOptions(first),
    trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri }],
    clientJwks: { allowPrivateAddresses: true },
  });
}

function bearer(sentinel: Sentinel, assertion: string) {
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT }).toString());
}

describe("a trusted issuer's key set", () => {
  it('is fetched once and cached across requests', async () => {
    const key = await brandKey();
    published = [key];
    fetches = 0;
    const sentinel = sentinelFor(key);
    for (let i = 0; i < 5; i += 1) expect((await bearer(sentinel, await brandJWT(key))).status).toBe(200);
    expect(fetches).toBe(1);
  });

  it('is fetched again for a kid it lacks: a rotated key works at once', async () => {
    const old = await brandKey();
    published = [old];
    fetches = 0;
    const sentinel = sentinelFor(old);
    expect((await bearer(sentinel, await brandJWT(old))).status).toBe(200);
    const rotated = await brandKey();
    published = [old, rotated];
    const response = await bearer(sentinel, await brandJWT(rotated));
    expect(response.status, response.body).toBe(200);
    expect(fetches).toBe(2);
  });

  it('is fetched again for a JWT naming no kid that the cached keys do not verify: a rotated key works at once', async () => {
    const old = await brandKey();
    published = [old];
    fetches = 0;
    const sentinel = sentinelFor(old);
    expect((await bearer(sentinel, await brandJWT(old, {}, { kid: undefined }))).status).toBe(200);
    // The issuer replaced its key, and its JWTs name none: the cached (old) key fits the algorithm but fails.
    const rotated = await brandKey();
    published = [rotated];
    const response = await bearer(sentinel, await brandJWT(rotated, {}, { kid: undefined }));
    expect(response.status, response.body).toBe(200);
    expect(fetches).toBe(2);
    // Forged JWTs naming no kid refresh no more often than made-up kids do: the refresh just made covers them all.
    const stranger = await brandKey();
    for (let i = 0; i < 5; i += 1) {
      const refused = await bearer(sentinel, await brandJWT(stranger, {}, { kid: undefined }));
      expect(jsonOf(refused).error_description).toMatch(/not signed by a key of its trusted issuer/);
    }
    expect(fetches).toBe(2);
  });

  it('is not tried twice by a JWT naming no kid when the refresh interval hands back the same keys', async () => {
    // Three keys of the issuer that name no kid: a JWT naming none may be any of theirs, so each is tried.
    const keys = await Promise.all([brandKey(), brandKey(), brandKey()]);
    for (const key of keys) delete key.publicJwk.kid;
    published = keys;
    fetches = 0;
    const sentinel = sentinelFor(keys[0] as BrandKey);
    expect((await bearer(sentinel, await brandJWT(keys[2] as BrandKey, {}, { kid: undefined }))).status).toBe(200);
    const stranger = await brandKey();
    // The first forged JWT refreshes the set (a rotation could explain it) and tries the fetched keys.
    expect((await bearer(sentinel, await brandJWT(stranger, {}, { kid: undefined }))).status).toBe(400);
    expect(fetches).toBe(2);
    for (let i = 0; i < 3; i += 1) {
      verifications.count = 0;
      const refused = await bearer(sentinel, await brandJWT(stranger, {}, { kid: undefined }));
      expect(jsonOf(refused).error_description).toMatch(/not signed by a key of its trusted issuer/);
      // One check per key: the refresh within its interval changed nothing, so nothing is checked again.
      expect(verifications.count).toBe(3);
    }
    expect(fetches).toBe(2);
  });

  it('is refreshed at most once per interval however many unknown kids arrive', async () => {
    const key = await brandKey();
    published = [key];
    fetches = 0;
    const sentinel = sentinelFor(key);
    expect((await bearer(sentinel, await brandJWT(key))).status).toBe(200);
    for (let i = 0; i < 10; i += 1) {
      const stranger = await brandKey(randomUUID());
      const refused = await bearer(sentinel, await brandJWT(stranger));
      expect(refused.status).toBe(400);
      expect(jsonOf(refused).error_description).toMatch(/not signed by a key of its trusted issuer/);
    }
    // The first unknown kid refreshed the set; the nine after it were answered from the cache.
    expect(fetches).toBe(2);
    expect((await bearer(sentinel, await brandJWT(key))).status).toBe(200);
  });
});

describe("a trusted issuer's plain http jwksUri", () => {
  // No fetch takes plain http without clientJwks.allowPrivateAddresses (development only): such an entry would fail
  // every JWT of its issuer at run time, so it is refused when the service is made, naming the issuer.
  it('is refused at configuration unless clientJwks.allowPrivateAddresses, and https is taken', async () => {
    const key = await brandKey();
    const options = (uri: string) => ({
      ...exchangeOptions(key),
      trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri: uri }],
    });
    let refused: unknown;
    try {
      makeSentinel(options('http://id.brand.example/jwks.json'));
    } catch (error) {
      refused = error;
    }
    expect(isConfigurationError(refused)).toBe(true);
    expect((refused as ConfigurationError).field).toBe('trustedIssuers[0].jwksUri');
    expect((refused as Error).message).toContain(BRAND_ISSUER);
    expect((refused as Error).message).toMatch(/must be an https URL/);
    expect(() => makeSentinel({ ...options('HTTP://id.brand.example/jwks.json') })).toThrow(/must be an https URL/);
    expect(() => makeSentinel({ ...options(jwksUri), clientJwks: { allowPrivateAddresses: true } })).not.toThrow();
    expect(() => makeSentinel(options('https://id.brand.example/jwks.json'))).not.toThrow();
  });
});

describe("a trusted issuer's key set and apps' key sets", () => {
  it("is fetched while every slot for fetching apps' key sets is held", async () => {
    const key = await brandKey();
    published = [key];
    fetches = 0;
    const origin = new URL(jwksUri).origin;
    const keyedApp = (clientId: string, path: string) => ({
      accountId: ACCOUNT,
      clientId,
      tokenEndpointAuthMethod: 'private_key_jwt' as const,
      jwksUri: `${origin}${path}`,
      redirectUris: [],
      grantTypes: ['client_credentials' as const],
    });
    const hanging = 'c0ffee00-1111-4222-8333-000000000001';
    const other = 'c0ffee00-1111-4222-8333-000000000002';
    const base = exchangeOptions(key);
    const sentinel = makeSentinel({
      ...base,
      apps: [...(base.apps ?? []), keyedApp(hanging, '/hang/keys.json'), keyedApp(other, '/other-keys.json')],
      trustedIssuers: [{ accountId: ACCOUNT, issuer: BRAND_ISSUER, jwksUri }],
      // One slot, and a deadline the held fetch cannot reach while the test runs.
      clientJwks: { allowPrivateAddresses: true, maxConcurrentFetches: 1, timeoutMs: 30_000 },
    });
    const clientKeys = await clientKey();
    const appToken = async (clientId: string) =>
      postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await clientAssertion(clientKeys, {}, clientId),
        }).toString(),
      );
    const isHeld = new Promise<void>((resolve) => {
      heldChanged = resolve;
    });
    const holding = appToken(hanging);
    await isHeld;
    // Every slot for apps' key sets is taken: another app's key set is refused at once...
    const refused = await appToken(other);
    expect(refused.status).toBe(401);
    expect(jsonOf(refused).error_description).toMatch(/1 key sets are being fetched already/);
    // ...and the trusted issuer's is fetched all the same.
    const response = await bearer(sentinel, await brandJWT(key));
    expect(response.status, response.body).toBe(200);
    expect(fetches).toBe(1);
    // Answer the held fetch and any after it (the empty set lacks the assertion's kid: a refetch follows).
    heldChanged = () => {
      for (const answer of held.splice(0)) answer();
    };
    heldChanged();
    expect((await holding).status).toBe(401);
  });
});
