/**
 * Loopback IP redirect URIs (RFC 8252 §7.3, RFC 9700 §2.1): a native app registers `http://127.0.0.1/cb` or
 * `http://[::1]/cb` and listens on whatever port the operating system gives it, so the authorization endpoint takes
 * any port there, and only there (not `localhost`, not a FAPI 2.0 app). The code then belongs to the URI as
 * requested: the login page's `form-action` allows that port, and the token request must name it exactly.
 */
import { describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { sameLoopbackRedirect } from '../src/authorize/request/loopback-redirect.js';
import { AUTHORIZE_PATH, call, csrfOf, jsonOf, LOGIN_PATH, postForm, postLogin, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';
import { assertionAuth, clientKey, KEYED_CLIENT_ID, keyedSentinel } from './helpers/key-bound.js';
import { pkcePair } from './helpers/pkce.js';

const NATIVE_ID = '7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const IPV4 = 'http://127.0.0.1:8080/cb';
const IPV6 = 'http://[::1]/oauth?app=native';
const NAMED = 'http://localhost:8080/cb';

function nativeSentinel(): Sentinel {
  return makeSentinel({
    apps: [{ accountId: ACCOUNT, clientId: NATIVE_ID, tokenEndpointAuthMethod: 'none', redirectUris: [IPV4, IPV6, NAMED] }],
  });
}

function authorize(sentinel: Sentinel, redirectUri: string, challenge: string): Promise<SentinelResponse> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: NATIVE_ID,
    redirect_uri: redirectUri,
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return call(sentinel, { path: AUTHORIZE_PATH, query });
}

function exchange(sentinel: Sentinel, code: string, verifier: string, redirectUri: string): Promise<SentinelResponse> {
  const form = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: NATIVE_ID, redirect_uri: redirectUri };
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
}

describe('sameLoopbackRedirect', () => {
  it.each([
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb'],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:51234/cb'],
    ['http://127.0.0.1:8080/cb', 'http://127.0.0.1/cb'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:9'],
    ['http://[::1]/cb?x=1', 'http://[::1]:65535/cb?x=1'],
  ])('%s takes %s', (registered, requested) => {
    expect(sameLoopbackRedirect(registered, requested)).toBe(true);
  });

  it.each([
    ['localhost is matched exactly', 'http://localhost:8080/cb', 'http://localhost:51234/cb'],
    ['another path', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb/'],
    ['another query', 'http://127.0.0.1:8080/cb?x=1', 'http://127.0.0.1:51234/cb?x=2'],
    ['a query added', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb?x=1'],
    ['a fragment added', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb#x'],
    ['the other loopback', 'http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb'],
    ['another loopback address', 'http://127.0.0.1:8080/cb', 'http://127.0.0.2:8080/cb'],
    ['https', 'https://127.0.0.1:8080/cb', 'https://127.0.0.1:51234/cb'],
    ['the scheme in capitals', 'HTTP://127.0.0.1:8080/cb', 'HTTP://127.0.0.1:51234/cb'],
    ['userinfo', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080@evil.example/cb'],
    ['a longer host', 'http://127.0.0.1/cb', 'http://127.0.0.1.evil.example/cb'],
    ['port 0', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:0/cb'],
    ['port 65536', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:65536/cb'],
    ['a leading zero', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:08080/cb'],
    ['an empty port', 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:/cb'],
    ['a web origin', 'https://app.example.com/cb', 'https://app.example.com:8443/cb'],
  ])('refuses %s', (_name, registered, requested) => {
    expect(sameLoopbackRedirect(registered, requested)).toBe(false);
  });
});

describe('the authorization endpoint with a loopback IP redirect URI on another port', () => {
  it('signs in, allows the port in form-action, and redeems the code only with the URI as requested', async () => {
    const sentinel = nativeSentinel();
    const requested = 'http://127.0.0.1:51234/cb';
    const { verifier, challenge } = pkcePair();
    const toLogin = await authorize(sentinel, requested, challenge);
    expect(toLogin.status).toBe(302);
    const interaction = new URL(String(toLogin.headers.location), 'http://localhost').searchParams.get('interaction') as string;

    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    expect(page.status).toBe(200);
    const formAction = /form-action ([^;]*)/.exec(String(page.headers['content-security-policy']))?.[1];
    expect(formAction?.split(' ')).toContain('http://127.0.0.1:51234');
    expect(formAction).not.toContain(':8080');

    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    const callback = new URL(String(signedIn.headers.location));
    expect(`${callback.origin}${callback.pathname}`).toBe('http://127.0.0.1:51234/cb');
    const code = callback.searchParams.get('code') as string;

    // The token request names the URI of the authorization request, port included (RFC 6749 §4.1.3).
    const registeredPort = await exchange(sentinel, code, verifier, IPV4);
    expect(registeredPort.status).toBe(400);
    expect(jsonOf(registeredPort).error).toBe('invalid_grant');
  });

  it('IPv6: redeems the code with the requested port, form-action allowing http:', async () => {
    const sentinel = nativeSentinel();
    const requested = 'http://[::1]:61023/oauth?app=native';
    const { verifier, challenge } = pkcePair();
    const toLogin = await authorize(sentinel, requested, challenge);
    const interaction = new URL(String(toLogin.headers.location), 'http://localhost').searchParams.get('interaction') as string;
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    // No CSP source names an IPv6 literal: the scheme is the narrowest that lets the 303 through.
    expect(String(page.headers['content-security-policy'])).toMatch(/form-action 'self' http:(;|$)/);
    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD });
    const callback = new URL(String(signedIn.headers.location));
    expect(callback.href.startsWith('http://[::1]:61023/oauth?app=native&code=')).toBe(true);
    const tokens = await exchange(sentinel, callback.searchParams.get('code') as string, verifier, requested);
    expect(tokens.status, tokens.body).toBe(200);
  });

  it('keeps exact matching for localhost and for the path', async () => {
    const sentinel = nativeSentinel();
    const { challenge } = pkcePair();
    for (const uri of ['http://localhost:51234/cb', 'http://127.0.0.1:51234/cb/', 'http://127.0.0.1:51234/other']) {
      const response = await authorize(sentinel, uri, challenge);
      expect(response.status, uri).toBe(400);
      expect(response.headers.location).toBeUndefined();
    }
  });

  it('keeps exact matching for a FAPI 2.0 app (at the pushed authorization request)', async () => {
    const key = await clientKey();
    const pushed = async (profile: Record<string, unknown>) => {
      const sentinel = keyedSentinel(key, { redirectUris: [IPV4], ...profile });
      const { challenge } = pkcePair();
      const form = {
        response_type: 'code',
        client_id: KEYED_CLIENT_ID,
        redirect_uri: 'http://127.0.0.1:51234/cb',
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...(await assertionAuth(key)),
      };
      return postForm(sentinel, `/sentinel/api/account/${ACCOUNT}/par`, new URLSearchParams(form).toString());
    };
    expect((await pushed({})).status).toBe(201);
    const fapi = await pushed({ profile: 'fapi2' });
    expect(fapi.status).toBe(400);
    expect(jsonOf(fapi).error).toBe('invalid_request');
  });
});
