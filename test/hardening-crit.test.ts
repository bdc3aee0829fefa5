/**
 * RFC 7515 §4.1.11: a JWS whose `crit` header names an extension the verifier does not implement is invalid. The
 * service implements none, so every verifier refuses any `crit`, well-formed or not: access tokens (verification,
 * the bearer guard and its verified-token cache), `id_token_hint`, DPoP proofs and private_key_jwt assertions.
 * Each token here is signed with a key the verifier trusts, and the same token without `crit` is accepted, so the
 * refusal is the header's doing. (Client assertions go through jose's jwtVerify, which already refuses every case
 * below; that block guards against a jose upgrade that would start to accept one.)
 */
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contextOf } from '../src/http/context.js';
import { verifyDPoPProof } from '../src/dpop/proof.js';
import { isOAuthError, type Sentinel } from '../src/index.js';
import { verifyIDTokenHint } from '../src/token/id-token-hint.js';
import { verifiedTokenCache } from '../src/guard/verified-token-cache.js';
import { postForm } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, CLIENT_ID, CONSUMER_UUID, ccBody, makeSentinel, SIGNING_KEY, USER_ID } from './helpers/fixtures.js';
import { claimsOf, headerOf } from './helpers/jwt.js';
import { ACCOUNT_ISSUER, ASSERTION_TYPE, clientKey, KEYED_CLIENT_ID, keyedSentinel } from './helpers/key-bound.js';

const now = (): number => Math.floor(Date.now() / 1000);

/** `crit` headers, well-formed and not; none names an extension the service implements. */
const CRITICAL: [string, () => Record<string, unknown>][] = [
  ['a registered claim marked critical', () => ({ crit: ['exp'], exp: now() + 60 })],
  ['an unknown extension', () => ({ crit: ['urn:example:policy'], 'urn:example:policy': 'strict' })],
  ['b64 (RFC 7797)', () => ({ crit: ['b64'], b64: true })],
  ['an empty list', () => ({ crit: [] })],
  ['a string instead of a list', () => ({ crit: 'exp', exp: now() + 60 })],
  ['a list with a non-string entry', () => ({ crit: [42] })],
  ['a name the header does not carry', () => ({ crit: ['urn:example:absent'] })],
  ['null', () => ({ crit: null })],
];

/**
 * A compact ES256 JWS of exactly this header and payload, signed with node:crypto: jose's signer refuses to write
 * an unknown or malformed `crit`, which is the point here.
 */
function signCompact(header: Record<string, unknown>, payload: Record<string, unknown>, privateJwk: object): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const key = createPrivateKey({ key: privateJwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

async function issuedToken(sentinel: Sentinel): Promise<string> {
  const response = await postForm(sentinel, appTokenPath(), ccBody());
  expect(response.status).toBe(200);
  return (JSON.parse(response.body as string) as { access_token: string }).access_token;
}

/** The service's own access token, signed again by its key with `extra` added to the header. */
function resigned(token: string, extra: Record<string, unknown>): string {
  return signCompact({ ...headerOf(token), ...extra }, claimsOf(token), SIGNING_KEY);
}

const EXPECTED = { accountId: ACCOUNT, consumerId: CONSUMER_UUID };

describe.each(['threadpool', 'sync'] as const)('access tokens (verification %s)', (verification) => {
  it('a re-signed token without crit is accepted, so the signing here is the service’s own', async () => {
    const sentinel = makeSentinel({ verification });
    const token = resigned(await issuedToken(sentinel), {});
    await expect(sentinel.verifyAccessToken(token, EXPECTED)).resolves.toMatchObject({ sub: CONSUMER_UUID });
    expect((await sentinel.checkBearer(`Bearer ${token}`, EXPECTED)).ok).toBe(true);
  });

  it.each(CRITICAL)('refuses %s, by verifyAccessToken and by the guard, and caches nothing', async (_name, extra) => {
    const sentinel = makeSentinel({ verification });
    const token = resigned(await issuedToken(sentinel), extra());
    const refused = await sentinel.verifyAccessToken(token, EXPECTED).catch((error: unknown) => error);
    expect(isOAuthError(refused) && refused.code).toBe('invalid_token');
    expect((refused as Error).message).toMatch(/critical header/);
    // Twice: the second time would be the guard's synchronous cache path, had the first been remembered.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const result = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.response.status).toBe(401);
    }
    expect(verifiedTokenCache(contextOf(sentinel))?.has(token)).toBe(false);
  });

  it('introspection calls such a token inactive', async () => {
    const sentinel = makeSentinel({ verification });
    const token = resigned(await issuedToken(sentinel), { crit: ['exp'], exp: now() + 60 });
    const response = await postForm(sentinel, `/sentinel/api/account/${ACCOUNT}/token/introspect`, ccBody({ token }));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body as string)).toEqual({ active: false });
  });
});

describe('id_token_hint', () => {
  const hint = (sentinel: Sentinel, extra: Record<string, unknown>): string => {
    const context = contextOf(sentinel);
    const iat = now();
    const claims = { iss: context.accountIssuer(ACCOUNT), sub: USER_ID, aud: CLIENT_ID, iat, exp: iat + 300, auth_time: iat };
    return signCompact({ alg: 'ES256', typ: 'JWT', kid: context.keys.signer.kid, ...extra }, claims, SIGNING_KEY);
  };

  it('a hint without crit is accepted', async () => {
    const sentinel = makeSentinel();
    await expect(verifyIDTokenHint(contextOf(sentinel), hint(sentinel, {}), ACCOUNT)).resolves.toMatchObject({ sub: USER_ID });
  });

  it.each(CRITICAL)('refuses %s', async (_name, extra) => {
    const sentinel = makeSentinel();
    await expect(verifyIDTokenHint(contextOf(sentinel), hint(sentinel, extra()), ACCOUNT)).resolves.toBeNull();
  });
});

describe('DPoP proofs', () => {
  const url = `http://localhost${appTokenPath()}`;
  async function proofWith(extra: Record<string, unknown>) {
    const key = await clientKey();
    const { kid: _kid, alg: _alg, ...jwk } = key.publicJwk;
    const header = { alg: 'ES256', typ: 'dpop+jwt', jwk, ...extra };
    return signCompact(header, { jti: randomUUID(), iat: now(), htm: 'POST', htu: url }, key.privateJwk);
  }

  it('a proof without crit is accepted', async () => {
    const context = contextOf(makeSentinel());
    await expect(verifyDPoPProof(context, { proof: await proofWith({}), method: 'POST', url }, { owner: 'acct' })).resolves.toHaveProperty(
      'jkt',
    );
  });

  it.each(CRITICAL)('refuses %s, and at the token endpoint issues nothing', async (_name, extra) => {
    const sentinel = makeSentinel();
    const proof = await proofWith(extra());
    const refused = await verifyDPoPProof(contextOf(sentinel), { proof, method: 'POST', url }, { owner: 'acct' }).catch(
      (error: unknown) => error,
    );
    expect(isOAuthError(refused) && refused.code).toBe('invalid_dpop_proof');
    expect((refused as Error).message).toMatch(/critical header/);
    const response = await postForm(sentinel, appTokenPath(), ccBody(), { headers: { dpop: await proofWith(extra()) } });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body as string)).toMatchObject({ error: 'invalid_dpop_proof' });
  });
});

describe('private_key_jwt client assertions', () => {
  async function setUp() {
    const key = await clientKey();
    return { key, sentinel: keyedSentinel(key) };
  }
  function assertion(key: Awaited<ReturnType<typeof clientKey>>, extra: Record<string, unknown>): string {
    const iat = now();
    const claims = { iss: KEYED_CLIENT_ID, sub: KEYED_CLIENT_ID, aud: ACCOUNT_ISSUER, jti: randomUUID(), iat, exp: iat + 60 };
    return signCompact({ alg: 'ES256', kid: key.publicJwk.kid, ...extra }, claims, key.privateJwk);
  }
  const exchange = (sentinel: Sentinel, clientAssertion: string) =>
    postForm(
      sentinel,
      appTokenPath(),
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: KEYED_CLIENT_ID,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: clientAssertion,
      }).toString(),
    );

  it('an assertion without crit is accepted', async () => {
    const { key, sentinel } = await setUp();
    expect((await exchange(sentinel, assertion(key, {}))).status).toBe(200);
  });

  it.each(CRITICAL)('refuses %s with 401 invalid_client', async (_name, extra) => {
    const { key, sentinel } = await setUp();
    const response = await exchange(sentinel, assertion(key, extra()));
    expect(response.status).toBe(401);
    const body = JSON.parse(response.body as string) as Record<string, unknown>;
    expect(body.error).toBe('invalid_client');
    expect(body.access_token).toBeUndefined();
  });
});
