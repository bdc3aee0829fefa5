/**
 * Restart-free rotation seen by a real resource server: jose's `createRemoteJWKSet` fetches the service's JWKS
 * over HTTP, caches it for the advertised max-age, and verifies every token issued while keys rotate every 3 s.
 * Its cooldown is set long, so it cannot rescue itself by refetching on an unknown kid: the tokens verify because
 * each key was in the JWKS for longer than the max-age before it signed (pre-publication).
 *
 * The 8 s run on a moved clock, 50 ms a step: the ring (rotation, refresh, pre-publication) and jose's JWKS cache
 * (max-age, cooldown) both read the time through `Date.now()`, so each sees the 8 s pass without the test waiting
 * for them.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { MemoryStore, type Sentinel } from '../src/index.js';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel } from './helpers/fixtures.js';
import { advanceClock } from './helpers/clock.js';
import { listen, type MountedHost } from './helpers/hosts.js';

describe('key rotation with jose createRemoteJWKSet as the resource server', () => {
  let sentinel: Sentinel;
  let host: MountedHost;

  beforeAll(async () => {
    sentinel = makeSentinel({
      keys: undefined,
      store: new MemoryStore(),
      jwksMaxAge: 1,
      accessTokenTtl: 10,
      // ES256 alone: three rotations in 8 s leave no room for an RSA key's generation (100 ms and more) in each,
      // which the RS256 key of an OpenID Connect ring would add; test/hardening-keyring-rs256.test.ts covers that key.
      keyRotation: {
        encryptionKey: randomBytes(32).toString('base64url'),
        rotateEverySeconds: 3,
        prePublishSeconds: 2,
        refreshSeconds: 1,
        algorithms: ['ES256'],
      },
    });
    await sentinel.ready();
    const app = express();
    app.use(toExpress(sentinel));
    host = await listen(createServer(app));
  });

  afterAll(async () => {
    await host?.close();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('every token verifies across three rotations, without restarting anything', async () => {
    const response = await fetch(`${host.url}/sentinel/well-known/jwks`);
    expect(response.headers.get('cache-control')).toMatch(/max-age=1\b/);
    const jwks = createRemoteJWKSet(new URL(`${host.url}/sentinel/well-known/jwks`), { cacheMaxAge: 1000, cooldownDuration: 60_000 });
    const issuer = `http://localhost/sentinel/api/account/${ACCOUNT}`;
    const kids = new Set<string>();
    let failures = 0;
    for (let step = 0; step * 50 < 8000; step += 1) {
      advanceClock(step * 0.05);
      const issued = await fetch(`${host.url}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
        body: 'grant_type=client_credentials',
      });
      const { access_token: token } = (await issued.json()) as { access_token: string };
      try {
        // jose checks exp against `new Date()`, which the moved clock does not reach: give it the moved time.
        const { protectedHeader } = await jwtVerify(token, jwks, { issuer, typ: 'at+jwt', currentDate: new Date(Date.now()) });
        kids.add(protectedHeader.kid as string);
      } catch {
        failures += 1;
      }
    }
    expect(failures).toBe(0);
    expect(kids.size).toBeGreaterThanOrEqual(3);
  }, 20_000);
});
