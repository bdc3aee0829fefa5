/**
 * The FAPI 2.0 Security Profile as an app option (`profile: 'fapi2'`): openid-client 6 through PAR, PrivateKeyJwt
 * and DPoP end to end, then one named test per refusal, modelled on the FAPI 2.0 conformance suite's negative
 * modules (client-assertion audience as an array or an endpoint URL, PAR without PKCE, plain PKCE, a DPoP-bound
 * token presented as Bearer, code reuse, a code older than 60 s), the configurations that cannot meet the profile,
 * and the account's metadata, which stays that of every app.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, exportJWK, importJWK, SignJWT } from 'jose';
import * as client from 'openid-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, MemoryAppStore, MemoryStore, type Sentinel, type SentinelOptions } from '../src/index.js';
import { appFromOptions } from '../src/apps/app-options.js';
import { contextOf } from '../src/http/context.js';
import { codeKey, issueCode } from '../src/token/code-records.js';
import { advanceClock, movableClock } from './helpers/clock.js';
import { ACCOUNT, baseOptions, REDIRECT_URI, SIGNING_KEY, USER_ID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import {
  ACCOUNT_ISSUER,
  ASSERTION_TYPE,
  type ClientKey,
  clientAssertion,
  clientKey,
  dpopProof,
  KEYED_CLIENT_ID,
  KEYED_REDIRECT_URI,
  keyedOptions,
  signIn,
} from './helpers/key-bound.js';
import { pkcePair } from './helpers/pkce.js';

const PAR_URL = `${ACCOUNT_ISSUER}/par`;
const TOKEN_URL = `${ACCOUNT_ISSUER}/token`;
const USERINFO_URL = `${ACCOUNT_ISSUER}/userinfo`;
const FAPI2 = { profile: 'fapi2' } as const;

const open: MountedHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The issuer is http://localhost; the server listens on an ephemeral port: route the library's requests there. */
function via(url: string): typeof fetch {
  return ((target: string, init: RequestInit) => fetch(String(target).replace('http://localhost', url), init)) as typeof fetch;
}

interface Harness {
  sentinel: Sentinel;
  mounted: MountedHost;
  key: ClientKey;
  /** The DPoP key of the client. */
  dpop: ClientKey;
  local(url: string): string;
}

async function harness(app: Record<string, unknown> = FAPI2, overrides: Partial<SentinelOptions> = {}): Promise<Harness> {
  const key = await clientKey();
  const sentinel = createSentinel(keyedOptions(key, app, overrides));
  const mounted = await HOSTS[1]!.mount(sentinel);
  open.push(mounted);
  return { sentinel, mounted, key, dpop: await clientKey(), local: (url) => url.replace('http://localhost', mounted.url) };
}

async function post(h: Harness, url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(h.local(url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, string> };
}

/** A pushed request of the fapi2 app, authenticated by an assertion with `assertionClaims`. */
async function push(h: Harness, params: Record<string, string> = {}, assertionClaims: Record<string, unknown> = {}) {
  const { verifier, challenge } = pkcePair();
  const response = await post(h, PAR_URL, {
    response_type: 'code',
    client_id: KEYED_CLIENT_ID,
    redirect_uri: KEYED_REDIRECT_URI,
    scope: 'openid',
    state: 'st-fapi',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: await clientAssertion(h.key, assertionClaims),
    ...params,
  });
  return { ...response, verifier };
}

/** The form of a pushed request of the fapi2 app, without its client authentication. */
async function pushForm(): Promise<Record<string, string>> {
  return {
    response_type: 'code',
    client_id: KEYED_CLIENT_ID,
    redirect_uri: KEYED_REDIRECT_URI,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  };
}

/** Client authentication of the fapi2 app by a fresh assertion. */
async function assertionFields(h: Harness): Promise<Record<string, string>> {
  return { client_assertion_type: ASSERTION_TYPE, client_assertion: await clientAssertion(h.key) };
}

/** Pushed, signed in, back with a code. */
async function codeOf(h: Harness): Promise<{ code: string; verifier: string; callback: URL }> {
  const pushed = await push(h);
  expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
  const url = `${ACCOUNT_ISSUER}/authorize?${new URLSearchParams({ client_id: KEYED_CLIENT_ID, request_uri: pushed.body.request_uri as string })}`;
  const callback = await signIn(h.mounted.url, url);
  const code = callback.searchParams.get('code');
  expect(code, callback.toString()).toBeTruthy();
  return { code: code as string, verifier: pushed.verifier, callback };
}

/**
 * A code exchange with an assertion and a DPoP proof: by the client's DPoP key, the one given, or none when
 * `withProof` is false.
 */
async function exchange(h: Harness, code: string, verifier: string, withProof: boolean | string = true) {
  const proof = withProof === true ? await dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL }) : withProof;
  const headers: Record<string, string> = proof === false ? {} : { dpop: proof };
  return post(
    h,
    TOKEN_URL,
    {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: KEYED_REDIRECT_URI,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await clientAssertion(h.key),
    },
    headers,
  );
}

/** A refresh of the fapi2 app, with an assertion and a DPoP proof by the client's key. */
async function refresh(h: Harness, refreshToken: string) {
  const proof = await dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL });
  return post(
    h,
    TOKEN_URL,
    {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await clientAssertion(h.key),
    },
    { dpop: proof },
  );
}

/**
 * A service whose apps come from an AppStore, mounted on one host: the startup checks see none of them, so a fapi2
 * app it cannot serve is found at request time. What `onError` hears lands in `errors`.
 */
async function fromRegistry(options: SentinelOptions, key: ClientKey, errors: unknown[]): Promise<Harness> {
  const sentinel = createSentinel({
    ...options,
    apps: [],
    appStore: new MemoryAppStore((options.apps ?? []).map(appFromOptions)),
    onError: (error) => errors.push(error),
  });
  const mounted = await HOSTS[1]!.mount(sentinel);
  open.push(mounted);
  return { sentinel, mounted, key, dpop: await clientKey(), local: (url) => url.replace('http://localhost', mounted.url) };
}

describe('a fapi2 app through openid-client 6', () => {
  it('PAR with PrivateKeyJwt and DPoP → sign-in → DPoP-bound tokens → UserInfo → refresh without rotation', async () => {
    const h = await harness();
    const config = await client.discovery(new URL(ACCOUNT_ISSUER), KEYED_CLIENT_ID, undefined, client.PrivateKeyJwt(h.key.privateKey), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: via(h.mounted.url) as never,
    });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = await client.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: KEYED_REDIRECT_URI,
        scope: 'openid',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { DPoP },
    );
    const callback = await signIn(h.mounted.url, url.toString());
    // iss on the authorization response (RFC 9207), checked by the library too.
    expect(callback.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, {
      DPoP,
    });
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.claims()?.sub).toBe(USER_ID);
    const info = await client.fetchUserInfo(config, tokens.access_token, USER_ID, { DPoP });
    expect(info.sub).toBe(USER_ID);
    // Not rotated: the same refresh token comes back, and keeps working.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string, undefined, { DPoP });
    expect(refreshed.token_type).toBe('dpop');
    expect(refreshed.refresh_token).toBe(tokens.refresh_token);
    const again = await client.refreshTokenGrant(config, tokens.refresh_token as string, undefined, { DPoP });
    expect(again.access_token).not.toBe(refreshed.access_token);
  });
});

describe('fapi2 refusals (modelled on the FAPI 2.0 conformance modules)', () => {
  it('array-as-audience: a client assertion whose aud is an array, even of the issuer alone → invalid_client', async () => {
    const h = await harness();
    for (const aud of [[ACCOUNT_ISSUER], [ACCOUNT_ISSUER, TOKEN_URL]]) {
      const pushed = await push(h, {}, { aud });
      expect(pushed.status).toBe(401);
      expect(pushed.body.error).toBe('invalid_client');
    }
    // The control: the issuer as a single string passes.
    expect((await push(h)).status).toBe(201);
  });

  it('endpoint-url-as-audience: the token or PAR endpoint URL as aud → invalid_client', async () => {
    const h = await harness();
    for (const aud of [TOKEN_URL, PAR_URL]) {
      const pushed = await push(h, {}, { aud });
      expect(pushed.status).toBe(401);
      expect(pushed.body.error).toBe('invalid_client');
    }
  });

  it('clock skew: an assertion with iat and nbf 8 s ahead passes on the default tolerance (§5.3.2.1: up to 10 s)', async () => {
    const h = await harness();
    const now = Math.floor(Date.now() / 1000);
    const pushed = await push(h, {}, { iat: now + 8, nbf: now + 8, exp: now + 68 });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
    // Another app keeps the service's tolerance (5 s by default).
    const other = await harness({});
    const refused = await push(other, {}, { iat: now + 8, exp: now + 68 });
    expect(refused.status).toBe(401);
  });

  it('clock skew: an assertion with iat or nbf more than 60 s ahead → invalid_client, whatever clockTolerance allows', async () => {
    const h = await harness(FAPI2, { clockTolerance: 120 });
    const now = Math.floor(Date.now() / 1000);
    for (const claim of ['iat', 'nbf']) {
      const pushed = await push(h, {}, { [claim]: now + 90, exp: now + 150 });
      expect(pushed.status, claim).toBe(401);
      expect(pushed.body.error).toBe('invalid_client');
    }
    expect((await push(h, {}, { iat: now + 50, nbf: now + 50, exp: now + 110 })).status).toBe(201);
  });

  it('an assertion signed with RS256 → invalid_client', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaJwk = { ...(await exportJWK(publicKey)), kid: 'rsa-1' };
    const rsaApp = await harness({ ...FAPI2, jwks: { keys: [rsaJwk] } });
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({
      iss: KEYED_CLIENT_ID,
      sub: KEYED_CLIENT_ID,
      aud: ACCOUNT_ISSUER,
      jti: 'j-rsa',
      iat: now,
      exp: now + 60,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .sign(await importJWK(await exportJWK(privateKey), 'RS256'));
    const refused = await post(rsaApp, PAR_URL, {
      response_type: 'code',
      client_id: KEYED_CLIENT_ID,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: assertion,
    });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'invalid_client' });
  });

  it('PAR without PKCE → invalid_request, nothing pushed', async () => {
    const h = await harness();
    const pushed = await push(h, { code_challenge: '', code_challenge_method: '' });
    expect(pushed.status).toBe(400);
    expect(pushed.body.error).toBe('invalid_request');
    expect(pushed.body.request_uri).toBeUndefined();
  });

  it('PAR without redirect_uri, though the app registered one only → invalid_request, nothing pushed', async () => {
    const h = await harness();
    const pushed = await push(h, { redirect_uri: '' });
    expect(pushed.status).toBe(400);
    expect(pushed.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/redirect_uri is required/) });
    expect(pushed.body.request_uri).toBeUndefined();
  });

  it('plain PKCE → invalid_request', async () => {
    const h = await harness();
    const pushed = await push(h, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    expect(pushed.status).toBe(400);
    expect(pushed.body.error).toBe('invalid_request');
  });

  it('an authorization request that was not pushed → invalid_request back to the app, with state and iss', async () => {
    const h = await harness();
    const { challenge } = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: KEYED_CLIENT_ID,
      redirect_uri: KEYED_REDIRECT_URI,
      state: 'st-direct',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await fetch(h.local(`${ACCOUNT_ISSUER}/authorize?${query}`), { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location') as string);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('st-direct');
    expect(location.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
  });

  it('a token request without a DPoP proof → invalid_dpop_proof, the code still unspent', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const bare = await exchange(h, code, verifier, false);
    expect(bare.status).toBe(400);
    expect(bare.body.error).toBe('invalid_dpop_proof');
    expect((await exchange(h, code, verifier)).status).toBe(200);
  });

  it('clock skew: a DPoP proof with iat 8 s ahead passes at PAR and token endpoint, and stays single-use its whole window', async () => {
    const clock = movableClock();
    try {
      const h = await harness();
      const ahead = () => dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL, iat: Math.floor(Date.now() / 1000) + 8 });
      const pushProof = await dpopProof(h.dpop, { htm: 'POST', htu: PAR_URL, iat: Math.floor(Date.now() / 1000) + 8 });
      expect((await post(h, PAR_URL, { ...(await pushForm()), ...(await assertionFields(h)) }, { dpop: pushProof })).status).toBe(201);
      const { code, verifier } = await codeOf(h);
      const proof = await ahead();
      const tokens = await exchange(h, code, verifier, proof);
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      // 75 s on, the proof's iat is still within the accepted window (60 s of age and 10 s of tolerance past it):
      // its jti must still be remembered.
      await clock.advance(75_000);
      const replayed = await post(
        h,
        TOKEN_URL,
        { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, ...(await assertionFields(h)) },
        { dpop: proof },
      );
      expect(replayed.status).toBe(400);
      expect(replayed.body).toMatchObject({ error: 'invalid_dpop_proof', error_description: 'the DPoP proof was already used' });
    } finally {
      clock.restore();
    }
  });

  it('clock skew: a DPoP proof with iat more than 60 s ahead → invalid_dpop_proof, whatever clockTolerance allows', async () => {
    const h = await harness(FAPI2, { clockTolerance: 120 });
    const { code, verifier } = await codeOf(h);
    const far = await dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL, iat: Math.floor(Date.now() / 1000) + 90 });
    const refused = await exchange(h, code, verifier, far);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    const near = await dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL, iat: Math.floor(Date.now() / 1000) + 50 });
    expect((await exchange(h, code, verifier, near)).status).toBe(200);
  });

  it('a DPoP proof signed with ES384 (allowed to other apps) → invalid_dpop_proof, the code still unspent', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const jwk = await exportJWK(p384.publicKey);
    const proof = await dpopProof(
      h.dpop,
      { htm: 'POST', htu: TOKEN_URL },
      { alg: 'ES384', jwk },
      (await importJWK(await exportJWK(p384.privateKey), 'ES384')) as CryptoKey,
    );
    const refused = await post(
      h,
      TOKEN_URL,
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: KEYED_REDIRECT_URI,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await clientAssertion(h.key),
      },
      { dpop: proof },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_dpop_proof');
    expect(refused.body.error_description).toMatch(/one of ES256, EdDSA, PS256$/);
    expect((await exchange(h, code, verifier)).status).toBe(200);
  });

  it('at a resource, a proof the profile does not allow (RS256 by the bound RSA key) → 401 invalid_dpop_proof', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = await exportJWK(rsa.publicKey);
    const proof = (alg: string, claims: Record<string, unknown>) =>
      new SignJWT({ jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
        .setProtectedHeader({ alg, typ: 'dpop+jwt', jwk } as never)
        .sign(rsa.privateKey);
    const tokens = await exchange(h, code, verifier, await proof('PS256', { htm: 'POST', htu: TOKEN_URL }));
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const token = tokens.body.access_token as string;
    const url = 'https://api.example.com/orders';
    const ath = createHash('sha256').update(token).digest('base64url');
    const present = async (alg: string) =>
      h.sentinel.checkBearer(
        `DPoP ${token}`,
        { accountId: ACCOUNT },
        { method: 'GET', url, headers: { dpop: await proof(alg, { htm: 'GET', htu: url, ath }) } },
      );
    const refused = await present('RS256');
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : String(refused.response.body)).toMatch(/invalid_dpop_proof/);
    expect((await present('PS256')).ok).toBe(true);
  });

  it('Bearer presentation of a DPoP-bound token → 401 invalid_token', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const tokens = await exchange(h, code, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('DPoP');
    const asBearer = await fetch(h.local(USERINFO_URL), { headers: { authorization: `Bearer ${tokens.body.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    await expect(h.sentinel.verifyAccessToken(tokens.body.access_token as string)).rejects.toMatchObject({ code: 'invalid_token' });
    // With its proof it is accepted.
    const ath = createHash('sha256')
      .update(tokens.body.access_token as string)
      .digest('base64url');
    const withProof = await fetch(h.local(USERINFO_URL), {
      headers: { authorization: `DPoP ${tokens.body.access_token}`, dpop: await dpopProof(h.dpop, { htm: 'GET', htu: USERINFO_URL, ath }) },
    });
    expect(withProof.status).toBe(200);
  });

  it('code reuse → invalid_grant', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    expect((await exchange(h, code, verifier)).status).toBe(200);
    const reused = await exchange(h, code, verifier);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });

  it('code reuse within retryGrace, after the refresh token was used → the grant is revoked (RFC 6749 §4.1.2)', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const tokens = await exchange(h, code, verifier);
    expect(tokens.status).toBe(200);
    // The refresh token does not rotate here, so the grant's generation stays 0; its use still proves the client
    // had the code's answer, and the code presented again is a replay, not a retry.
    expect((await refresh(h, tokens.body.refresh_token as string)).status).toBe(200);
    const reused = await exchange(h, code, verifier);
    expect(reused.body).toMatchObject({
      error: 'invalid_grant',
      error_description: 'the code has already been used; the tokens issued from it are revoked',
    });
    expect((await refresh(h, tokens.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it('a store failing to mark the refresh → 500 server_error to onError, nothing issued; the retry works', async () => {
    const errors: unknown[] = [];
    let failing = true;
    class FailingMark extends MemoryStore {
      override set(key: string, value: string, ttlMs: number): Promise<void> {
        if (failing && key.startsWith('grant-refreshed:')) return Promise.reject(new Error('store down'));
        return super.set(key, value, ttlMs);
      }
    }
    const h = await harness(FAPI2, { store: new FailingMark(), onError: (error) => void errors.push(error) });
    const { code, verifier } = await codeOf(h);
    const tokens = await exchange(h, code, verifier);
    const failed = await refresh(h, tokens.body.refresh_token as string);
    expect(failed.status).toBe(500);
    expect(failed.body.error).toBe('server_error');
    expect(failed.body.access_token).toBeUndefined();
    expect(errors).toHaveLength(1);
    failing = false;
    expect((await refresh(h, tokens.body.refresh_token as string)).status).toBe(200);
  });

  it('code reuse within retryGrace, the refresh token unused → refused only (a retry after a lost answer)', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    const tokens = await exchange(h, code, verifier);
    const reused = await exchange(h, code, verifier);
    expect(reused.body).toMatchObject({ error: 'invalid_grant', error_description: 'the code has already been used' });
    expect((await refresh(h, tokens.body.refresh_token as string)).status).toBe(200);
  });

  it('a code older than 60 s, with a moved clock → invalid_grant', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    advanceClock(61);
    const late = await exchange(h, code, verifier);
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ error: 'invalid_grant', error_description: 'the code has expired' });
  });

  it('a code issued without a PKCE challenge (before the app became fapi2) → invalid_grant, the code unspent', async () => {
    const h = await harness();
    const now = Math.floor(Date.now() / 1000);
    const record = { accountId: ACCOUNT, clientId: KEYED_CLIENT_ID, redirectUri: KEYED_REDIRECT_URI, redirectUriInRequest: true };
    const code = await issueCode(contextOf(h.sentinel), { ...record, userId: USER_ID, authTime: now - 5, issuedAt: now, scope: 'openid' });
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: KEYED_REDIRECT_URI,
      client_assertion_type: ASSERTION_TYPE,
    };
    const proof = async () => ({ dpop: await dpopProof(h.dpop, { htm: 'POST', htu: TOKEN_URL }) });
    const refused = await post(h, TOKEN_URL, { ...form, client_assertion: await clientAssertion(h.key) }, await proof());
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/PKCE is required/) });
    expect(refused.body.access_token).toBeUndefined();
    // Refused before anything was spent: the code is still stored.
    expect(await contextOf(h.sentinel).store.get(codeKey(code))).not.toBeNull();
  });

  it('a code of 59 s still works (the limit is 60 s, not less)', async () => {
    const h = await harness();
    const { code, verifier } = await codeOf(h);
    advanceClock(59);
    expect((await exchange(h, code, verifier)).status).toBe(200);
  });
});

describe('fapi2 configuration', () => {
  it.each([
    [{ tokenEndpointAuthMethod: 'client_secret_basic', clientSecret: 's'.repeat(32) }, 'apps[4].tokenEndpointAuthMethod'],
    [{ requireDPoP: false }, 'apps[4].requireDPoP'],
    [{ requirePushedAuthorizationRequests: false }, 'apps[4].requirePushedAuthorizationRequests'],
    [{ idTokenSignedResponseAlg: 'RS256' }, 'apps[4].idTokenSignedResponseAlg'],
  ])('an app that cannot meet the profile is a ConfigurationError naming the field (%j)', async (app, field) => {
    const key = await clientKey();
    const options = keyedOptions(key, { ...FAPI2, ...app });
    expect(options.apps?.length).toBe(5);
    expect(() => createSentinel(options)).toThrow(expect.objectContaining({ name: 'ConfigurationError', field }));
  });

  it('a service signing with RS256 only cannot serve a fapi2 app: ConfigurationError naming keys', async () => {
    const key = await clientKey();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsa = { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'rs-1', use: 'sig' };
    expect(() => createSentinel(keyedOptions(key, FAPI2, { keys: [rsa] as never }))).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', field: 'keys' }),
    );
    // The same keys serve an account without a fapi2 app.
    expect(() => createSentinel(keyedOptions(key, {}, { keys: [rsa] as never }))).not.toThrow();
  });

  it('a fapi2 app without idTokenSignedResponseAlg gets ES256 ID tokens where the service would sign RS256', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsa = { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'rs-1', use: 'sig' };
    const h = await harness(FAPI2, { keys: [SIGNING_KEY, rsa] as never });
    const { code, verifier } = await codeOf(h);
    const tokens = await exchange(h, code, verifier);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(decodeProtectedHeader(tokens.body.id_token as string).alg).toBe('ES256');
  });

  it('a fapi2 app from an AppStore, on a service signing RS256: 500 and onError, nothing issued', async () => {
    const key = await clientKey();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsa = { ...(await exportJWK(privateKey)), alg: 'RS256', kid: 'rs-1', use: 'sig' };
    const options = keyedOptions(key, FAPI2, { keys: [rsa] as never });
    const errors: unknown[] = [];
    // The startup check sees no fapi2 app in `apps`: this one comes from the registry at request time.
    const h = await fromRegistry(options, key, errors);
    const pushed = await push(h);
    expect([pushed.status, pushed.body.error]).toEqual([500, 'server_error']);
    expect(String(errors[0])).toMatch(/fapi2 app .* would sign with RS256/);
  });

  it('an Ed448 key signing EdDSA (§5.4.1: EdDSA is Ed25519 only): ConfigurationError naming keys, or 500 for an AppStore app', async () => {
    const key = await clientKey();
    const { privateKey } = generateKeyPairSync('ed448');
    const ed448 = { ...(privateKey.export({ format: 'jwk' }) as object), alg: 'EdDSA', kid: 'ed448-1', use: 'sig' };
    const refused = expect.objectContaining({ name: 'ConfigurationError', field: 'keys' });
    // As the access tokens' signer, or as the key of the app's EdDSA ID tokens beside an ES256 signer.
    expect(() => createSentinel(keyedOptions(key, FAPI2, { keys: [ed448] as never }))).toThrow(refused);
    const idTokens = { ...FAPI2, idTokenSignedResponseAlg: 'EdDSA' };
    expect(() => createSentinel(keyedOptions(key, idTokens, { keys: [SIGNING_KEY, ed448] as never }))).toThrow(refused);
    // The same keys serve an account without a fapi2 app, and a fapi2 app whose tokens the ES256 key signs.
    expect(() => createSentinel(keyedOptions(key, {}, { keys: [ed448] as never }))).not.toThrow();
    expect(() => createSentinel(keyedOptions(key, FAPI2, { keys: [SIGNING_KEY, ed448] as never }))).not.toThrow();
    const errors: unknown[] = [];
    const h = await fromRegistry(keyedOptions(key, FAPI2, { keys: [ed448] as never }), key, errors);
    const pushed = await push(h);
    expect([pushed.status, pushed.body.error]).toEqual([500, 'server_error']);
    expect(String(errors[0])).toMatch(/fapi2 app .* would sign with EdDSA \(Ed448\)/);
  });

  it('a service taking no DPoP proof algorithm of the profile cannot serve a fapi2 app: ConfigurationError, or 500 for an AppStore app', async () => {
    const key = await clientKey();
    const dpop = { algorithms: ['ES384', 'RS256'] } as SentinelOptions['dpop'];
    expect(() => createSentinel(keyedOptions(key, FAPI2, { dpop }))).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', field: 'dpop.algorithms' }),
    );
    // The same algorithms serve an account without a fapi2 app.
    expect(() => createSentinel(keyedOptions(key, {}, { dpop }))).not.toThrow();
    // A fapi2 app from the registry: the deployment's mistake, not an invalid_dpop_proof of the client's.
    const options = keyedOptions(key, FAPI2, { dpop });
    const errors: unknown[] = [];
    const h = await fromRegistry(options, key, errors);
    const pushed = await push(h);
    expect([pushed.status, pushed.body.error]).toEqual([500, 'server_error']);
    expect(pushed.body.request_uri).toBeUndefined();
    expect(String(errors[0])).toMatch(/fapi2 app .* needs DPoP proofs signed with ES256, PS256, EdDSA/);
  });

  it('the metadata stays that of every app: PAR is not required of the account, another app authorizes directly', async () => {
    const h = await harness();
    const metadata = (await (await fetch(h.local(`${ACCOUNT_ISSUER}/.well-known/openid-configuration`))).json()) as Record<string, unknown>;
    expect(metadata.require_pushed_authorization_requests).toBe(false);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    const { challenge } = pkcePair();
    const base = baseOptions();
    const other = base.apps?.[0];
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: other?.clientId as string,
      redirect_uri: REDIRECT_URI,
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const direct = await fetch(h.local(`${ACCOUNT_ISSUER}/authorize?${query}`), { redirect: 'manual' });
    expect(direct.status).toBe(302);
    expect(direct.headers.get('location')).toContain(`/sentinel/api/account/${ACCOUNT}/login?interaction=`);
  });
});
