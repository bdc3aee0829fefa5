/**
 * Black-box suite of the browser flow (platform-operations.md §4.2): the authorize endpoint, the built-in login page, device
 * sessions, authorization codes, error redirects, logout. Runs through `sentinel.handle()` over real HTTP, with
 * supertest agents as the browser's cookie jar.
 */
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { codeKey, type CodeRecord, parseCodeRecord } from '../../src/token/code-records.js';
import type { AppStore, SentinelEvent, Store } from '../../src/index.js';
import { MemoryStore } from '../../src/index.js';
import {
  ACCOUNT,
  CC_ONLY_CLIENT_ID,
  CLIENT_ID,
  ISSUER,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  PASSWORD,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
  SECOND_REDIRECT_URI,
  USER_ID,
  USERNAME,
  baseOptions,
} from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { openLogin, parseLocation, postLogin, sessionCookieOf, setCookies, signIn, startLogin } from '../helpers/login-drive.js';
import { useMount, type Mounted } from '../helpers/mount.js';
import { pkcePair } from '../helpers/pkce.js';
import { contextOf } from '../../src/http/context.js';

const FORM = 'application/x-www-form-urlencoded';
const ACCOUNT_ISSUER = `${ISSUER}/sentinel/api/account/${ACCOUNT}`;
const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;
const LOGOUT = `/sentinel/api/account/${ACCOUNT}/logout`;
const TRICKY_STATE = 'a&b=c#d+e f/g?h%20i;ü€😀';

/** An authorize path; `undefined` values are left out, arrays repeat the parameter. */
function authorizePath(params: Record<string, string | string[] | undefined> = {}, path = AUTHORIZE): string {
  const query = new URLSearchParams();
  const merged = { response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 'xyz', ...params };
  for (const [name, value] of Object.entries(merged)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) query.append(name, one);
  }
  return `${path}?${query.toString()}`;
}

function expectErrorRedirect(
  response: request.Response,
  error: string,
  state: string | null = 'xyz',
  base = REDIRECT_URI,
): URLSearchParams {
  expect(response.status).toBe(302);
  const { base: target, params } = parseLocation(response);
  expect(target).toBe(base);
  expect(params.get('error')).toBe(error);
  expect(params.get('error_description')).toBeTruthy();
  expect(params.get('state')).toBe(state);
  expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
  expect(params.has('code')).toBe(false);
  return params;
}

function expectHTMLSecurityHeaders(response: request.Response): void {
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  const csp = response.headers['content-security-policy'] as string;
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("form-action 'self'");
  expect(csp).toContain("base-uri 'none'");
  expect(csp).not.toContain('script-src');
  const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
  expect(nonce).toBeTruthy();
  if (response.text.includes('<style')) expect(response.text).toContain(`<style nonce="${nonce}">`);
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['access-control-allow-origin']).toBeUndefined();
}

function expectErrorPage(response: request.Response, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers.location).toBeUndefined();
  expectHTMLSecurityHeaders(response);
  expect(response.text).toContain('<html lang="en">');
}

async function storedCode(mounted: Mounted, code: string): Promise<CodeRecord> {
  const value = await contextOf(mounted.sentinel).store.get(codeKey(code));
  expect(value, 'the code is stored under its digest').not.toBeNull();
  const record = parseCodeRecord(value);
  expect(record, 'the stored code reads as a code record').not.toBeNull();
  return record as CodeRecord;
}

/** A store whose operations fail once `failing.on` is true. */
function failingStore(failing: { on: boolean }): Store {
  const inner = new MemoryStore();
  const guard = <T>(run: () => Promise<T>): Promise<T> => (failing.on ? Promise.reject(new Error('store down')) : run());
  return {
    get: (key) => guard(() => inner.get(key)),
    set: (key, value, ttl) => guard(() => inner.set(key, value, ttl)),
    take: (key) => guard(() => inner.take(key)),
    delete: (key) => guard(() => inner.delete(key)),
    increment: (key, ttl) => guard(() => inner.increment(key, ttl)),
    swap: (entries) => guard(() => inner.swap(entries)),
  };
}

/** Runs the authorize suite against `host`. */
function authorizeSuite(host: Host): void {
  const mount = useMount(host);

  describe('authorize: no session → login page', () => {
    it('redirects to the built-in login page carrying only an opaque interaction id', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath()).set('origin', 'https://evil.example');
      expect(response.status).toBe(302);
      expect(response.headers.location).toMatch(new RegExp(`^/sentinel/api/account/${ACCOUNT}/login\\?interaction=[A-Za-z0-9_-]{43}$`));
      expect(response.headers.location).not.toContain(encodeURIComponent(REDIRECT_URI));
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['set-cookie']).toBeUndefined();
    });

    it('keeps the validated request server-side: the login page cannot be pointed at another redirect_uri', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const tampered = `${loginPath}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}&client_id=${OTHER_CLIENT_ID}`;
      const response = await postLogin(agent, tampered, {
        csrf_token: csrf,
        username: USERNAME,
        password: PASSWORD,
        redirect_uri: 'https://evil.example/cb',
      });
      expect(response.status).toBe(303);
      expect(parseLocation(response).base).toBe(REDIRECT_URI);
    });

    it('uses the only registered redirect URI when redirect_uri is omitted', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const response = await signIn(agent, authorizePath({ redirect_uri: undefined }));
      expect(parseLocation(response).base).toBe(REDIRECT_URI);
    });
  });

  describe('authorize: checks before the redirect URI is trusted (pages, never a redirect)', () => {
    it('unknown account → 401 page, even when everything else is wrong too', async () => {
      const { server } = await mount();
      const response = await request(server).get(
        authorizePath({ client_id: undefined, redirect_uri: 'javascript:alert(1)' }, '/sentinel/api/account/nope/authorize'),
      );
      expectErrorPage(response, 401);
    });

    it('missing client_id → 400 page; repeated client_id → 400 page', async () => {
      const { server } = await mount();
      expectErrorPage(await request(server).get(authorizePath({ client_id: undefined })), 400);
      expectErrorPage(await request(server).get(authorizePath({ client_id: [CLIENT_ID, CLIENT_ID] })), 400);
    });

    it('unknown client, or a client of another account → 401 page', async () => {
      const { server } = await mount();
      expectErrorPage(await request(server).get(authorizePath({ client_id: 'ffffffff-0000-4000-8000-000000000000' })), 401);
      expectErrorPage(
        await request(server).get(authorizePath({ client_id: OTHER_CLIENT_ID, redirect_uri: 'https://other.example.com/cb' })),
        401,
      );
    });

    it('redirect_uri missing while several are registered → 400 page', async () => {
      const { server } = await mount();
      expectErrorPage(
        await request(server).get(
          authorizePath({
            client_id: PUBLIC_CLIENT_ID,
            redirect_uri: undefined,
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          }),
        ),
        400,
      );
    });

    it.each([
      ['a trailing slash', `${REDIRECT_URI}/`],
      ['another case in the host', 'https://APP.example.com/cb'],
      ['another case in the path', 'https://app.example.com/CB'],
      ['an explicit default port', 'https://app.example.com:443/cb'],
      ['another port', 'https://app.example.com:8443/cb'],
      ['an extra query', `${REDIRECT_URI}?x=1`],
      ['a fragment', `${REDIRECT_URI}#frag`],
      ['http instead of https', 'http://app.example.com/cb'],
      ['a CRLF header injection', `${REDIRECT_URI}\r\nSet-Cookie: pwned=1`],
      ['a javascript: URI', 'javascript:alert(document.cookie)'],
      ['a data: URI', 'data:text/html,<script>alert(1)</script>'],
      ['a relative URI', '/cb'],
    ])('refuses a redirect_uri with %s: 400 and no Location', async (_label, redirectUri) => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath({ redirect_uri: redirectUri }));
      expectErrorPage(response, 400);
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(response.text).not.toContain('<script>');
    });

    it('refuses a repeated redirect_uri with 400 and no Location', async () => {
      const { server } = await mount();
      expectErrorPage(await request(server).get(authorizePath({ redirect_uri: [REDIRECT_URI, REDIRECT_URI] })), 400);
    });

    it('answers JSON {error, error_description} when Accept asks for application/json', async () => {
      const { server } = await mount();
      const response = await request(server)
        .get(authorizePath({ client_id: 'nope' }))
        .set('accept', 'application/json');
      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(Object.keys(response.body).sort()).toEqual(['error', 'error_description']);
      expect(response.body.error).toBe('invalid_client');
      expect(response.headers.location).toBeUndefined();
    });

    it('HTML-escapes what the page shows', async () => {
      const { server } = await mount();
      const response = await request(server).get(
        `/sentinel/api/account/${encodeURIComponent('<b>x</b>')}/authorize?client_id=%3Cscript%3E`,
      );
      expect(response.status).toBe(401);
      expect(response.text).not.toMatch(/<script>|<b>x/);
    });

    it('a failing app store before the redirect URI is known → 500 page, cause to onError', async () => {
      const onError = vi.fn();
      const appStore: AppStore = { findApp: () => Promise.reject(new Error('db down')), hasAccount: () => true };
      const { server } = await mount({ apps: [], appStore, onError });
      const response = await request(server).get(authorizePath());
      expectErrorPage(response, 500);
      expect(response.text).not.toContain('db down');
      expect(onError).toHaveBeenCalledOnce();
      expect(onError.mock.calls[0]?.[0]).toMatchObject({ message: 'db down' });
    });

    it('refuses other methods with 405 and Allow', async () => {
      const { server } = await mount();
      const response = await request(server).put(authorizePath());
      expect(response.status).toBe(405);
      expect(response.headers.allow).toContain('GET');
      expect(response.headers.allow).toContain('POST');
      expect(response.headers.location).toBeUndefined();
    });
  });

  describe('authorize: error redirects once account, client and redirect URI are valid', () => {
    it.each([
      ['response_type missing', { response_type: undefined }, 'invalid_request'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['response_type repeated', { response_type: ['code', 'code'] }, 'invalid_request'],
      ['unsupported version v=2.0', { v: '2.0' }, 'invalid_request'],
      ['malformed version v=1.x', { v: '1.x' }, 'invalid_request'],
      ['PKCE plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      ['PKCE without a method (means plain)', { code_challenge: pkcePair().challenge }, 'invalid_request'],
      ['PKCE malformed challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
      ['PKCE method without challenge', { code_challenge_method: 'S256' }, 'invalid_request'],
      ['nonce repeated', { nonce: ['a', 'b'] }, 'invalid_request'],
    ] as const)('%s → 302 with the error, state and iss', async (_label, params, error) => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath(params as Record<string, string | string[] | undefined>));
      expectErrorRedirect(response, error);
      expect(response.headers['set-cookie']).toBeUndefined();
    });

    it.each(['1.0', '1', '1.00'])('accepts v=%s', async (v) => {
      const { server } = await mount();
      expect((await request(server).get(authorizePath({ v }))).headers.location).toMatch(/\/login\?interaction=/);
    });

    it('ignores unknown parameters (RFC 6749 §3.1)', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath({ foo: 'bar', extension: ['x', 'y'] }));
      expect(response.headers.location).toMatch(/\/login\?interaction=/);
    });

    it('a repeated state → invalid_request without a state (it cannot be echoed)', async () => {
      const { server } = await mount();
      expectErrorRedirect(await request(server).get(authorizePath({ state: ['a', 'b'] })), 'invalid_request', null);
    });

    it('app not registered for authorization_code → unauthorized_client', async () => {
      const options = baseOptions();
      const apps = [
        ...(options.apps ?? []),
        {
          accountId: ACCOUNT,
          clientId: 'cc-with-uri',
          clientSecret: 'ccwithurisecret0000000001',
          redirectUris: [REDIRECT_URI],
          grantTypes: ['client_credentials' as const],
        },
      ];
      const { server } = await mount({ apps });
      expectErrorRedirect(await request(server).get(authorizePath({ client_id: 'cc-with-uri' })), 'unauthorized_client');
    });

    it('a client without redirect URIs cannot be redirected to: 400 page', async () => {
      const { server } = await mount();
      expectErrorPage(await request(server).get(authorizePath({ client_id: CC_ONLY_CLIENT_ID })), 400);
    });

    it('a scope outside the app scope → invalid_scope; openid is always allowed', async () => {
      const options = baseOptions();
      const apps = (options.apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope: 'messages.read' } : app));
      const { server } = await mount({ apps });
      expectErrorRedirect(await request(server).get(authorizePath({ scope: 'messages.read admin' })), 'invalid_scope');
      expect((await request(server).get(authorizePath({ scope: 'openid messages.read' }))).headers.location).toMatch(/\/login\?/);
    });

    it('a public client must use PKCE', async () => {
      const { server } = await mount();
      expectErrorRedirect(await request(server).get(authorizePath({ client_id: PUBLIC_CLIENT_ID })), 'invalid_request');
    });

    it('returns a tricky state byte-for-byte in error redirects', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath({ response_type: 'token', state: TRICKY_STATE }));
      expectErrorRedirect(response, 'unsupported_response_type', TRICKY_STATE);
      expect(response.headers.location).toContain(`state=${encodeURIComponent(TRICKY_STATE)}`);
    });

    it('a failing store after validation → 302 server_error to the app, nothing issued, cause to onError', async () => {
      const failing = { on: true };
      const onError = vi.fn();
      const { server } = await mount({ store: failingStore(failing), onError });
      const response = await request(server).get(authorizePath());
      expectErrorRedirect(response, 'server_error');
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(onError).toHaveBeenCalledOnce();
      expect(onError.mock.calls[0]?.[0]).toMatchObject({ message: 'store down' });
    });

    it('emits authorize.denied with the client and no secret', async () => {
      const events: SentinelEvent[] = [];
      const { server } = await mount({ onEvent: (event) => events.push(event) });
      await request(server).get(authorizePath({ response_type: 'token' }));
      expect(events).toContainEqual(
        expect.objectContaining({ type: 'authorize.denied', clientId: CLIENT_ID, error: 'unsupported_response_type' }),
      );
    });
  });

  describe('login page', () => {
    it('is an accessible, branded, script-free form with the security headers', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { page } = await openLogin(agent, loginPath);
      expectHTMLSecurityHeaders(page);
      const csp = page.headers['content-security-policy'] as string;
      expect(csp).toContain("form-action 'self' https://app.example.com");
      expect(csp).toContain("img-src 'none'");
      expect(page.text).toContain('<html lang="en">');
      expect(page.text).toContain('Acme Messenger');
      expect(page.text).toContain(ACCOUNT);
      expect(page.text).toMatch(/<label for="username">/);
      expect(page.text).toMatch(/<label for="password">/);
      expect(page.text).toContain('autocomplete="username"');
      expect(page.text).toContain('autocomplete="current-password"');
      expect(page.text).toMatch(/<button type="submit" class="primary">Sign in<\/button>/);
      expect(page.text).toMatch(/name="cancel"[^>]*>Cancel<\/button>/);
      expect(page.text).not.toMatch(/<script/i);
    });

    it('applies the branding options: product name, logo (and its origin in img-src), colours', async () => {
      const { server } = await mount({
        branding: { productName: 'Acme ID', logoUrl: 'https://cdn.example.com/logo.svg', colors: { brand: '#7c3aed' } },
      });
      const agent = request.agent(server);
      const { page } = await openLogin(agent, await startLogin(agent, authorizePath()));
      expect(page.text).toContain('Acme ID');
      expect(page.text).toContain('src="https://cdn.example.com/logo.svg"');
      expect(page.text).toContain('--brand:#7c3aed');
      expect(page.headers['content-security-policy']).toContain('img-src https://cdn.example.com');
    });

    it('login.render replaces the page and receives the view', async () => {
      const render = vi.fn(
        (view: { appName: string; csrfToken: string; action: string; styleNonce: string }) =>
          `<!doctype html><title>custom</title><style nonce="${view.styleNonce}"></style><p>custom page for ${view.appName}</p><form method="post" action="${view.action}"><input name="csrf_token" value="${view.csrfToken}"></form>`,
      );
      const { server } = await mount({ login: { render } });
      const agent = request.agent(server);
      const { page } = await openLogin(agent, await startLogin(agent, authorizePath()));
      expect(page.text).toContain('custom page for Acme Messenger');
      expectHTMLSecurityHeaders(page);
      expect(render).toHaveBeenCalledWith(
        expect.objectContaining({ accountId: ACCOUNT, appName: 'Acme Messenger', productName: 'Sign in' }),
      );
    });

    it.each([
      ['undefined (a forgotten return)', undefined],
      ['an empty string', ''],
      ['a template object', { html: '<p>page</p>' }],
    ])('a login.render answering %s → the 500 page, the TypeError to onError', async (_name, answer) => {
      const onError = vi.fn();
      const { server } = await mount({ login: { render: (() => answer) as never }, onError });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const page = await agent.get(loginPath);
      expectErrorPage(page, 500);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(onError).toHaveBeenCalledTimes(1);
      expect(String(onError.mock.calls[0]?.[0])).toContain('login.render() must return the page as a non-empty string');
      expect(onError.mock.calls[0]?.[1]).toMatchObject({ route: 'login', accountId: ACCOUNT });
    });

    it('an unknown, expired, or other-account interaction → 400 page', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      expectErrorPage(await agent.get(`/sentinel/api/account/${ACCOUNT}/login?interaction=${'A'.repeat(43)}`), 400);
      expectErrorPage(await agent.get(`/sentinel/api/account/${ACCOUNT}/login`), 400);
      const loginPath = await startLogin(agent, authorizePath());
      expectErrorPage(await agent.get(loginPath.replace(`/account/${ACCOUNT}/`, `/account/${OTHER_ACCOUNT}/`)), 400);
    });

    it('signs in: 303 (not 307) to redirect_uri with code, state and iss, and a session cookie', async () => {
      const mounted = await mount();
      const agent = request.agent(mounted.server);
      const { challenge } = pkcePair();
      const response = await signIn(
        agent,
        authorizePath({ code_challenge: challenge, code_challenge_method: 'S256', scope: 'openid', nonce: 'n-1' }),
      );
      expect(response.headers['cache-control']).toBe('no-store');
      const { base, params } = parseLocation(response);
      expect(base).toBe(REDIRECT_URI);
      expect([...params.keys()]).toEqual(['code', 'state', 'iss']);
      expect(params.get('state')).toBe('xyz');
      expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
      const code = params.get('code') as string;
      expect(Buffer.from(code, 'base64url').length).toBeGreaterThanOrEqual(32);
      const record = await storedCode(mounted, code);
      expect(record).toMatchObject({
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        redirectUri: REDIRECT_URI,
        redirectUriInRequest: true,
        userId: USER_ID,
        codeChallenge: challenge,
        scope: 'openid',
        nonce: 'n-1',
      });
      expect(record.authTime).toBeGreaterThan(Date.now() / 1000 - 60);
      const cookie = sessionCookieOf(response);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
      expect(cookie).toMatch(/Path=\/sentinel(;|$)/);
      expect(cookie).not.toMatch(/Secure/i); // http://localhost issuer
    });

    it('codes are single use through the store take', async () => {
      const mounted = await mount();
      const agent = request.agent(mounted.server);
      const code = parseLocation(await signIn(agent, authorizePath())).params.get('code') as string;
      const store = contextOf(mounted.sentinel).store;
      expect(await store.take(codeKey(code))).not.toBeNull();
      expect(await store.take(codeKey(code))).toBeNull();
    });

    it('redirectUriInRequest is false when the request omitted redirect_uri', async () => {
      const mounted = await mount();
      const agent = request.agent(mounted.server);
      const code = parseLocation(await signIn(agent, authorizePath({ redirect_uri: undefined }))).params.get('code') as string;
      expect((await storedCode(mounted, code)).redirectUriInRequest).toBe(false);
    });

    it('marks the cookie Secure for an https issuer', async () => {
      const { server } = await mount({ issuer: 'https://id.example.com' });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const response = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expect(sessionCookieOf(response)).toMatch(/; Secure/i);
      expect(parseLocation(response).params.get('iss')).toBe(`https://id.example.com/sentinel/api/account/${ACCOUNT}`);
    });

    it('appends code correctly to a registered redirect URI that already has a query', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const response = await signIn(
        agent,
        authorizePath({
          client_id: PUBLIC_CLIENT_ID,
          redirect_uri: SECOND_REDIRECT_URI,
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      const location = response.headers.location as string;
      expect(location.startsWith(`${SECOND_REDIRECT_URI}&code=`)).toBe(true);
      const { params } = parseLocation(response);
      expect(params.get('tenant')).toBe('a');
      expect(params.get('code')).toBeTruthy();
    });

    it('returns a state with &, =, #, +, spaces and non-ASCII byte-for-byte', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const response = await signIn(agent, authorizePath({ state: TRICKY_STATE }));
      expect(parseLocation(response).params.get('state')).toBe(TRICKY_STATE);
      expect(response.headers.location).toContain(`&state=${encodeURIComponent(TRICKY_STATE)}&`);
      const again = await agent.get(authorizePath({ state: TRICKY_STATE }));
      expect(parseLocation(again).params.get('state')).toBe(TRICKY_STATE);
    });

    it('refuses a POST without or with a wrong CSRF token: 403, no code, no session', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      for (const form of [{} as Record<string, string>, { csrf_token: 'x'.repeat(43) }, { csrf_token: `${csrf}x` }]) {
        const response = await postLogin(agent, loginPath, { ...form, username: USERNAME, password: PASSWORD });
        expectErrorPage(response, 403);
        expect(response.headers['set-cookie']).toBeUndefined();
      }
      // The real token still works afterwards: the refusals changed nothing.
      expect((await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD })).status).toBe(303);
    });

    it('refuses a login POST a browser labels cross-site', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const response = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD })
        .set('sec-fetch-site', 'cross-site')
        .set('origin', 'https://evil.example');
      expectErrorPage(response, 403);
      const sameOrigin = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD })
        .set('sec-fetch-site', 'same-origin')
        .set('origin', 'null');
      expect(sameOrigin.status).toBe(303);
    });

    it('wrong credentials re-render the form with one generic message, never the password', async () => {
      const events: SentinelEvent[] = [];
      const { server } = await mount({ onEvent: (event) => events.push(event) });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const wrongPassword = 'hunter2-<secret>';
      const wrong = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: wrongPassword });
      const unknown = await postLogin(agent, loginPath, { csrf_token: csrf, username: '<b>mallory</b>', password: wrongPassword });
      for (const response of [wrong, unknown]) {
        expect(response.status).toBe(200);
        expectHTMLSecurityHeaders(response);
        expect(response.text).toContain('Incorrect username or password.');
        expect(response.text).toContain('aria-describedby="login-error"');
        expect(response.text).not.toContain('hunter2');
        expect(response.headers['set-cookie']).toBeUndefined();
      }
      expect(unknown.text).toContain('value="&lt;b&gt;mallory&lt;/b&gt;"');
      expect(events.filter((event) => event.type === 'login.failed')).toHaveLength(2);
      expect(JSON.stringify(events)).not.toContain('hunter2');
    });

    it('Cancel → 303 to the app with access_denied, state and iss; the interaction is over', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath({ state: TRICKY_STATE }));
      const { csrf } = await openLogin(agent, loginPath);
      const response = await postLogin(agent, loginPath, { csrf_token: csrf, cancel: '1' });
      expect(response.status).toBe(303);
      const { base, params } = parseLocation(response);
      expect(base).toBe(REDIRECT_URI);
      expect(params.get('error')).toBe('access_denied');
      expect(params.get('state')).toBe(TRICKY_STATE);
      expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
      expectErrorPage(await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD }), 400);
    });

    it('an interaction completes once: replaying the successful POST is refused', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      expect((await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD })).status).toBe(303);
      expectErrorPage(await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD }), 400);
    });

    it('a failing user store → 500 page, no session, cause to onError', async () => {
      const onError = vi.fn();
      const { server } = await mount({ users: { authenticate: () => Promise.reject(new Error('ldap down')) }, onError });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const response = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expectErrorPage(response, 500);
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(onError).toHaveBeenCalledOnce();
    });

    it('events name who and what, never the password, code or session id', async () => {
      const events: SentinelEvent[] = [];
      const { server } = await mount({ onEvent: (event) => events.push(event) });
      const agent = request.agent(server);
      const response = await signIn(agent, authorizePath());
      const types = events.map((event) => event.type);
      expect(types).toEqual(expect.arrayContaining(['login.succeeded', 'session.created', 'code.issued']));
      const serialized = JSON.stringify(events);
      expect(serialized).not.toContain(PASSWORD);
      expect(serialized).not.toContain(parseLocation(response).params.get('code'));
      expect(serialized).not.toContain(sessionCookieOf(response).split(';')[0]?.split('=')[1]);
    });
  });

  describe('throttling', () => {
    it('after maxFailures wrong passwords for a username → 429 with Retry-After, without asking the user store', async () => {
      const authenticate = vi.fn(async ({ username, password }: { username: string; password: string }) =>
        username === USERNAME && password === PASSWORD ? { id: USER_ID } : null,
      );
      const events: SentinelEvent[] = [];
      const { server } = await mount({
        users: { authenticate },
        throttle: { maxFailures: 3, windowSeconds: 600 },
        onEvent: (event) => events.push(event),
      });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: 'wrong' })).status).toBe(200);
      }
      expect(authenticate).toHaveBeenCalledTimes(3);
      const throttled = await postLogin(agent, loginPath, { csrf_token: csrf, username: 'ALICE', password: PASSWORD });
      expectErrorPage(throttled, 429);
      expect(throttled.headers['retry-after']).toBe('600');
      expect(authenticate).toHaveBeenCalledTimes(3);
      expect(events).toContainEqual(expect.objectContaining({ type: 'login.throttled', scope: 'username' }));
      // Another username from the same address is not affected by the per-username counter.
      expect((await postLogin(agent, loginPath, { csrf_token: csrf, username: 'bob', password: 'x' })).status).toBe(200);
    });

    it('after maxFailuresPerIp failures from one address → 429 for any username', async () => {
      const { server } = await mount({ throttle: { maxFailures: 10, maxFailuresPerIp: 2, windowSeconds: 60 } });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      await postLogin(agent, loginPath, { csrf_token: csrf, username: 'u1', password: 'x' });
      await postLogin(agent, loginPath, { csrf_token: csrf, username: 'u2', password: 'x' });
      const throttled = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expectErrorPage(throttled, 429);
      expect(throttled.headers['retry-after']).toBe('60');
    });

    it('counts per X-Forwarded-For client only when trustProxy is set', async () => {
      const { server } = await mount({ trustProxy: true, throttle: { maxFailures: 10, maxFailuresPerIp: 1, windowSeconds: 60 } });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      await postLogin(agent, loginPath, { csrf_token: csrf, username: 'u1', password: 'x' }).set(
        'x-forwarded-for',
        '203.0.113.7, 10.0.0.1',
      );
      const other = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD }).set(
        'x-forwarded-for',
        '203.0.113.8',
      );
      expect(other.status).toBe(303);
    });
  });

  describe('device session', () => {
    it('skips the login page on the second authorize: 302 straight to the app with a code', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      const response = await agent.get(authorizePath({ state: 'second' }));
      expect(response.status).toBe(302);
      const { base, params } = parseLocation(response);
      expect(base).toBe(REDIRECT_URI);
      expect(params.get('code')).toBeTruthy();
      expect(params.get('state')).toBe('second');
      expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
    });

    it('a session in one account does not sign the user into another', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      const response = await agent.get(
        authorizePath(
          { client_id: OTHER_CLIENT_ID, redirect_uri: 'https://other.example.com/cb' },
          `/sentinel/api/account/${OTHER_ACCOUNT}/authorize`,
        ),
      );
      expect(response.headers.location).toMatch(new RegExp(`^/sentinel/api/account/${OTHER_ACCOUNT}/login\\?interaction=`));
    });

    it('rotates the session id on every login (no fixation)', async () => {
      const mounted = await mount();
      const agent = request.agent(mounted.server);
      const planted = 'planted-session-id-planted-session-id-00000';
      agent.jar.setCookie(`sentinel_session=${planted}; Path=/sentinel`, '127.0.0.1', '/sentinel');
      const first = sessionCookieOf(await signIn(agent, authorizePath())).split(';')[0];
      expect(first).not.toContain(planted);
      const loginPath = await startLogin(request.agent(mounted.server), authorizePath());
      // Log in again in the same browser through a fresh interaction: a new id replaces the old one.
      const { csrf } = await openLogin(agent, loginPath);
      const second = sessionCookieOf(await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD })).split(
        ';',
      )[0];
      expect(second).not.toBe(first);
      const stale = await request(mounted.server)
        .get(authorizePath())
        .set('cookie', first as string);
      expect(stale.headers.location).toMatch(/\/login\?interaction=/);
    });

    it('an unknown session cookie is ignored: login page', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath()).set('cookie', 'sentinel_session=nope');
      expect(response.headers.location).toMatch(/\/login\?interaction=/);
    });

    it('uses the configured cookie name', async () => {
      const { server } = await mount({ session: { cookieName: 'idp_sid' } });
      const agent = request.agent(server);
      const response = await signIn(agent, authorizePath());
      expect(setCookies(response).some((line) => line.startsWith('idp_sid='))).toBe(true);
      expect(parseLocation(await agent.get(authorizePath())).params.get('code')).toBeTruthy();
    });

    it('extends the idle timeout of a session it signs in with, in the same store round trip as the code', async () => {
      const store = new MemoryStore();
      const writes: Array<{ prefix: string; ttlMs: number; inFlight: number }> = [];
      let inFlight = 0;
      const set = store.set.bind(store);
      // Each write takes a few milliseconds, as over a network: writes sent one after the other never overlap.
      store.set = async (key, value, ttlMs) => {
        inFlight++;
        writes.push({ prefix: key.slice(0, key.indexOf(':')), ttlMs, inFlight });
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return set(key, value, ttlMs);
      };
      // The session's extension is a compare-and-set on the value read (a logout in between is never undone).
      const swap = store.swap.bind(store);
      store.swap = async (entries) => {
        inFlight++;
        for (const entry of entries) writes.push({ prefix: entry.key.slice(0, entry.key.indexOf(':')), ttlMs: entry.ttlMs ?? 0, inFlight });
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        return swap(entries);
      };
      const { server } = await mount({ store, session: { cookieName: 'sentinel_session', idleTtl: 600, absoluteTtl: 3600 } });
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      writes.length = 0;
      expect(parseLocation(await agent.get(authorizePath())).params.get('code')).toBeTruthy();
      expect(writes.map(({ prefix }) => prefix).sort()).toEqual(['code', 'session']);
      expect(writes.find(({ prefix }) => prefix === 'session')?.ttlMs).toBe(600_000);
      // The second write left while the first was still in flight: one round trip.
      expect(Math.max(...writes.map((write) => write.inFlight))).toBe(2);
      // A request that asks for a new sign-in does not use the session, so does not extend it.
      writes.length = 0;
      expect((await agent.get(authorizePath({ prompt: 'login' }))).headers.location).toMatch(/\/login\?interaction=/);
      expect(writes.map(({ prefix }) => prefix)).toEqual(['interaction']);
    });

    it('a store that fails to extend the session → 302 server_error without a code, cause to onError', async () => {
      const store = new MemoryStore();
      const failing = { on: false };
      const set = store.set.bind(store);
      store.set = (key, value, ttlMs) =>
        failing.on && key.startsWith('session:') ? Promise.reject(new Error('store down')) : set(key, value, ttlMs);
      const swap = store.swap.bind(store);
      store.swap = (entries) =>
        failing.on && entries.some((entry) => entry.key.startsWith('session:')) ? Promise.reject(new Error('store down')) : swap(entries);
      const errors: unknown[] = [];
      const { server } = await mount({ store, onError: (error) => errors.push(error) });
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      failing.on = true;
      const params = expectErrorRedirect(await agent.get(authorizePath()), 'server_error');
      expect(params.get('code')).toBeNull();
      expect(errors).toHaveLength(1);
    });

    it('a failing store while reading the session → 302 server_error to the app', async () => {
      const failing = { on: false };
      const { server } = await mount({ store: failingStore(failing), onError: () => {} });
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      failing.on = true;
      expectErrorRedirect(await agent.get(authorizePath()), 'server_error');
    });
  });

  describe('logout', () => {
    it('ends the session and expires the cookie: the login page comes back', async () => {
      const events: SentinelEvent[] = [];
      const { server } = await mount({ onEvent: (event) => events.push(event) });
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      const response = await agent.post(LOGOUT);
      expect(response.status).toBe(200);
      expectHTMLSecurityHeaders(response);
      expect(response.text).toContain('signed out');
      expect(sessionCookieOf(response)).toMatch(/Max-Age=0/i);
      expect((await agent.get(authorizePath())).headers.location).toMatch(/\/login\?interaction=/);
      expect(events).toContainEqual(expect.objectContaining({ type: 'session.ended', reason: 'logout', userId: USER_ID }));
    });

    it('303 to post_logout_redirect_uri only when it is registered for the client', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      const ok = await agent
        .post(LOGOUT)
        .set('content-type', FORM)
        .set('origin', 'https://app.example.com')
        .set('sec-fetch-site', 'cross-site')
        .send(new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: REDIRECT_URI, state: 'bye' }).toString());
      expect(ok.status).toBe(303);
      expect(ok.headers.location).toBe(`${REDIRECT_URI}?state=bye`);
      const refused = await agent
        .post(LOGOUT)
        .set('content-type', FORM)
        .send(new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: 'https://evil.example/cb' }).toString());
      expect(refused.status).toBe(200);
      expect(refused.headers.location).toBeUndefined();
    });

    it('refuses a cross-site logout from an origin that is not the app: the session survives', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      const response = await agent.post(LOGOUT).set('origin', 'https://evil.example').set('sec-fetch-site', 'cross-site');
      expectErrorPage(response, 403);
      expect(response.headers['set-cookie']).toBeUndefined();
      expect(parseLocation(await agent.get(authorizePath())).params.get('code')).toBeTruthy();
    });

    it('logging out of another account leaves this session alone', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      await signIn(agent, authorizePath());
      await agent.post(`/sentinel/api/account/${OTHER_ACCOUNT}/logout`);
      expect(parseLocation(await agent.get(authorizePath())).params.get('code')).toBeTruthy();
    });
  });

  describe('external login (login.url)', () => {
    it('sends the browser to the host page; completeLogin answers the 303 with a code and a session', async () => {
      const mounted = await mount({ login: { url: '/host/login' } });
      const agent = request.agent(mounted.server);
      const start = await agent.get(authorizePath({ state: TRICKY_STATE }));
      expect(start.status).toBe(302);
      const location = start.headers.location as string;
      expect(location).toMatch(/^\/host\/login\?interaction=[A-Za-z0-9_-]{43}$/);
      const interactionId = new URLSearchParams(location.split('?')[1]).get('interaction') as string;
      const done = await mounted.sentinel.completeLogin(interactionId, { userId: 'u-external' });
      expect(done.status).toBe(303);
      const target = new URL(done.headers.location as string);
      expect(`${target.origin}${target.pathname}`).toBe(REDIRECT_URI);
      expect(target.searchParams.get('state')).toBe(TRICKY_STATE);
      expect(target.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
      const code = target.searchParams.get('code') as string;
      expect((await storedCode(mounted, code)).userId).toBe('u-external');
      const cookie = String(done.headers['set-cookie']).split(';')[0] as string;
      const again = await request(mounted.server).get(authorizePath()).set('cookie', cookie);
      expect(parseLocation(again).params.get('code')).toBeTruthy();
      const replay = await mounted.sentinel.completeLogin(interactionId, { userId: 'u-external' });
      expect(replay.status).toBe(400);
      expect(replay.headers.location).toBeUndefined();
    });
  });
}

authorizeSuite(HANDLE_HOST);
