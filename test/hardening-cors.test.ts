/**
 * CORS for browser apps (src/http/cors.ts): the discovery documents (OpenID and RFC 8414), the JWKS, the token,
 * revocation and pushed authorization endpoints and UserInfo answer every request — errors included — with
 * `Access-Control-Allow-Origin: *`, and answer the preflight a browser sends before a POST with an `Authorization` or
 * `DPoP` header. Credentials are never allowed. Introspection and the app-token paths (confidential clients only)
 * stay same-origin. The core is tested through `sentinel.handle()`; the preflight and a cross-origin POST then go
 * through every host of test/helpers/hosts.ts, to show each adapter passes OPTIONS through and writes the headers.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { SentinelResponse } from '../src/index.js';
import { ACCOUNT_PATH, call, jsonOf, postForm, TOKEN_PATH } from './helpers/direct-flow.js';
import { appTokenPath, basic, ccBody, CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { useMount } from './helpers/mount.js';
import { pkcePair } from './helpers/pkce.js';
import { HOSTS } from './helpers/hosts.js';

const ORIGIN = 'https://spa.example';
const DOCUMENTS = [
  `${ACCOUNT_PATH}/.well-known/openid-configuration`,
  `/.well-known/oauth-authorization-server${ACCOUNT_PATH}`,
  `${ACCOUNT_PATH}/.well-known/oauth-authorization-server`,
  '/sentinel/well-known/jwks',
  `${ACCOUNT_PATH}/jwks`,
  `${ACCOUNT_PATH}/.well-known/jwks.json`,
];
const REVOKE_PATH = `${TOKEN_PATH}/revoke`;
const PAR_PATH = `${ACCOUNT_PATH}/par`;
const INTROSPECT_PATH = `${TOKEN_PATH}/introspect`;

/** A browser's preflight ahead of a cross-origin request with these non-safelisted headers. */
function preflightHeaders(method: string, headers: string): Record<string, string> {
  return { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers };
}

function expectReadableCrossOrigin(response: SentinelResponse | request.Response, where: string): void {
  expect(response.headers['access-control-allow-origin'], where).toBe('*');
  expect(response.headers['access-control-allow-credentials'], where).toBeUndefined();
}

function expectSameOrigin(response: SentinelResponse, where: string): void {
  expect(response.headers['access-control-allow-origin'], where).toBeUndefined();
}

/** The preflight answer: 204, the methods and headers the route reads, no credentials, no body. */
function expectPreflight(response: SentinelResponse | request.Response, methods: string, headers: string[]): void {
  expect(response.status).toBe(204);
  expectReadableCrossOrigin(response, 'preflight');
  expect(response.headers['access-control-allow-methods']).toBe(methods);
  const allowed = String(response.headers['access-control-allow-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  for (const header of headers) expect(allowed, `Access-Control-Allow-Headers holds ${header}`).toContain(header.toLowerCase());
  expect(Number(response.headers['access-control-max-age'])).toBeGreaterThan(0);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
}

describe('CORS at the core', () => {
  it('makes the discovery documents and the JWKS readable from any origin, and answers their preflight', async () => {
    const sentinel = makeSentinel();
    for (const path of DOCUMENTS) {
      const response = await call(sentinel, { path, headers: { origin: ORIGIN } });
      expect(response.status, path).toBe(200);
      expectReadableCrossOrigin(response, path);
      // A cached document is shared between requests: the CORS copy must not change it for the next caller.
      expectReadableCrossOrigin(await call(sentinel, { path }), path);
      expectPreflight(await call(sentinel, { method: 'OPTIONS', path, headers: preflightHeaders('GET', 'x-requested-with') }), 'GET', []);
    }
    // An unknown account's 404 is readable too, so the app can tell a wrong issuer from a network failure.
    const unknown = await call(sentinel, { path: '/sentinel/api/account/no-such-account/.well-known/openid-configuration' });
    expect(unknown.status).toBe(404);
    expectReadableCrossOrigin(unknown, 'unknown account');
  });

  it('answers the token endpoint preflight for Authorization and DPoP, and every token answer, errors included', async () => {
    const sentinel = makeSentinel();
    const preflight = await call(sentinel, {
      method: 'OPTIONS',
      path: TOKEN_PATH,
      headers: preflightHeaders('POST', 'authorization,content-type,dpop'),
    });
    expectPreflight(preflight, 'POST', ['Authorization', 'DPoP', 'Content-Type']);
    expect(preflight.body).toBeUndefined();

    const issued = await postForm(sentinel, TOKEN_PATH, ccBody(), { headers: { origin: ORIGIN } });
    expect(issued.status).toBe(200);
    expectReadableCrossOrigin(issued, 'issued');
    expect(issued.headers['access-control-expose-headers']).toMatch(/DPoP-Nonce/);

    const refused = await postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: 'client_credentials' }).toString(), {
      headers: { origin: ORIGIN, authorization: basic(CLIENT_ID, 'not-the-secret-0001') },
    });
    expect(refused.status).toBe(401);
    expectReadableCrossOrigin(refused, 'refused');
    expect(refused.headers['www-authenticate']).toBeDefined();
    expect(refused.headers['access-control-expose-headers']).toMatch(/WWW-Authenticate/);

    const wrongMethod = await call(sentinel, { path: TOKEN_PATH, headers: { origin: ORIGIN } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toBe('POST, OPTIONS');
    expectReadableCrossOrigin(wrongMethod, '405');
  });

  it('lets a public client revoke and push authorization requests from a browser', async () => {
    const sentinel = makeSentinel();
    expectPreflight(
      await call(sentinel, { method: 'OPTIONS', path: REVOKE_PATH, headers: preflightHeaders('POST', 'authorization') }),
      'POST',
      ['Authorization'],
    );
    const revoked = await postForm(
      sentinel,
      REVOKE_PATH,
      new URLSearchParams({ token: 'unknown-token', client_id: PUBLIC_CLIENT_ID }).toString(),
      {
        headers: { origin: ORIGIN },
      },
    );
    expect(revoked.status).toBe(200);
    expectReadableCrossOrigin(revoked, 'revocation');

    expectPreflight(await call(sentinel, { method: 'OPTIONS', path: PAR_PATH, headers: preflightHeaders('POST', 'dpop') }), 'POST', [
      'DPoP',
    ]);
    const { challenge } = pkcePair();
    const pushedForm = { response_type: 'code', client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI, code_challenge: challenge };
    const pushed = await postForm(sentinel, PAR_PATH, new URLSearchParams({ ...pushedForm, code_challenge_method: 'S256' }).toString(), {
      headers: { origin: ORIGIN },
    });
    expect(pushed.status, pushed.body).toBe(201);
    expectReadableCrossOrigin(pushed, 'par');
  });

  it('lets a browser app read Retry-After on a refusal for the moment: a public push over the bound of its address', async () => {
    const sentinel = makeSentinel({ par: { publicPushesPerAddress: 1 } });
    const push = () => {
      const form = { response_type: 'code', client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI, code_challenge_method: 'S256' };
      const body = new URLSearchParams({ ...form, code_challenge: pkcePair().challenge }).toString();
      return postForm(sentinel, PAR_PATH, body, { headers: { origin: ORIGIN }, ip: '203.0.113.7' });
    };
    expect((await push()).status).toBe(201);
    const refused = await push();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expectReadableCrossOrigin(refused, 'throttled push');
    // Not a safelisted response header: without it the app cannot learn how long to wait.
    expect(String(refused.headers['access-control-expose-headers'])).toMatch(/(^|, )Retry-After(,|$)/);
  });

  it('keeps introspection and the app-token paths same-origin: their callers are servers with a secret', async () => {
    const sentinel = makeSentinel();
    const form = new URLSearchParams({ token: 'unknown-token', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString();
    const introspected = await postForm(sentinel, INTROSPECT_PATH, form, { headers: { origin: ORIGIN } });
    expect(jsonOf(introspected)).toEqual({ active: false });
    expectSameOrigin(introspected, 'introspection');
    const preflight = await call(sentinel, {
      method: 'OPTIONS',
      path: INTROSPECT_PATH,
      headers: preflightHeaders('POST', 'authorization'),
    });
    expect(preflight.status).toBe(405);
    expectSameOrigin(preflight, 'introspection preflight');
    for (const path of [appTokenPath(), `${ACCOUNT_PATH}/app/token`]) {
      const response = await postForm(sentinel, path, ccBody(), { headers: { origin: ORIGIN } });
      expect(response.status, path).toBe(200);
      expectSameOrigin(response, path);
    }
  });

  it('never allows credentials, whatever the request carries', async () => {
    const sentinel = makeSentinel();
    const headers = { ...preflightHeaders('POST', 'authorization'), cookie: 'sentinel_session=abc' };
    for (const path of [TOKEN_PATH, REVOKE_PATH, PAR_PATH, `${ACCOUNT_PATH}/userinfo`, ...DOCUMENTS]) {
      const response = await call(sentinel, { method: 'OPTIONS', path, headers });
      expect(response.headers['access-control-allow-credentials'], path).toBeUndefined();
      expect(response.headers['access-control-allow-origin'], path).toBe('*');
    }
  });
});

describe.each(HOSTS)('CORS through $name', (host) => {
  const mount = useMount(host);

  it('passes the preflight of the token endpoint, revocation, discovery and the JWKS through, and a cross-origin POST', async () => {
    const { server } = await mount();
    const agent = request(server as Parameters<typeof request>[0]);
    const token = await agent
      .options(TOKEN_PATH)
      .set('origin', ORIGIN)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'authorization, dpop');
    expectPreflight(token, 'POST', ['Authorization', 'DPoP']);
    expect(token.text).toBe('');
    const revoke = await agent.options(REVOKE_PATH).set('origin', ORIGIN).set('access-control-request-method', 'POST');
    expectPreflight(revoke, 'POST', ['Authorization']);
    for (const path of [`${ACCOUNT_PATH}/.well-known/openid-configuration`, '/sentinel/well-known/jwks']) {
      expectPreflight(await agent.options(path).set('origin', ORIGIN).set('access-control-request-method', 'GET'), 'GET', []);
      const document = await agent.get(path).set('origin', ORIGIN);
      expect(document.status).toBe(200);
      expectReadableCrossOrigin(document, path);
    }
    const issued = await agent
      .post(TOKEN_PATH)
      .set('origin', ORIGIN)
      .set('content-type', 'application/x-www-form-urlencoded')
      .send(ccBody());
    expect(issued.status).toBe(200);
    expectReadableCrossOrigin(issued, 'token');
    expect(issued.headers['access-control-expose-headers']).toMatch(/WWW-Authenticate/);
    // The host's own routes are not the service's: no CORS headers are added to them.
    const ping = await agent.get('/host/ping').set('origin', ORIGIN);
    expect(ping.headers['access-control-allow-origin']).toBeUndefined();
  });
});
