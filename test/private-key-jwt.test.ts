/**
 * private_key_jwt (RFC 7523): every bad assertion is a 401 `invalid_client` that issues nothing, and a hostile
 * `jwks_uri` (hanging, redirecting, huge, or pointing into the service's own network) is refused quickly with
 * `invalid_client` while the service keeps serving.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { createSentinel, hashClientSecret, isConfigurationError, type App, type SentinelEvent } from '../src/index.js';
import { advanceClock, movableClock } from './helpers/clock.js';
import { ACCOUNT, CONSUMER_UUID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import {
  ACCOUNT_ISSUER,
  assertionAuth,
  ASSERTION_TYPE,
  clientKey,
  KEYED_CLIENT_ID,
  keyedOptions,
  keyedSentinel,
  type ClientKey,
} from './helpers/key-bound.js';

const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`;
const LEGACY_SECRET = 'legacy-secret-of-a-keyed-app-0123456789';
const open: MountedHost[] = [];
const servers: Server[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function start(
  key: ClientKey,
  app: Record<string, unknown> = {},
  allowPrivateAddresses = true,
  overrides: { staleIfErrorSeconds?: number; warnings?: string[] } = {},
) {
  const events: SentinelEvent[] = [];
  const { warnings, ...jwksOptions } = overrides;
  const sentinel = keyedSentinel(key, app, {
    onEvent: (event) => events.push(event),
    clientJwks: { timeoutMs: 500, maxBytes: 65_536, cacheSeconds: 300, allowPrivateAddresses, ...jwksOptions },
    ...(warnings === undefined ? {} : { logger: { warn: (message: string) => warnings.push(message) } }),
  });
  const mounted = await HOSTS[0]!.mount(sentinel);
  open.push(mounted);
  return { sentinel, server: mounted.server, events };
}

function token(server: unknown, form: Record<string, string>): request.Test {
  return request(server as never)
    .post(V2_PATH)
    .type('form')
    .send({ grant_type: 'client_credentials', ...form });
}

async function expectInvalidClient(server: unknown, events: SentinelEvent[], form: Record<string, string>, why: RegExp): Promise<void> {
  const response = await token(server, form);
  expect(response.status).toBe(401);
  // RFC 9110 §11.6.1: a 401 names a scheme the resource takes.
  expect(response.headers['www-authenticate']).toBe('Basic realm="sentinel", charset="UTF-8"');
  expect(response.body.error).toBe('invalid_client');
  expect(response.body.error_description).toMatch(why);
  expect(response.body.access_token).toBeUndefined();
  expect(events.filter((event) => event.type === 'token.issued')).toHaveLength(0);
}

/** A local jwks_uri server whose behaviour the test picks; counts its requests. */
async function jwksServer(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((incoming, outgoing) => {
    hits += 1;
    handler!(incoming, outgoing);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`, hits: () => hits };
}

/** A key-set host serving `keys` until `fail(true)`, then answering 503 (a client's host that went down). */
async function failingJwksServer(keys: unknown[]): Promise<{ url: string; hits: () => number; fail: (down: boolean) => void }> {
  let failing = false;
  const jwks = await jwksServer((_in, out) => {
    if (failing) out.writeHead(503).end();
    else out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  return {
    ...jwks,
    fail: (down) => {
      failing = down;
    },
  };
}

/** The public JWK of a fresh RSA key of `bits` bits, as a legacy client might still publish one. */
function rsaJwk(bits: number, kid: string): Record<string, unknown> {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' };
}

/** An RS256 assertion naming `kid` with a made-up signature: what anyone who knows the client id can send. */
function forgedRS256Assertion(kid: string): Record<string, string> {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 60;
  const claims = { iss: KEYED_CLIENT_ID, sub: KEYED_CLIENT_ID, aud: ACCOUNT_ISSUER, jti: randomUUID(), exp };
  const signature = Buffer.alloc(128, 7).toString('base64url');
  return { client_assertion_type: ASSERTION_TYPE, client_assertion: `${part({ alg: 'RS256', kid })}.${part(claims)}.${signature}` };
}

async function healthy(server: unknown): Promise<void> {
  expect((await request(server as never).get('/host/ping')).text).toBe('pong');
}

describe('private_key_jwt client assertions', () => {
  it('authenticates with a valid assertion (aud = issuer or token endpoint)', async () => {
    const key = await clientKey();
    const { server } = await start(key);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect((await token(server, await assertionAuth(key, { aud: `${ACCOUNT_ISSUER}/token` }))).status).toBe(200);
  });

  // RFC 7515 §4.1.4: kid is optional. A client in the middle of a key rotation registers two keys of one type, and
  // its library may sign without naming the key.
  it('authenticates an assertion without kid when the app has several keys that fit it, trying at most 4', async () => {
    const keys = await Promise.all([clientKey(), clientKey(), clientKey(), clientKey(), clientKey()]);
    const [first, second] = keys;
    const withoutKid = async (signer: ClientKey): Promise<Record<string, string>> => {
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: KEYED_CLIENT_ID, sub: KEYED_CLIENT_ID, aud: ACCOUNT_ISSUER, jti: randomUUID(), exp: now + 60 };
      const assertion = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).sign(signer.privateKey);
      return { client_assertion_type: ASSERTION_TYPE, client_assertion: assertion };
    };
    const { server, events } = await start(first, { jwks: { keys: [first.publicJwk, second.publicJwk] } });
    expect((await token(server, await withoutKid(second))).status).toBe(200);
    expect((await token(server, await withoutKid(first))).status).toBe(200);
    const stranger = await clientKey();
    events.splice(0);
    await expectInvalidClient(server, events, await withoutKid(stranger), /not signed by a key registered/);
    // Each try is a signature check anyone naming the client can cause: five candidate keys need a kid.
    const many = await start(first, { jwks: { keys: keys.map((key) => key.publicJwk) } });
    await expectInvalidClient(many.server, many.events, await withoutKid(keys[4] as ClientKey), /must name its key with kid/);
    expect((await token(many.server, await assertionAuth(keys[4] as ClientKey))).status).toBe(200);
  });

  it('refuses a reused assertion jti', async () => {
    const key = await clientKey();
    const { server } = await start(key);
    const form = await assertionAuth(key);
    expect((await token(server, form)).status).toBe(200);
    const replay = await token(server, form);
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/already been used/) });
  });

  it('refuses an assertion whose jti is empty or not a string', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    await expectInvalidClient(server, events, await assertionAuth(key, { jti: '' }), /needs a jti/);
    await expectInvalidClient(server, events, await assertionAuth(key, { jti: 7 }), /needs a jti/);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
  });

  it('refuses an assertion for another audience', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    await expectInvalidClient(server, events, await assertionAuth(key, { aud: 'https://other.example.com/token' }), /audience/);
  });

  it('refuses an expired assertion', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    const past = Math.floor(Date.now() / 1000) - 600;
    await expectInvalidClient(server, events, await assertionAuth(key, { iat: past - 60, exp: past }), /expired/);
  });

  // RFC 7517 §4.3 lets a key name operations beyond WebCrypto's, and a key set may list more than a public key does;
  // WebCrypto refuses either as a key's usages. Verifying is what the key is for here, and all that is asked of it.
  it('takes a key whose key_ops names verify beside operations WebCrypto would refuse, and refuses forgeries as usual', async () => {
    for (const extra of [['zzz'], ['sign'], ['encrypt', 'deriveBits']]) {
      const key = await clientKey();
      const stranger = await clientKey(key.publicJwk.kid as string);
      const registered = { ...key, publicJwk: { ...key.publicJwk, key_ops: ['verify', ...extra] } };
      const { server, events } = await start(registered);
      expect((await token(server, await assertionAuth(key))).status, String(extra)).toBe(200);
      events.length = 0;
      await expectInvalidClient(server, events, await assertionAuth(stranger), /not signed by a key registered/);
    }
    // A key_ops that does not name verify, or names it twice (RFC 7517 §4.3: no duplicates), verifies nothing.
    for (const keyOps of [['sign'], ['verify', 'verify']]) {
      const key = await clientKey();
      const { server, events } = await start({ ...key, publicJwk: { ...key.publicJwk, key_ops: keyOps } });
      await expectInvalidClient(server, events, await assertionAuth(key), /not signed by a key registered/);
    }
  });

  it('refuses an assertion signed by a key that is not registered', async () => {
    const key = await clientKey();
    const stranger = await clientKey(key.publicJwk.kid as string);
    const { server, events } = await start(key);
    await expectInvalidClient(server, events, await assertionAuth(stranger), /not signed by a key registered/);
  });

  // jose decodes the signature with atob, which skips padding and white space and ignores the unused bits of the
  // last character: each of these decodes to the client's signature, so the assertion checked would not be the
  // one presented (RFC 7515 §2, RFC 4648 §3.5). Each has a jti of its own, so none is refused as a replay.
  it('refuses an assertion whose signature is spelled otherwise, though it decodes to the one that verifies', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respellings: ((signature: string) => string)[] = [
      (signature) => `${signature}==`,
      (signature) => `${signature.slice(0, 40)} ${signature.slice(40)}`,
      (signature) => `${signature}\n`,
      // ES256: 86 characters, the last with four unused bits.
      (signature) => `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(signature.slice(-1)) | 1]}`,
    ];
    for (const respell of respellings) {
      const form = await assertionAuth(key);
      const assertion = form.client_assertion as string;
      const dot = assertion.lastIndexOf('.');
      const signature = assertion.slice(dot + 1);
      const other = respell(signature);
      expect(other).not.toBe(signature);
      expect(Buffer.from(atob(other.replace(/-/g, '+').replace(/_/g, '/')), 'latin1').equals(Buffer.from(signature, 'base64url'))).toBe(
        true,
      );
      const altered = { ...form, client_assertion: `${assertion.slice(0, dot)}.${other}` };
      await expectInvalidClient(server, events, altered, /the client assertion is not a JWT/);
      expect((await token(server, form)).status).toBe(200);
      events.splice(0);
    }
  });

  it('refuses an assertion whose iss is not its sub, and an HMAC-signed one (client_secret_jwt is not offered)', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    await expectInvalidClient(server, events, await assertionAuth(key, { iss: 'someone-else' }), /iss and sub/);
    const { SignJWT } = await import('jose');
    const now = Math.floor(Date.now() / 1000);
    const hmac = await new SignJWT({ iss: KEYED_CLIENT_ID, sub: KEYED_CLIENT_ID, aud: ACCOUNT_ISSUER, jti: 'j', exp: now + 60 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new Uint8Array(32));
    await expectInvalidClient(server, events, { client_assertion_type: ASSERTION_TYPE, client_assertion: hmac }, /./);
  });

  it('refuses a secret for a private_key_jwt app, and an assertion mixed with a secret', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    // client_secret_post failures are 400 invalid_client, as for every app (RFC 6749 §5.2: 401 only after HTTP Basic).
    const secret = await token(server, { client_id: KEYED_CLIENT_ID, client_secret: 'guess' });
    expect(secret.body).toMatchObject({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(secret.body.access_token).toBeUndefined();
    expect(events.filter((event) => event.type === 'token.issued')).toHaveLength(0);
    const mixed = await token(server, { ...(await assertionAuth(key)), client_secret: 'x' });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toBe('invalid_request');
  });

  // RFC 6749 §3.1, as for an empty client_assertion beside a secret (test/client-auth-empty-basic.test.ts).
  it('takes an assertion beside a client_secret sent without a value, and refuses a repeated one', async () => {
    const key = await clientKey();
    const { server } = await start(key);
    const empty = await token(server, { ...(await assertionAuth(key)), client_secret: '' });
    expect([empty.status, empty.body.error_description]).toEqual([200, undefined]);
    const form = new URLSearchParams({ grant_type: 'client_credentials', ...(await assertionAuth(key)) });
    const repeated = await request(server as never)
      .post(V2_PATH)
      .type('form')
      .send(`${form}&client_secret=&client_secret=`);
    expect([repeated.status, repeated.body.error]).toEqual([400, 'invalid_request']);
  });

  it('refuses an assertion beside a Basic credential that follows another in the Authorization field', async () => {
    const key = await clientKey();
    const { server, events } = await start(key);
    const basic = `Basic ${Buffer.from(`${KEYED_CLIENT_ID}:guess`).toString('base64')}`;
    // Two lines joined by the adapter (as a fetch runtime joins them), or one line with a comma: a second method.
    for (const authorization of [`Bearer abc, ${basic}`, `DPoP abc,${basic}`]) {
      const mixed = await token(server, await assertionAuth(key)).set('Authorization', authorization);
      expect([mixed.status, mixed.body.error], authorization).toEqual([400, 'invalid_request']);
    }
    expect(events.filter((event) => event.type === 'token.issued')).toHaveLength(0);
    const alone = await token(server, await assertionAuth(key)).set('Authorization', 'Bearer abc');
    expect(alone.status).toBe(200);
  });

  it("refuses a private_key_jwt app's right secret, when a host registry still keeps one for it", async () => {
    const key = await clientKey();
    const options = keyedOptions(key);
    const registry = new MemoryAppStore(createSentinel(options).config.apps);
    // A legacy row: the app moved to private_key_jwt, its old secret's hash is still stored beside its keys.
    const appStore = {
      hasAccount: (accountId: string) => registry.hasAccount(accountId),
      findApp: async (accountId: string, clientId: string): Promise<App | null> => {
        const app = await registry.findApp(accountId, clientId);
        return app?.clientId === KEYED_CLIENT_ID ? { ...app, clientSecretHash: hashClientSecret(LEGACY_SECRET) } : app;
      },
    };
    const events: SentinelEvent[] = [];
    const sentinel = createSentinel({ ...options, apps: [], appStore, onEvent: (event) => events.push(event) });
    const mounted = await HOSTS[0]!.mount(sentinel);
    open.push(mounted);
    const response = await token(mounted.server, { client_id: KEYED_CLIENT_ID, client_secret: LEGACY_SECRET });
    expect(response.body).toMatchObject({ error: 'invalid_client', error_description: 'client authentication failed' });
    expect(events.filter((event) => event.type === 'token.issued')).toHaveLength(0);
  });

  it('authenticates at the introspection endpoint too (every endpoint shares the client authentication)', async () => {
    const key = await clientKey();
    const { server } = await start(key);
    const introspect = await request(server)
      .post(`/sentinel/api/account/${ACCOUNT}/token/introspect`)
      .type('form')
      .send({ token: 'unknown', ...(await assertionAuth(key)) });
    expect(introspect.status).toBe(200);
    expect(introspect.body).toEqual({ active: false });
    const forged = await request(server)
      .post(`/sentinel/api/account/${ACCOUNT}/token/introspect`)
      .type('form')
      .send({ token: 'unknown', ...(await assertionAuth(await clientKey())) });
    expect(forged.status).toBe(401);
  });
});

// The query a client put in its `aud` is the one it sent, which a framework must not have re-encoded on the way.
describe.each(HOSTS)('an aud naming the URL posted to, on $name', (host) => {
  it('accepts the query exactly as received, and as re-serialised, and no other consumer', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key, {}, { consumerId: (id) => /^acme:\d+$/.test(id) });
    const mounted = await host.mount(sentinel);
    open.push(mounted);
    const endpoint = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
    const post = async (query: string, aud: string) =>
      request(mounted.server as never)
        .post(`${endpoint}?${query}`)
        .type('form')
        .send({ grant_type: 'client_credentials', ...(await assertionAuth(key, { aud: `http://localhost${endpoint}?${aud}` })) });
    expect((await post('state=acme:42', 'state=acme:42')).status).toBe(200);
    expect((await post('state=acme:42', 'state=acme%3A42')).status).toBe(200);
    expect((await post('state=acme%3A42', 'state=acme%3A42')).status).toBe(200);
    const other = await post('state=acme:42', 'state=acme:43');
    expect([other.status, other.body.error_description]).toEqual([401, 'the client assertion is for another audience']);
  });
});

describe('RSA keys under 2048 bits', () => {
  it('refuses an RSA key under 2048 bits in apps[].jwks at startup', async () => {
    const key = await clientKey();
    let refusal: unknown;
    try {
      keyedSentinel(key, { jwks: { keys: [key.publicJwk, rsaJwk(1024, 'legacy')] } });
    } catch (error) {
      refusal = error;
    }
    expect(isConfigurationError(refusal)).toBe(true);
    expect(String((refusal as Error).message)).toMatch(/jwks\.keys\[1\].*at least 2048 bits/);
  });

  it('drops an RSA key under 2048 bits from a fetched key set: an assertion naming it is invalid_client', async () => {
    const key = await clientKey();
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk, rsaJwk(1024, 'legacy')] }));
    });
    const errors: unknown[] = [];
    const sentinel = keyedSentinel(
      key,
      { jwks: undefined, jwksUri: jwks.url },
      { clientJwks: { allowPrivateAddresses: true }, onError: (error) => errors.push(error) },
    );
    const mounted = await HOSTS[0]!.mount(sentinel);
    open.push(mounted);
    expect((await token(mounted.server, await assertionAuth(key))).status).toBe(200);
    await expectInvalidClient(mounted.server, [], forgedRS256Assertion('legacy'), /not signed by a key registered/);
    expect(errors).toEqual([]);
  });

  it('answers invalid_client, not a server error, for such a key a host registry serves', async () => {
    const key = await clientKey();
    const options = keyedOptions(key);
    const registry = new MemoryAppStore(createSentinel(options).config.apps);
    // A host's own registry is not checked at startup: it may still hold a legacy key.
    const legacy = rsaJwk(1024, 'legacy');
    const appStore = {
      hasAccount: (accountId: string) => registry.hasAccount(accountId),
      findApp: async (accountId: string, clientId: string): Promise<App | null> => {
        const app = await registry.findApp(accountId, clientId);
        return app?.clientId === KEYED_CLIENT_ID ? { ...app, jwks: { keys: [legacy] } } : app;
      },
    };
    const errors: unknown[] = [];
    const sentinel = createSentinel({ ...options, apps: [], appStore, onError: (error) => errors.push(error) });
    const mounted = await HOSTS[0]!.mount(sentinel);
    open.push(mounted);
    await expectInvalidClient(mounted.server, [], forgedRS256Assertion('legacy'), /key that cannot be used/);
    expect(errors).toEqual([]);
  });

  // The cost of an RSA verification grows with the public exponent and the modulus, and anyone who knows the client
  // id can have a made-up assertion checked against the client's keys: a key set that makes each check costly is a
  // lever on the service's CPU, so such keys are held to the bounds DPoP proof keys have (2048–8192 bits, e ≤ 65537).
  it('refuses an RSA key with a public exponent above 65537, or over 8192 bits, in apps[].jwks at startup', async () => {
    const key = await clientKey();
    const refusal = (jwk: Record<string, unknown>): unknown => {
      try {
        keyedSentinel(key, { jwks: { keys: [key.publicJwk, jwk] } });
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65539 });
    const bigExponent = refusal({ ...publicKey.export({ format: 'jwk' }), kid: 'big-e' });
    expect(isConfigurationError(bigExponent)).toBe(true);
    expect(String((bigExponent as Error).message)).toMatch(/jwks\.keys\[1\].*public exponent is odd and at most 65537/);
    // A 16384-bit modulus, which OpenSSL would verify with: the bound is read from `n`, no key need be made.
    const hugeModulus = refusal({ ...rsaJwk(2048, 'huge'), n: Buffer.alloc(2048, 0xc5).toString('base64url') });
    expect(isConfigurationError(hugeModulus)).toBe(true);
    expect(String((hugeModulus as Error).message)).toMatch(/jwks\.keys\[1\].*at most 8192 bits/);
    expect(refusal(rsaJwk(2048, 'usual'))).toBeUndefined();
  });

  it('drops a fetched RSA key whose public exponent is above 65537: even a genuine assertion signed by it is refused', async () => {
    const key = await clientKey();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65539 });
    const costly = { ...publicKey.export({ format: 'jwk' }), kid: 'costly', use: 'sig' };
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk, costly] }));
    });
    const errors: unknown[] = [];
    const events: SentinelEvent[] = [];
    const sentinel = keyedSentinel(
      key,
      { jwks: undefined, jwksUri: jwks.url },
      { clientJwks: { allowPrivateAddresses: true }, onError: (error) => errors.push(error), onEvent: (event) => events.push(event) },
    );
    const mounted = await HOSTS[0]!.mount(sentinel);
    open.push(mounted);
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({
      iss: KEYED_CLIENT_ID,
      sub: KEYED_CLIENT_ID,
      aud: ACCOUNT_ISSUER,
      jti: randomUUID(),
      exp: now + 60,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'costly' })
      .sign(privateKey);
    await expectInvalidClient(
      mounted.server,
      events,
      { client_assertion_type: ASSERTION_TYPE, client_assertion: assertion },
      /not signed by a key registered/,
    );
    // The client's usual key in the same set still authenticates it.
    expect((await token(mounted.server, await assertionAuth(key))).status).toBe(200);
    expect(errors).toEqual([]);
  });
});

describe('jwks_uri', () => {
  it('fetches the key set once and caches it', async () => {
    const key = await clientKey();
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    const { server } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect(jwks.hits()).toBe(1);
  });

  it('refetches for unknown kids at most once per 10 s, and a refresh that fails keeps the good set', async () => {
    const key = await clientKey();
    const jwks = await failingJwksServer([key.publicJwk]);
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    events.length = 0;
    // Anyone naming the client can present assertions with made-up kids: they do not each fetch the key set.
    const stranger = await clientKey('made-up');
    for (let i = 0; i < 10; i++) await expectInvalidClient(server, events, await assertionAuth(stranger), /not signed by a key registered/);
    expect(jwks.hits()).toBe(2);
    // Past the interval the key host fails once: the refresh is refused, the client keeps its cached keys.
    jwks.fail(true);
    advanceClock(11);
    await expectInvalidClient(server, events, await assertionAuth(stranger), /answered 503/);
    expect(jwks.hits()).toBe(3);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
  });

  it('refetches for an assertion without kid that no cached key verifies: a rotation of keys without kid', async () => {
    const [old, rotated, stranger] = await Promise.all([clientKey(), clientKey(), clientKey()]);
    const withoutKid = (key: ClientKey): Record<string, unknown> => {
      const { kid: _kid, ...jwk } = key.publicJwk;
      return jwk;
    };
    const signedWithoutKid = async (signer: ClientKey): Promise<Record<string, string>> => {
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: KEYED_CLIENT_ID, sub: KEYED_CLIENT_ID, aud: ACCOUNT_ISSUER, jti: randomUUID(), exp: now + 60 };
      const assertion = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).sign(signer.privateKey);
      return { client_assertion_type: ASSERTION_TYPE, client_assertion: assertion };
    };
    let published = [withoutKid(old)];
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    const { server, events } = await start(old, { jwks: undefined, jwksUri: jwks.url });
    expect((await token(server, await signedWithoutKid(old))).status).toBe(200);
    // The client replaces its key; nothing in the assertion tells the cached set is older than the signature.
    published = [withoutKid(rotated)];
    expect((await token(server, await signedWithoutKid(rotated))).status).toBe(200);
    expect(jwks.hits()).toBe(2);
    // A signature nobody published refetches no more often than an unknown kid does.
    events.length = 0;
    for (let i = 0; i < 5; i++) {
      await expectInvalidClient(server, events, await signedWithoutKid(stranger), /not signed by a key registered/);
    }
    expect(jwks.hits()).toBe(2);
  });

  it('refetches for an assertion whose kid names a cached key that does not verify it: a kid reused for a new key', async () => {
    const [old, rotated] = await Promise.all([clientKey('k1'), clientKey('k1')]);
    let published = [old.publicJwk];
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    const { server } = await start(old, { jwks: undefined, jwksUri: jwks.url });
    expect((await token(server, await assertionAuth(old))).status).toBe(200);
    published = [rotated.publicJwk];
    expect((await token(server, await assertionAuth(rotated))).status).toBe(200);
    expect(jwks.hits()).toBe(2);
  });

  it('keeps serving the last good set for staleIfErrorSeconds when the refetch after expiry fails, then refuses', async () => {
    // Date.now() and performance.now() together: the cache's clock either way (vi.restoreAllMocks puts them back).
    const clock = movableClock();
    const key = await clientKey();
    const jwks = await failingJwksServer([key.publicJwk]);
    const warnings: string[] = [];
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url }, true, { staleIfErrorSeconds: 600, warnings });
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    // The client's host goes down; the set expires (cacheSeconds 300): its refetch fails, the client goes on.
    jwks.fail(true);
    await clock.advance(301_000);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect(jwks.hits()).toBe(2);
    const stale = () => warnings.filter((message) => message.includes('could not be fetched anew'));
    expect(stale()).toHaveLength(1);
    expect(stale()[0]).toMatch(/could not be fetched anew \(the jwks_uri answered 503\).*last good copy/);
    // Within the failure's pause (5 s) the host is not asked again, and the stale set still serves.
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect(jwks.hits()).toBe(2);
    // Later in the window, one more try, still failing, still served.
    await clock.advance(300_000);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect(jwks.hits()).toBe(3);
    // Past cacheSeconds + staleIfErrorSeconds the stale set is gone: the failure is the answer.
    await clock.advance(300_000);
    events.length = 0;
    await expectInvalidClient(server, events, await assertionAuth(key), /answered 503/);
    expect(jwks.hits()).toBe(4);
    // The host recovers: after the failure's pause the set is fetched and serves again.
    jwks.fail(false);
    await clock.advance(6_000);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    expect(jwks.hits()).toBe(5);
  });

  it('honours at once a refetch that succeeds without a key the client removed', async () => {
    // Date.now() and performance.now() together: the cache's clock either way (vi.restoreAllMocks puts them back).
    const clock = movableClock();
    const key = await clientKey();
    const removed = await clientKey();
    let published = [key.publicJwk, removed.publicJwk];
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url }, true, { staleIfErrorSeconds: 3600 });
    expect((await token(server, await assertionAuth(removed))).status).toBe(200);
    published = [key.publicJwk];
    await clock.advance(301_000);
    events.length = 0;
    await expectInvalidClient(server, events, await assertionAuth(removed), /not signed by a key registered/);
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
  });

  it('with staleIfErrorSeconds 0, refuses as soon as the refetch after expiry fails', async () => {
    // Date.now() and performance.now() together: the cache's clock either way (vi.restoreAllMocks puts them back).
    const clock = movableClock();
    const key = await clientKey();
    const jwks = await failingJwksServer([key.publicJwk]);
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url }, true, { staleIfErrorSeconds: 0 });
    expect((await token(server, await assertionAuth(key))).status).toBe(200);
    jwks.fail(true);
    await clock.advance(301_000);
    events.length = 0;
    await expectInvalidClient(server, events, await assertionAuth(key), /answered 503/);
  });

  it('refuses a key set holding a key WebCrypto cannot import as invalid_client, not a server error', async () => {
    const key = await clientKey();
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [{ ...key.publicJwk, x: '!!!' }] }));
    });
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    await expectInvalidClient(server, events, await assertionAuth(key), /holds a key that cannot be used/);
  });

  it('refuses a jwks_uri that hangs, quickly, and stays healthy', async () => {
    const key = await clientKey();
    const jwks = await jwksServer(() => {});
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    const started = Date.now();
    await expectInvalidClient(server, events, await assertionAuth(key), /did not answer in time/);
    expect(Date.now() - started).toBeLessThan(2000);
    await healthy(server);
  });

  it('refuses a jwks_uri that redirects (and does not follow it)', async () => {
    const key = await clientKey();
    const target = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(302, { location: target.url }).end();
    });
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    await expectInvalidClient(server, events, await assertionAuth(key), /redirect/);
    expect(target.hits()).toBe(0);
  });

  it('refuses a jwks_uri that returns 10 MB, and stays healthy', async () => {
    const key = await clientKey();
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!out.write(chunk)) {
            out.once('drain', pump);
            return;
          }
        }
        out.end();
      };
      out.on('error', () => {});
      pump();
    });
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url });
    await expectInvalidClient(server, events, await assertionAuth(key), /too large/);
    await healthy(server);
  });

  it('refuses a jwks_uri at 127.0.0.1 without connecting to it', async () => {
    const key = await clientKey();
    const jwks = await jwksServer((_in, out) => {
      out.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] }));
    });
    const { server, events } = await start(key, { jwks: undefined, jwksUri: jwks.url.replace('http:', 'https:') }, false);
    await expectInvalidClient(server, events, await assertionAuth(key), /private, loopback or link-local/);
    expect(jwks.hits()).toBe(0);
  });

  it('refuses a jwks_uri at 169.254.169.254 (cloud metadata) quickly', async () => {
    const key = await clientKey();
    const { server, events } = await start(key, { jwks: undefined, jwksUri: 'https://169.254.169.254/latest/meta-data/jwks' }, false);
    const started = Date.now();
    await expectInvalidClient(server, events, await assertionAuth(key), /private, loopback or link-local/);
    expect(Date.now() - started).toBeLessThan(1000);
    await healthy(server);
  });

  it('refuses IPv6 loopback, IPv4-mapped and private ranges by address', async () => {
    const { isForbiddenAddress } = await import('../src/client-assertion/address-guard.js');
    for (const address of [
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      'fd00::1',
      'fe80::1',
      '0.0.0.0',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']) expect(isForbiddenAddress(address), address).toBe(false);
  });
});
