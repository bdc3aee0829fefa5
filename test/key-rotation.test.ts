/**
 * The managed key ring in one process: instances are sentinels sharing one MemoryStore (the Redis and two-process
 * cases are in key-rotation-redis.test.ts). Time moves with a faked `Date` only, so store lifetimes stay real.
 */
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MemoryStore, type Sentinel, type SentinelOptions, type Store } from '../src/index.js';
import {
  ACCOUNT,
  appTokenPath,
  basic,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
} from './helpers/fixtures.js';
import { call, consumerToken } from './helpers/direct-flow.js';
import { kidOf } from './helpers/jwt.js';
import { ringInstance, ringRotation } from './helpers/ring-instance.js';
import { contextOf } from '../src/http/context.js';

const FORM = 'application/x-www-form-urlencoded';

/** The ring document as stored, the parts these cases read. */
interface StoredRing {
  retainSeconds?: number;
  keys: { kid: string; activatesAt: number; revokedAt?: number; sealed?: unknown }[];
}

/**
 * The shared ring instance (ES256 alone, so each case counts one key per rotation; the RS256 key an OpenID Connect
 * deployment's ring holds by default is covered by test/hardening-keyring-rs256.test.ts).
 */
function instance(store: Store, overrides: Partial<SentinelOptions> = {}): Sentinel {
  return ringInstance(store, {}, overrides);
}

async function accepts(sentinel: Sentinel, token: string): Promise<boolean> {
  const result = await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
  return result.ok;
}

let now = Date.UTC(2026, 0, 1);
function advance(seconds: number): void {
  now += seconds * 1000;
  vi.setSystemTime(now);
}

afterEach(() => {
  vi.useRealTimers();
});

function fakeClock(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(now);
}

describe('keyRotation: a key ring in the store', () => {
  it('creates one key on first start, shared by every instance of the store, sealed at rest', async () => {
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    expect(a.jwks().keys).toHaveLength(1);
    expect(b.jwks()).toEqual(a.jwks());
    const token = await consumerToken(a);
    expect(await accepts(b, token)).toBe(true);
    const stored = (await store.get('keyring:default')) as string;
    expect(stored).not.toContain('"d"');
    const privateKey = contextOf(a).keys.signer.privateKey;
    if (privateKey === undefined) throw new Error('the ring keys sign in process');
    const privateD = (privateKey.export({ format: 'jwk' }) as { d: string }).d;
    expect(stored).not.toContain(privateD);
    const verified = await jwtVerify(token, createLocalJWKSet(a.jwks()));
    expect(verified.protectedHeader.kid).toBe(a.jwks().keys[0]?.kid);
  });

  it('two instances racing to rotate produce one new key', async () => {
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    await Promise.all([a.rotateKeys(), b.rotateKeys(), a.rotateKeys(), b.rotateKeys()]);
    const listed = await a.rotateKeys();
    expect(listed.filter((key) => key.state === 'pending')).toHaveLength(1);
    expect(listed).toHaveLength(2);
  });

  it('a scheduled rotation pre-publishes, then signs; the old key stays until its tokens expire; racing schedulers add one key', async () => {
    fakeClock();
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    const first = await consumerToken(a);
    const firstKid = kidOf(first);
    // 600 s period, 20 s pre-publication: at 581 s the next key is due.
    advance(581);
    const [left, right] = await Promise.all([consumerToken(a), consumerToken(b)]);
    expect(kidOf(left)).toBe(firstKid);
    expect(kidOf(right)).toBe(firstKid);
    expect(a.jwks().keys).toHaveLength(2);
    expect(b.jwks().keys).toHaveLength(2);
    expect(JSON.parse((await store.get('keyring:default')) as string).keys).toHaveLength(2);
    const next = a.jwks().keys.find((key) => key.kid !== firstKid)?.kid;
    // Before activation it is published but does not sign.
    advance(10);
    expect(kidOf(await consumerToken(b))).toBe(firstKid);
    advance(11);
    const later = await consumerToken(b);
    expect(kidOf(later)).toBe(next);
    expect(kidOf(await consumerToken(a))).toBe(next);
    const lastOld = left;
    expect(await accepts(a, lastOld)).toBe(true);
    // Retention: accessTokenTtl 120 + clockTolerance 5 after the successor activated.
    advance(100);
    expect(a.jwks().keys.map((key) => key.kid)).toContain(firstKid);
    advance(30);
    expect(a.jwks().keys.map((key) => key.kid)).toEqual([next]);
    expect(await accepts(b, await consumerToken(a))).toBe(true);
  });

  it('revokeKey: gone from the JWKS at once, refused here at once and on the other instance within refreshSeconds', async () => {
    fakeClock();
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    const token = await consumerToken(a);
    const kid = kidOf(token);
    expect(await accepts(b, token)).toBe(true);
    expect(await a.revokeKey(kid)).toBe(true);
    expect(a.jwks().keys.map((key) => key.kid)).not.toContain(kid);
    expect(await accepts(a, token)).toBe(false);
    const replacement = await consumerToken(a);
    expect(kidOf(replacement)).not.toBe(kid);
    // b learns of the new key on its first token signed by it (an unknown kid reloads the ring once).
    expect(await accepts(b, replacement)).toBe(true);
    expect(await accepts(b, token)).toBe(false);
    expect(await a.revokeKey(kid)).toBe(false);
    expect(await a.revokeKey('no-such-kid')).toBe(false);
  });

  it('an instance that has not looked refuses the revoked key once refreshSeconds have passed', async () => {
    fakeClock();
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    const token = await consumerToken(a);
    expect(await accepts(b, token)).toBe(true);
    await a.revokeKey(kidOf(token));
    advance(10);
    expect(await accepts(b, token)).toBe(false);
  });

  it('a revocation survives the store losing the ring and an instance that missed it putting back its older copy', async () => {
    fakeClock();
    const store = new MemoryStore();
    const [a, b] = [instance(store), instance(store)];
    await Promise.all([a.ready(), b.ready()]);
    const token = await consumerToken(a);
    const kid = kidOf(token);
    expect(await b.revokeKey(kid)).toBe(true);
    await store.delete('keyring:default');
    advance(10);
    // a has not looked since the revocation: finding no ring, it puts back the copy it holds, where the key lives.
    expect(await accepts(a, token)).toBe(true);
    // b saw the revocation and revokes the key again in what it reads.
    expect(await accepts(b, token)).toBe(false);
    const stored = JSON.parse((await store.get('keyring:default')) as string) as { keys: { kid: string; revokedAt?: number }[] };
    expect(stored.keys.find((entry) => entry.kid === kid)?.revokedAt).toBeTypeOf('number');
    advance(10);
    expect(await accepts(a, token)).toBe(false);
    expect(a.jwks().keys.map((key) => key.kid)).not.toContain(kid);
  });

  it('rotateKeys() dates the new key once it holds the ring lock, so waiting for it takes nothing off the pre-publication', async () => {
    fakeClock();
    const memory = new MemoryStore();
    let lockHeld = false;
    // Another writer holds the ring's lock for 9 s (within its 10 s lease) when the rotation asks for it.
    const store: Store = {
      ...bind(memory),
      increment: async (key, ttl) => {
        if (!lockHeld || key !== 'keyring-lock:default') return memory.increment(key, ttl);
        lockHeld = false;
        advance(9);
        return 2;
      },
    };
    const a = instance(store);
    await a.ready();
    lockHeld = true;
    await a.rotateKeys();
    const written = Date.now();
    const ring = JSON.parse((await memory.get('keyring:default')) as string) as StoredRing;
    const pending = ring.keys.find((entry) => entry.activatesAt > written);
    // Published when written, it signs prePublishSeconds (20 = jwksMaxAge + refreshSeconds) later, not 11 s.
    expect(pending?.activatesAt).toBe(written + 20_000);
  });

  it('a ring document emptied of its keys is put back from what the instance holds, and reported', async () => {
    fakeClock();
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const a = instance(store, { onError: (error) => errors.push(error) });
    await a.ready();
    const token = await consumerToken(a);
    const kid = kidOf(token);
    const stored = JSON.parse((await store.get('keyring:default')) as string) as StoredRing;
    await store.set('keyring:default', JSON.stringify({ ...stored, keys: [] }), 3_600_000);
    advance(10);
    expect(kidOf(await consumerToken(a))).toBe(kid);
    expect(await accepts(a, token)).toBe(true);
    expect(a.jwks().keys.map((key) => key.kid)).toEqual([kid]);
    expect((JSON.parse((await store.get('keyring:default')) as string) as StoredRing).keys.map((entry) => entry.kid)).toEqual([kid]);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/no live key/);
  });

  it('a ring document left with revoked keys only is put back from what the instance holds, those keys revoked', async () => {
    fakeClock();
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const a = instance(store, { onError: (error) => errors.push(error) });
    await a.ready();
    const token = await consumerToken(a);
    const stored = JSON.parse((await store.get('keyring:default')) as string) as StoredRing;
    const revoked = stored.keys.map(({ sealed: _erased, ...entry }) => ({ ...entry, revokedAt: Date.now() }));
    await store.set('keyring:default', JSON.stringify({ ...stored, keys: revoked }), 3_600_000);
    advance(10);
    expect(kidOf(await consumerToken(a))).not.toBe(kidOf(token));
    expect(await accepts(a, token)).toBe(false);
    expect(errors).toHaveLength(1);
  });

  it('the stored ring drops a retired key once its tokens expired, and a revoked one once retainSeconds passed', async () => {
    fakeClock();
    const store = new MemoryStore();
    const a = instance(store);
    await a.ready();
    const stored = async () => JSON.parse((await store.get('keyring:default')) as string) as StoredRing;
    for (let period = 0; period < 5; period++) {
      advance(600);
      await consumerToken(a); // the scheduled rotation: a new key, signing 20 s later
      advance(30);
      await consumerToken(a);
    }
    // Each rotation wrote the ring without the keys retired more than retainSeconds (120 + 5) before it.
    const ring = await stored();
    expect(ring.keys).toHaveLength(2);
    expect(ring.retainSeconds).toBe(125);
    expect(await a.rotateKeys()).toHaveLength(3);

    const token = await consumerToken(a);
    const kid = kidOf(token);
    expect(await a.revokeKey(kid)).toBe(true);
    // Within retainSeconds an instance that missed the revocation may put its copy back: the revocation stays written.
    advance(120);
    await a.rotateKeys();
    expect((await stored()).keys.find((entry) => entry.kid === kid)?.revokedAt).toBeTypeOf('number');
    // The next write after that (the scheduled rotation) drops it.
    advance(600);
    expect(await accepts(a, await consumerToken(a))).toBe(true);
    expect((await stored()).keys.map((entry) => entry.kid)).not.toContain(kid);
    expect(await accepts(a, token)).toBe(false);
  });

  it('a restarted instance keeps the ring; a wrong encryptionKey fails ready() with a ConfigurationError and requests with 500', async () => {
    const store = new MemoryStore();
    const a = instance(store);
    await a.ready();
    const token = await consumerToken(a);
    const restarted = instance(store);
    await restarted.ready();
    expect(restarted.jwks()).toEqual(a.jwks());
    expect(await accepts(restarted, token)).toBe(true);
    const errors: unknown[] = [];
    const wrong = instance(store, {
      keyRotation: ringRotation({ encryptionKey: randomBytes(32).toString('base64url') }),
      onError: (error) => errors.push(error),
    });
    await expect(wrong.ready()).rejects.toThrow(ConfigurationError);
    await expect(wrong.ready()).rejects.toThrow(/keyRotation\.encryptionKey/);
    const response = await call(wrong, {
      method: 'POST',
      path: appTokenPath(),
      headers: { 'content-type': FORM, authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(500);
    expect(errors.some((error) => error instanceof ConfigurationError)).toBe(true);
    expect(JSON.parse((await store.get('keyring:default')) as string).keys).toHaveLength(1);
  });

  it('an instance with a wrong encryptionKey writes nothing, even when a rotation is due', async () => {
    fakeClock();
    const store = new MemoryStore();
    const a = instance(store);
    await a.ready();
    advance(590);
    const wrong = instance(store, { keyRotation: ringRotation({ encryptionKey: randomBytes(32).toString('base64url') }) });
    await expect(wrong.ready()).rejects.toThrow(/keyRotation\.encryptionKey/);
    await expect(wrong.rotateKeys()).rejects.toThrow(/keyRotation\.encryptionKey/);
    expect(JSON.parse((await store.get('keyring:default')) as string).keys).toHaveLength(1);
    advance(10);
    expect(await accepts(a, await consumerToken(a))).toBe(true);
    expect(a.jwks().keys).toHaveLength(2);
  });

  it('refuses timings that would let a cached JWKS miss a signing key or drop a key before its tokens expire', () => {
    const store = new MemoryStore();
    expect(() => instance(store, { keyRotation: ringRotation({ prePublishSeconds: 15 }) })).toThrow(/keyRotation\.prePublishSeconds/);
    expect(() => instance(store, { keyRotation: ringRotation({ retainSeconds: 60 }) })).toThrow(/keyRotation\.retainSeconds/);
    expect(() => instance(store, { keyRotation: ringRotation({ rotateEverySeconds: 20 }) })).toThrow(/keyRotation\.rotateEverySeconds/);
    expect(() => instance(store, { keyRotation: ringRotation({ encryptionKey: 'short' }) })).toThrow(/keyRotation\.encryptionKey/);
    expect(() => instance(store, { keyRotation: ringRotation({ refreshSeconds: 61 }) })).toThrow(/keyRotation\.refreshSeconds/);
    expect(() => makeSentinel({ store, keyRotation: ringRotation() })).toThrow(/keys or keyRotation/);
  });

  it('a failing store fails closed: 500 server_error, reported, nothing issued', async () => {
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const broken: Store = { ...bind(store), get: async () => Promise.reject(new Error('store down')) };
    const sentinel = instance(broken, { onError: (error) => errors.push(error) });
    await expect(sentinel.ready()).rejects.toThrow(/store down/);
    const response = await call(sentinel, {
      method: 'POST',
      path: appTokenPath(),
      headers: { 'content-type': FORM, authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(500);
    expect(errors.length).toBeGreaterThan(0);
  });
});

function bind(store: MemoryStore): Store {
  return {
    get: (key) => store.get(key),
    set: (key, value, ttl) => store.set(key, value, ttl),
    take: (key) => store.take(key),
    delete: (key) => store.delete(key),
    increment: (key, ttl) => store.increment(key, ttl),
    swap: (entries) => store.swap(entries),
  };
}

/** A MemoryStore that records the key of every `set`: a lookup of an unknown account must write no ring. */
function writeRecordingStore(): { store: Store; writes: string[] } {
  const writes: string[] = [];
  const memory = new MemoryStore();
  const store: Store = {
    ...bind(memory),
    set: (key, value, ttl) => {
      writes.push(key);
      return memory.set(key, value, ttl);
    },
  };
  return { store, writes };
}

describe('keysPerAccount: one ring per account issuer', () => {
  async function accountToken(sentinel: Sentinel, accountId: string, clientId: string, secret: string): Promise<string> {
    const response = await call(sentinel, {
      method: 'POST',
      path: appTokenPath(CONSUMER_UUID, accountId),
      headers: { 'content-type': FORM, authorization: basic(clientId, secret) },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(200);
    return (JSON.parse(response.body as string) as { access_token: string }).access_token;
  }

  async function getJSON(sentinel: Sentinel, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await call(sentinel, { method: 'GET', path });
    return { status: response.status, body: JSON.parse(response.body as string) };
  }

  it('each account signs with its own keys, published at its own jwks_uri; the other account cannot verify them', async () => {
    const store = new MemoryStore();
    const sentinel = instance(store, { keysPerAccount: true });
    await sentinel.ready();
    const mine = await accountToken(sentinel, ACCOUNT, CLIENT_ID, CLIENT_SECRET);
    const theirs = await accountToken(sentinel, OTHER_ACCOUNT, OTHER_CLIENT_ID, OTHER_SECRET);
    expect(kidOf(mine)).not.toBe(kidOf(theirs));

    const metadata = await getJSON(sentinel, `/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`);
    const jwksUri = metadata.body.jwks_uri as string;
    expect(jwksUri).toBe(`${metadata.body.issuer}/jwks`);
    const myJwks = (await getJSON(sentinel, new URL(jwksUri).pathname)).body as { keys: { kid: string }[] };
    const theirJwks = (await getJSON(sentinel, `/sentinel/api/account/${OTHER_ACCOUNT}/jwks`)).body as { keys: { kid: string }[] };
    expect(myJwks.keys.map((key) => key.kid)).toEqual([kidOf(mine)]);
    expect(theirJwks.keys.map((key) => key.kid)).toEqual([kidOf(theirs)]);
    await jwtVerify(mine, createLocalJWKSet(myJwks as never));
    await expect(jwtVerify(theirs, createLocalJWKSet(myJwks as never))).rejects.toThrow();

    // The guard finds the ring by the account it is told, or by the token's issuer.
    expect(await accepts(sentinel, mine)).toBe(true);
    expect((await sentinel.checkBearer(`Bearer ${theirs}`)).ok).toBe(true);
    expect((await sentinel.checkBearer(`Bearer ${theirs}`, { accountId: ACCOUNT })).ok).toBe(false);

    // A second instance on the same store uses the same per-account rings.
    const other = instance(store, { keysPerAccount: true });
    expect((await other.checkBearer(`Bearer ${mine}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID })).ok).toBe(true);
    expect(kidOf(await accountToken(other, ACCOUNT, CLIENT_ID, CLIENT_SECRET))).toBe(kidOf(mine));
  });

  it("jwksAsync({ accountId }) answers what that account's jwks_uri serves; an unknown account is a 404", async () => {
    const { store, writes } = writeRecordingStore();
    const sentinel = instance(store, { keysPerAccount: true });
    await sentinel.ready();
    const mine = await accountToken(sentinel, ACCOUNT, CLIENT_ID, CLIENT_SECRET);
    // A host serving the JWKS from a route of its own: the shared ring's set verifies no account's token.
    const own = await sentinel.jwksAsync({ accountId: ACCOUNT });
    expect(own).toEqual((await getJSON(sentinel, `/sentinel/api/account/${ACCOUNT}/jwks`)).body);
    await jwtVerify(mine, createLocalJWKSet(own as never));
    const before = writes.length;
    await expect(sentinel.jwksAsync({ accountId: 'no-such-account' })).rejects.toMatchObject({ code: 'invalid_request', status: 404 });
    expect(writes.length).toBe(before);
    // Without keysPerAccount every account's jwks_uri serves the shared ring.
    const shared = instance(new MemoryStore());
    expect(await shared.jwksAsync({ accountId: ACCOUNT })).toEqual(await shared.jwksAsync());
  });

  it('an unknown account gets a 404 and no ring in the store; keysPerAccount needs keyRotation', async () => {
    const { store, writes } = writeRecordingStore();
    const sentinel = instance(store, { keysPerAccount: true });
    await sentinel.ready();
    const before = writes.length;
    expect((await getJSON(sentinel, '/sentinel/api/account/no-such-account/jwks')).status).toBe(404);
    expect(writes.length).toBe(before);
    expect(() => makeSentinel({ keysPerAccount: true })).toThrow(/keysPerAccount/);
  });
});
