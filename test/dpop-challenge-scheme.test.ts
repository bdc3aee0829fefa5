/**
 * RFC 9449 §7.1: a protected resource answers a request made with the `DPoP` scheme with a `WWW-Authenticate: DPoP`
 * challenge naming its `algs`, whatever failed: an unparsable header, a token of another account or consumer, a
 * token that is not a user's, a missing scope, a sign-in too weak (RFC 9470), not only a bad proof. A request with
 * no credentials is offered both schemes (Bearer first). The bearer guard (every adapter's `requireAccessToken`,
 * `sentinel.checkBearer`) and UserInfo answer alike; a Bearer request keeps its Bearer challenge.
 */
import { describe, expect, it } from 'vitest';
import { requireAccessToken } from '../adapters/fetch/index.js';
import type { Sentinel } from '../src/index.js';
import { call, jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, OTHER_ACCOUNT, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { type ClientKey, clientKey, dpopProof, keyedSentinel } from './helpers/key-bound.js';
import { codeFor } from './helpers/oauth.js';
import { pkcePair } from './helpers/pkce.js';
import { createHash } from 'node:crypto';

const TOKEN_PATH = `/sentinel/api/account/${ACCOUNT}/token`;
const USERINFO_PATH = `/sentinel/api/account/${ACCOUNT}/userinfo`;
const API_URL = `https://api.example.com/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/export`;
const ALGS = 'algs="ES256 ES384 EdDSA RS256 PS256"';
const BOTH = `Bearer realm="sentinel", DPoP ${ALGS}`;

const ath = (token: string): string => createHash('sha256').update(token).digest('base64url');

async function started(): Promise<{ sentinel: Sentinel; key: ClientKey }> {
  const key = await clientKey();
  return { sentinel: keyedSentinel(key), key };
}

/** An app token of the confidential client, bound to `key` (or unbound without one). */
async function appToken(sentinel: Sentinel, key?: ClientKey): Promise<string> {
  const headers = key === undefined ? {} : { dpop: await dpopProof(key, { htm: 'POST', htu: `http://localhost${TOKEN_PATH}` }) };
  const form = `grant_type=client_credentials&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`;
  const response = await postForm(sentinel, TOKEN_PATH, form, { headers });
  expect(response.status, response.body as string).toBe(200);
  return jsonOf(response).access_token as string;
}

/** A user token of the public client with `scope`, bound to `key`. */
async function userToken(sentinel: Sentinel, key: ClientKey, scope: string): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const code = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID, redirectUri: REDIRECT_URI, codeChallenge: challenge, scope });
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    client_id: PUBLIC_CLIENT_ID,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
  });
  const headers = { dpop: await dpopProof(key, { htm: 'POST', htu: `http://localhost${TOKEN_PATH}` }) };
  const response = await postForm(sentinel, TOKEN_PATH, form.toString(), { headers });
  expect(response.status, response.body as string).toBe(200);
  return jsonOf(response).access_token as string;
}

/** The guard's answer to `authorization` on the API URL, with a fresh proof by `key` when one is given. */
async function guard(sentinel: Sentinel, authorization: string | undefined, options: Record<string, unknown>, key?: ClientKey) {
  const token = authorization?.split(' ')[1] ?? '';
  const headers = key === undefined ? {} : { dpop: await dpopProof(key, { htm: 'GET', htu: API_URL, ath: ath(token) }) };
  const result = await sentinel.checkBearer(authorization, options, { method: 'GET', url: API_URL, headers });
  expect(result.ok, authorization).toBe(false);
  return result.ok ? undefined : result.response;
}

describe('the bearer guard names the scheme the request used', () => {
  it('answers a DPoP request refused for a reason that is not its proof with the DPoP challenge and its algs', async () => {
    const { sentinel, key } = await started();
    const bound = await appToken(sentinel, key);
    const cases: [string, string | undefined, Record<string, unknown>, ClientKey | undefined][] = [
      ['another account', `DPoP ${bound}`, { accountId: OTHER_ACCOUNT }, key],
      ['another consumer', `DPoP ${bound}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID }, key],
      ['an unparsable header', 'DPoP a b', {}, undefined],
      ['a scheme without a token', 'DPoP', {}, undefined],
    ];
    for (const [name, authorization, options, proofKey] of cases) {
      const response = await guard(sentinel, authorization, options, proofKey);
      expect(response?.status, name).toBe(401);
      expect(response?.headers['www-authenticate'], name).toMatch(
        new RegExp(`^DPoP ${ALGS}, error="invalid_token", error_description="[^"]+"$`),
      );
    }
  });

  it('describes an unparsable DPoP header in the DPoP scheme, not as a Bearer one', async () => {
    const { sentinel } = await started();
    for (const authorization of ['DPoP a b', 'DPoP', 'dpop a b']) {
      const response = await guard(sentinel, authorization, {});
      const body = JSON.parse(response?.body as string) as { error_description: string };
      expect(body.error_description, authorization).toBe("the Authorization header must be 'DPoP <token>'");
    }
    const bearer = await guard(sentinel, 'Bearer a b', {});
    expect(JSON.parse(bearer?.body as string).error_description).toBe("the Authorization header must be 'Bearer <token>'");
  });

  it('names the algs in a DPoP step-up refusal (RFC 9470 with RFC 9449 §7.1)', async () => {
    const { sentinel, key } = await started();
    const bound = await appToken(sentinel, key);
    // An app's own token has no sign-in behind it: it meets no acr requirement.
    const response = await guard(sentinel, `DPoP ${bound}`, { accountId: ACCOUNT, acrValues: 'urn:sentinel:acr:mfa' }, key);
    expect(response?.status).toBe(401);
    expect(response?.headers['www-authenticate']).toMatch(
      new RegExp(`^DPoP ${ALGS}, error="insufficient_user_authentication", error_description="[^"]+", acr_values="urn:sentinel:acr:mfa"$`),
    );
    await expect(
      sentinel.verifyAccessToken(bound, {
        acrValues: 'urn:sentinel:acr:mfa',
        dpop: { scheme: 'DPoP', proof: await dpopProof(key, { htm: 'GET', htu: API_URL, ath: ath(bound) }), method: 'GET', url: API_URL },
      }),
    ).rejects.toMatchObject({ headers: { 'www-authenticate': expect.stringMatching(new RegExp(`^DPoP ${ALGS}, error=`)) } });
  });

  it('names the algs in a DPoP insufficient_scope refusal (RFC 6750 §3.1 with RFC 9449 §7.1), with status 403', async () => {
    const { sentinel, key } = await started();
    const bound = await appToken(sentinel, key);
    // The app is registered with no scope, so its token carries none.
    const response = await guard(sentinel, `DPoP ${bound}`, { accountId: ACCOUNT, scopes: ['files:read'] }, key);
    expect(response?.status).toBe(403);
    expect(response?.headers['www-authenticate']).toMatch(
      new RegExp(`^DPoP ${ALGS}, error="insufficient_scope", error_description="[^"]+", scope="files:read"$`),
    );
  });

  it('keeps the Bearer challenge for a Bearer request, and offers both schemes to a request without credentials', async () => {
    const { sentinel } = await started();
    const plain = await appToken(sentinel);
    const foreign = await guard(sentinel, `Bearer ${plain}`, { accountId: OTHER_ACCOUNT });
    expect(foreign?.headers['www-authenticate']).toMatch(/^Bearer realm="sentinel", error="invalid_token", error_description="[^"]+"$/);
    for (const authorization of [undefined, 'Basic YTpi']) {
      const response = await guard(sentinel, authorization, {});
      expect(response?.status).toBe(401);
      expect(response?.headers['www-authenticate'], authorization).toBe(BOTH);
    }
  });

  it('answers alike through an adapter guard', async () => {
    const { sentinel, key } = await started();
    const bound = await appToken(sentinel, key);
    const check = requireAccessToken(sentinel);
    const other = '11111111-2222-4333-8444-555555555555';
    const proof = await dpopProof(key, { htm: 'GET', htu: API_URL, ath: ath(bound) });
    const refused = await check(new Request(API_URL, { headers: { authorization: `DPoP ${bound}`, dpop: proof } }), {
      accountId: ACCOUNT,
      consumerId: other,
    });
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(401);
    expect((refused as Response).headers.get('www-authenticate')).toMatch(new RegExp(`^DPoP ${ALGS}, error="invalid_token"`));
    const missing = await check(new Request(API_URL), { accountId: ACCOUNT, consumerId: other });
    expect((missing as Response).headers.get('www-authenticate')).toBe(BOTH);
  });
});

describe('UserInfo names the scheme the request used', () => {
  async function userInfo(sentinel: Sentinel, authorization: string | undefined, key?: ClientKey) {
    const token = authorization?.split(' ')[1] ?? '';
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    if (key !== undefined) headers.dpop = await dpopProof(key, { htm: 'GET', htu: `http://localhost${USERINFO_PATH}`, ath: ath(token) });
    return call(sentinel, { path: USERINFO_PATH, headers });
  }

  it('answers a DPoP request with the DPoP challenge: not a user token, no openid scope, an unparsable header', async () => {
    const { sentinel, key } = await started();
    const app = await appToken(sentinel, key);
    const noOpenID = await userToken(sentinel, key, 'profile');
    const cases: [string, string, ClientKey | undefined, number, string][] = [
      ['an app token', `DPoP ${app}`, key, 401, 'invalid_token'],
      ['no openid scope', `DPoP ${noOpenID}`, key, 403, 'insufficient_scope'],
      ['an unparsable header', 'DPoP a b', undefined, 401, 'invalid_token'],
    ];
    for (const [name, authorization, proofKey, status, error] of cases) {
      const response = await userInfo(sentinel, authorization, proofKey);
      expect(response.status, name).toBe(status);
      expect(jsonOf(response).error, name).toBe(error);
      expect(response.headers['www-authenticate'], name).toMatch(new RegExp(`^DPoP ${ALGS}, error="${error}", error_description="[^"]+"`));
    }
  });

  it('offers both schemes to a request without credentials, as the guard does', async () => {
    const { sentinel } = await started();
    for (const authorization of [undefined, 'Basic YTpi']) {
      const response = await userInfo(sentinel, authorization);
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate'], authorization).toBe(BOTH);
    }
  });
});
