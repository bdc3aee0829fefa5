/**
 * A trusted issuer's keys from its `jwksUri`: fetched once and cached, fetched again when a JWT names a `kid` the
 * cached set lacks or, naming none, is verified by none of the cached keys (the issuer rotated), and no more than
 * once per interval however many made-up `kid`s or forged signatures arrive.
 * The brand's key server is a real HTTP server on loopback (`clientJwks.allowPrivateAddresses`, development only)
 * that counts its requests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT, BRAND_ISSUER, type BrandKey, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

let published: BrandKey[] = [];
let fetches = 0;
let server: Server;
let jwksUri = '';

beforeAll(async () => {
  server = createServer((_request, response) => {
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
