/**
 * Each bound that keeps DPoP replay markers from filling security state (issue 30 item 3), on its own:
 * - order: a marker is written only once the request it came with is good (token endpoint, PAR, resources);
 * - separate budgets: every security prefix of MemoryStore has its own area, so markers block nothing else;
 * - per address: a public client's pushes with DPoP are bounded per client address (IPv6 per /64), with 429;
 * - a full marker area answers 429, never 500 (at the token endpoint and at a resource), and touches nothing else.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MemoryStore, type Sentinel, type SentinelOptions, SecurityStateFullError } from '../src/index.js';
import { addressBucket } from '../src/http/client-ip.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { jsonOf, postForm, recordingStore, TOKEN_PATH, call } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { floodRequest, PAR_HTU, PAR_PATH, TOKEN_HTU } from './helpers/security-state-flow.js';
import { movableClock } from './helpers/clock.js';
import { codeFor } from './helpers/oauth.js';
import { pkcePair } from './helpers/pkce.js';
import { clientKey, dpopProof, type ClientKey } from './helpers/key-bound.js';

const USERINFO_PATH = `/sentinel/api/account/${ACCOUNT}/userinfo`;
const USERINFO_HTU = `http://localhost${USERINFO_PATH}`;

function sentinelWith(options: Partial<SentinelOptions> & { dpop?: Record<string, unknown> }): Sentinel {
  return makeSentinel(options as Partial<SentinelOptions>);
}

function markerWrites(store: ReturnType<typeof recordingStore>): string[] {
  return store.writes.filter((write) => write.key.startsWith('dpop-')).map((write) => write.key);
}

/** A public client's code exchange with a proof of `key`. */
async function exchange(sentinel: Sentinel, key: ClientKey, code: string, verifier: string, proof?: string) {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    client_id: PUBLIC_CLIENT_ID,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
  });
  return postForm(sentinel, TOKEN_PATH, form.toString(), {
    headers: { dpop: proof ?? (await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU })) },
  });
}

async function publicCode(sentinel: Sentinel): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkcePair();
  const code = await codeFor(sentinel, {
    clientId: PUBLIC_CLIENT_ID,
    redirectUri: REDIRECT_URI,
    codeChallenge: challenge,
    scope: 'openid',
  });
  return { code, verifier };
}

describe('order: the jti is spent only once the request is good', () => {
  it('token requests of a public client with made-up codes or refresh tokens and fresh proofs write nothing', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const key = await clientKey();
    for (let index = 0; index < 20; index += 1) {
      expect((await floodRequest(sentinel, key, 'token', '198.51.100.1')).status).toBe(400);
      const refresh = new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: PUBLIC_CLIENT_ID,
        refresh_token: `${randomBytes(8).toString('base64url')}.0.${randomBytes(32).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
      });
      const refused = await postForm(sentinel, TOKEN_PATH, refresh.toString(), {
        headers: { dpop: await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU }) },
      });
      expect(refused.status).toBe(400);
      expect(jsonOf(refused).error).toBe('invalid_grant');
    }
    expect(store.writes).toEqual([]);
  });

  it('a code of another client or with a wrong verifier writes no marker and stays redeemable', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const key = await clientKey();
    const { code, verifier } = await publicCode(sentinel);
    store.reset();
    const wrongVerifier = await exchange(sentinel, key, code, pkcePair().verifier);
    expect(jsonOf(wrongVerifier).error).toBe('invalid_grant');
    expect(markerWrites(store)).toEqual([]);
    const ok = await exchange(sentinel, key, code, verifier);
    expect(ok.status).toBe(200);
    expect(markerWrites(store)).toHaveLength(1);
  });

  it('a replayed proof with a good code is refused and leaves the code for a fresh proof', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const key = await clientKey();
    const first = await publicCode(sentinel);
    const proof = await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU });
    expect((await exchange(sentinel, key, first.code, first.verifier, proof)).status).toBe(200);
    const second = await publicCode(sentinel);
    const replayed = await exchange(sentinel, key, second.code, second.verifier, proof);
    expect(replayed.status).toBe(400);
    expect(jsonOf(replayed)).toMatchObject({ error: 'invalid_dpop_proof', error_description: 'the DPoP proof was already used' });
    expect((await exchange(sentinel, key, second.code, second.verifier)).status).toBe(200);
  });

  it('a refresh writes its marker once the token proved current; a replayed proof rotates nothing', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const key = await clientKey();
    const { code, verifier } = await publicCode(sentinel);
    const refreshToken = jsonOf(await exchange(sentinel, key, code, verifier)).refresh_token as string;
    const refresh = async (proof: string) =>
      postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({ grant_type: 'refresh_token', client_id: PUBLIC_CLIENT_ID, refresh_token: refreshToken }).toString(),
        {
          headers: { dpop: proof },
        },
      );
    // A proof by another key: refused by the token's binding before any marker.
    store.reset();
    const other = await refresh(await dpopProof(await clientKey(), { htm: 'POST', htu: TOKEN_HTU }));
    expect(jsonOf(other).error).toBe('invalid_dpop_proof');
    expect(store.writes).toEqual([]);
    const proof = await dpopProof(key, { htm: 'POST', htu: TOKEN_HTU });
    const first = await refresh(proof);
    expect(first.status).toBe(200);
    expect(markerWrites(store)).toHaveLength(1);
    // The same proof with the new refresh token: a replay, refused before the grant is rotated.
    store.reset();
    const next = jsonOf(first).refresh_token as string;
    const replayed = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({ grant_type: 'refresh_token', client_id: PUBLIC_CLIENT_ID, refresh_token: next }).toString(),
      { headers: { dpop: proof } },
    );
    expect(jsonOf(replayed)).toMatchObject({ error: 'invalid_dpop_proof', error_description: 'the DPoP proof was already used' });
    expect(store.writes.filter((write) => write.op === 'swap')).toEqual([]);
  });

  it('an invalid push (unknown redirect_uri) with a fresh proof writes nothing', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const key = await clientKey();
    for (let index = 0; index < 10; index += 1) {
      const form = new URLSearchParams({
        response_type: 'code',
        client_id: PUBLIC_CLIENT_ID,
        redirect_uri: 'https://evil.example/cb',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      });
      const response = await postForm(sentinel, PAR_PATH, form.toString(), {
        headers: { dpop: await dpopProof(key, { htm: 'POST', htu: PAR_HTU }) },
      });
      expect(response.status).toBe(400);
    }
    expect(store.writes).toEqual([]);
  });

  it('at a resource, a proof by another key than the token is bound to writes no marker', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = makeSentinel({ store });
    const key = await clientKey();
    const { code, verifier } = await publicCode(sentinel);
    const token = jsonOf(await exchange(sentinel, key, code, verifier)).access_token as string;
    const ath = (await import('node:crypto')).createHash('sha256').update(token).digest('base64url');
    store.reset();
    const thief = await clientKey();
    for (let index = 0; index < 10; index += 1) {
      const response = await call(sentinel, {
        path: USERINFO_PATH,
        headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(thief, { htm: 'GET', htu: USERINFO_HTU, ath }) },
      });
      expect(response.status).toBe(401);
      expect(jsonOf(response).error).toBe('invalid_dpop_proof');
    }
    expect(markerWrites(store)).toEqual([]);
    const owner = await call(sentinel, {
      path: USERINFO_PATH,
      headers: { authorization: `DPoP ${token}`, dpop: await dpopProof(key, { htm: 'GET', htu: USERINFO_HTU, ath }) },
    });
    expect(owner.status).toBe(200);
    expect(markerWrites(store)).toHaveLength(1);
  });
});

describe('separate budgets: each security prefix of MemoryStore has its own area', () => {
  it('full DPoP marker areas block no throttle counter, TOTP marker, assertion marker or revocation', async () => {
    const marker = entryBytes(`dpop-jti:${'a'.repeat(43)}`, '1');
    const store = new MemoryStore({ securityMaxBytes: marker * 10 });
    for (const prefix of ['dpop-jti', 'dpop-push-jti']) {
      let fitted = 0;
      for (; ; fitted += 1) {
        try {
          await store.increment(`${prefix}:${String(fitted).padStart(43, 'a')}`, 60_000);
        } catch {
          break;
        }
      }
      expect(fitted).toBeGreaterThanOrEqual(9);
      const refused = store.increment(`${prefix}:${'b'.repeat(43)}`, 60_000);
      await expect(refused).rejects.toBeInstanceOf(SecurityStateFullError);
      await expect(refused).rejects.toMatchObject({ prefix });
    }
    await expect(store.increment('throttle:ip:203.0.113.7', 60_000)).resolves.toBe(1);
    await expect(store.increment('totp-used:user:1', 60_000)).resolves.toBe(1);
    await store.set('totp-last:user', '1', 60_000);
    await expect(store.increment(`assertion-jti:${'c'.repeat(43)}`, 60_000)).resolves.toBe(1);
    await store.set('revoked:x', '1', 60_000);
    await expect(store.get('revoked:x')).resolves.toBe('1');
  });
});

describe('per address: pushes with DPoP of a public client', () => {
  const pushFrom = (sentinel: Sentinel, key: ClientKey, ip: string) => floodRequest(sentinel, key, 'par', ip);

  it('at most pushProofsPerAddress per window from one address, then 429 with Retry-After; other addresses go on', async () => {
    const sentinel = sentinelWith({ store: new MemoryStore(), dpop: { pushProofsPerAddress: 3 } });
    const key = await clientKey();
    for (let index = 0; index < 3; index += 1) expect((await pushFrom(sentinel, key, '198.51.100.9')).status).toBe(201);
    const refused = await pushFrom(sentinel, key, '198.51.100.9');
    expect(refused.status).toBe(429);
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(71);
    expect((await pushFrom(sentinel, key, '198.51.100.10')).status).toBe(201);
  });

  it('counts IPv6 per /64', async () => {
    const sentinel = sentinelWith({ store: new MemoryStore(), dpop: { pushProofsPerAddress: 2 } });
    const key = await clientKey();
    expect((await pushFrom(sentinel, key, '2001:db8:1:2::1')).status).toBe(201);
    expect((await pushFrom(sentinel, key, '2001:db8:1:2:ffff::9')).status).toBe(201);
    expect((await pushFrom(sentinel, key, '2001:0db8:0001:0002:abcd::1')).status).toBe(429);
    expect((await pushFrom(sentinel, key, '2001:db8:1:3::1')).status).toBe(201);
    expect(addressBucket('::1')).toBe('0:0:0:0');
    expect(addressBucket('fe80::')).toBe('fe80:0:0:0');
    expect(addressBucket('2001:db8::')).toBe('2001:db8:0:0');
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
  });

  it('a refused push writes no marker, and a new window opens once the proof window has passed', async () => {
    const store = recordingStore(new MemoryStore());
    const sentinel = sentinelWith({ store, dpop: { pushProofsPerAddress: 1, proofMaxAgeSeconds: 1 }, clockTolerance: 0 });
    const key = await clientKey();
    expect((await pushFrom(sentinel, key, '198.51.100.11')).status).toBe(201);
    store.reset();
    expect((await pushFrom(sentinel, key, '198.51.100.11')).status).toBe(429);
    expect(markerWrites(store)).toEqual([]);
    expect(store.writes.filter((write) => write.key.startsWith('par:'))).toEqual([]);
    // The window is the proof lifetime: proofMaxAgeSeconds + 2 × clockTolerance + 1 s = 2 s here. The counter's
    // TTL (the MemoryStore's) and the proofs' iat both follow the moved clock, so it is moved past the window.
    const clock = movableClock();
    try {
      await clock.advance(2100);
      expect((await pushFrom(sentinel, key, '198.51.100.11')).status).toBe(201);
    } finally {
      clock.restore();
    }
  });

  it('does not count pushes of a confidential client, which authenticates', async () => {
    const sentinel = sentinelWith({ store: new MemoryStore(), dpop: { pushProofsPerAddress: 1 } });
    const key = await clientKey();
    for (let index = 0; index < 3; index += 1) {
      const form = new URLSearchParams({
        response_type: 'code',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uri: REDIRECT_URI,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      });
      const response = await postForm(sentinel, PAR_PATH, form.toString(), {
        headers: { dpop: await dpopProof(key, { htm: 'POST', htu: PAR_HTU }) },
        ip: '198.51.100.12',
      });
      expect(response.status).toBe(201);
    }
  });

  it('is an option with a default, refused when not a positive integer', () => {
    expect(() => sentinelWith({ dpop: { pushProofsPerAddress: 0 } })).toThrow(ConfigurationError);
    expect(() => sentinelWith({ dpop: { pushProofsPerAddress: 1.5 } })).toThrow(ConfigurationError);
    expect(() => sentinelWith({})).not.toThrow();
  });
});

describe('a full marker area', () => {
  it('answers 429 to the push, reports nothing, and DPoP code exchanges (their own area) go on', async () => {
    // A marker's key: the prefix, the account's short digest, the proof's digest (src/dpop/proof-replay.ts).
    const marker = entryBytes(`dpop-push-jti:${'a'.repeat(22)}:${'a'.repeat(43)}`, '1');
    const errors: unknown[] = [];
    const sentinel = sentinelWith({ store: new MemoryStore({ securityMaxBytes: marker * 5 }), onError: (error) => errors.push(error) });
    const key = await clientKey();
    for (let index = 0; index < 5; index += 1) expect((await floodRequest(sentinel, key, 'par', `198.51.100.${index}`)).status).toBe(201);
    const refused = await floodRequest(sentinel, key, 'par', '198.51.100.99');
    expect(refused.status).toBe(429);
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    const { code, verifier } = await publicCode(sentinel);
    expect((await exchange(sentinel, key, code, verifier)).status).toBe(200);
  });

  it('answers 429 at a resource guard as well, with Retry-After and nothing reported', async () => {
    const marker = entryBytes(`dpop-jti:${'a'.repeat(22)}:${'a'.repeat(43)}`, '1');
    const errors: unknown[] = [];
    const sentinel = sentinelWith({ store: new MemoryStore({ securityMaxBytes: marker * 3 }), onError: (error) => errors.push(error) });
    const key = await clientKey();
    const { code, verifier } = await publicCode(sentinel);
    const token = jsonOf(await exchange(sentinel, key, code, verifier)).access_token as string;
    const ath = (await import('node:crypto')).createHash('sha256').update(token).digest('base64url');
    const present = async () =>
      sentinel.checkBearer(
        `DPoP ${token}`,
        { accountId: ACCOUNT },
        {
          method: 'GET',
          url: '/api/x',
          headers: { host: 'api.example.com', dpop: await dpopProof(key, { htm: 'GET', htu: 'http://api.example.com/api/x', ath }) },
        },
      );
    let result = await present();
    while (result.ok) result = await present();
    expect(result.response.status).toBe(429);
    expect(JSON.parse(result.response.body ?? '{}').error).toBe('temporarily_unavailable');
    expect(Number(result.response.headers['retry-after'])).toBeGreaterThan(1);
    expect(errors).toEqual([]);
  });
});

describe('per account: DPoP markers are kept in an area of their account', () => {
  const marker = entryBytes(`dpop-jti:${'a'.repeat(22)}:${'a'.repeat(43)}`, '1');

  /** A DPoP-bound token of a public client of ACCOUNT and its presentation at the guard with a fresh proof. */
  async function boundToken(sentinel: Sentinel, key: ClientKey) {
    const { code, verifier } = await publicCode(sentinel);
    const token = jsonOf(await exchange(sentinel, key, code, verifier)).access_token as string;
    const ath = (await import('node:crypto')).createHash('sha256').update(token).digest('base64url');
    const present = async (proof?: string) =>
      sentinel.checkBearer(
        `DPoP ${token}`,
        { accountId: ACCOUNT },
        {
          method: 'GET',
          url: '/api/x',
          headers: {
            host: 'api.example.com',
            dpop: proof ?? (await dpopProof(key, { htm: 'GET', htu: 'http://api.example.com/api/x', ath })),
          },
        },
      );
    return { token, ath, present };
  }

  it("another account's full area refuses none of this account's proofs, at the token endpoint or a resource", async () => {
    const store = new MemoryStore({ securityMaxBytes: marker * 8 });
    const errors: unknown[] = [];
    const sentinel = sentinelWith({ store, onError: (error) => errors.push(error) });
    // Another account's callers spent proofs until its area refused one: the area this account would share before.
    let filled = false;
    for (let index = 0; index < 100 && !filled; index += 1) {
      filled = await store.increment(`dpop-jti:${'o'.repeat(22)}:${String(index).padStart(43, 'p')}`, 600_000).then(
        () => false,
        (error: unknown) => error instanceof SecurityStateFullError,
      );
    }
    expect(filled).toBe(true);
    const key = await clientKey();
    const { present } = await boundToken(sentinel, key);
    expect((await present()).ok).toBe(true);
    expect(errors).toEqual([]);
  });

  it('a proof an earlier version spent, under its key without the account, is a replay', async () => {
    const store = new MemoryStore();
    const sentinel = sentinelWith({ store });
    const key = await clientKey();
    const { ath, present } = await boundToken(sentinel, key);
    const jti = randomBytes(16).toString('hex');
    const proof = await dpopProof(key, { htm: 'GET', htu: 'http://api.example.com/api/x', ath, jti });
    const { digest } = await import('../src/lib/random-secrets.js');
    await store.increment(`dpop-jti:${digest(`${key.jkt}\u0000${jti}`)}`, 600_000);
    const replay = await present(proof);
    expect(replay.ok).toBe(false);
    if (!replay.ok) expect(JSON.parse(replay.response.body ?? '{}').error_description).toMatch(/already used/);
  });
});
