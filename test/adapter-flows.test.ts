/**
 * The black-box expectations in which the framework is part of what is tested, run on every host in HOSTS: the
 * whole authorization code flow over HTTP (redirects, the login page, cookies in a browser's jar, RFC 9207 `iss`),
 * host body parsers before, after or absent, mounting under a prefix, OPTIONS preflights, and the host's routes
 * left alone. The endpoint logic itself runs once, through `sentinel.handle()`, in `test/suites/`;
 * `test/adapters.test.ts` checks that each adapter writes what the core decided, unchanged.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, appTokenPath, ccBody, CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './helpers/fixtures.js';
import { openLogin, parseLocation, postLogin, sessionCookieOf, signIn, startLogin } from './helpers/login-drive.js';
import { useMount } from './helpers/mount.js';
import { ACCOUNT_ISSUER, exchange, expectError, FORM } from './helpers/oauth.js';
import { oidcOptions, USERINFO } from './helpers/oidc.js';
import { pkcePair } from './helpers/pkce.js';
import { HOSTS } from './helpers/hosts.js';

const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;

function authorizePath(params: Record<string, string> = {}): string {
  return `${AUTHORIZE}?${new URLSearchParams({ v: '1.0', response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 'xyz', ...params })}`;
}

describe.each(HOSTS)('$name', (host) => {
  const mount = useMount(host);
  const postAppToken = (server: unknown, path = appTokenPath()): request.Test =>
    request(server as Parameters<typeof request>[0])
      .post(path)
      .set('content-type', FORM);

  describe('authorize → login → code → token over HTTP', () => {
    it('delivers a code with state and iss, which the token endpoint exchanges once', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const { verifier, challenge } = pkcePair();
      const toLogin = await agent.get(
        authorizePath({ state: 'xyz', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }),
      );
      expect(toLogin.status).toBe(302);
      const loginPath = toLogin.headers.location as string;
      const page = await agent.get(loginPath);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      const signedIn = await agent
        .post(loginPath)
        .set('content-type', FORM)
        .send(new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString());
      expect(signedIn.status).toBe(303);
      const callback = new URL(signedIn.headers.location as string);
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('state')).toBe('xyz');
      expect(callback.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
      const code = callback.searchParams.get('code') ?? '';
      const tokens = await exchange(server, code, { code_verifier: verifier });
      expect(tokens.status).toBe(200);
      expect(typeof tokens.body.id_token).toBe('string');
      expect(JSON.parse(Buffer.from(tokens.body.access_token.split('.')[1], 'base64url').toString()).sub).toBe(USER_ID);
      expectError(await exchange(server, code, { code_verifier: verifier }), 400, 'invalid_grant');
      // The device session now skips the login page; the redirect still carries iss.
      const again = await agent.get(authorizePath({ state: 'abc', code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(again.status).toBe(302);
      const second = new URL(again.headers.location as string);
      expect(second.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(second.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
    });

    it('puts iss on error redirects too', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath({ response_type: 'token', state: 'xyz' }));
      expect(response.status).toBe(302);
      const location = new URL(response.headers.location as string);
      expect(location.searchParams.get('error')).toBe('unsupported_response_type');
      expect(location.searchParams.get('state')).toBe('xyz');
      expect(location.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
    });
  });

  describe('host body parsers', () => {
    it.each(['before', 'after', 'none'] as const)('the app token works with a host body parser %s the service', async (bodyParser) => {
      const { server } = await mount({}, { bodyParser });
      const response = await postAppToken(server).send(ccBody());
      expect(response.status).toBe(200);
      const duplicated = await postAppToken(server).send(`${ccBody()}&client_id=${CLIENT_ID}`);
      expectError(duplicated, 400, 'invalid_request');
      const json = await request(server)
        .post(appTokenPath())
        .set('content-type', 'application/json')
        .send({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
      expectError(json, 400, 'invalid_request');
    });

    it.each(['before', 'after'] as const)('signs in when the host body parser runs %s the service', async (bodyParser) => {
      const { server } = await mount({}, { bodyParser });
      const agent = request.agent(server);
      const response = await signIn(agent, authorizePath());
      expect(parseLocation(response).params.get('code')).toBeTruthy();
    });

    // A Content-Type no parser can read: Express, Koa and fetch hand the request to the core, which answers its OAuth
    // 400; Fastify refuses it before the handler (FST_ERR_CTP_INVALID_MEDIA_TYPE), so its plugin must hand it over too.
    it.each(['before', 'none'] as const)(
      'a Content-Type that does not parse gets the OAuth 400 of the core, not the host error handler (parser %s)',
      async (bodyParser) => {
        const hostErrors: unknown[] = [];
        const { server } = await mount({}, { bodyParser, prefix: '/idp', onHostError: (error) => hostErrors.push(error) });
        const token = await request(server).post(`/idp${appTokenPath()}`).set('content-type', ';;').send(ccBody());
        expectError(token, 400, 'invalid_request');
        expect(token.body.error_description).toMatch(/Content-Type/);
        const discovery = await request(server)
          .post(`/idp/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`)
          .set('content-type', ';;')
          .send('x=1');
        expect(discovery.status).toBe(405);
        expect(discovery.body.error).toBe('invalid_request');
        expect(hostErrors).toEqual([]);
      },
    );

    it('a malformed or repeated login form field is a 400 page, never a 5xx', async () => {
      const { server } = await mount({}, { bodyParser: 'before' });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, authorizePath());
      const { csrf } = await openLogin(agent, loginPath);
      const nested = await agent.post(loginPath).set('content-type', FORM).send(`csrf_token=${csrf}&username[a]=b&password=x`);
      expect(nested.status).toBe(400);
      const repeated = await agent
        .post(loginPath)
        .set('content-type', FORM)
        .send(`csrf_token=${csrf}&csrf_token=${csrf}&username=a&password=b`);
      expect(repeated.status).toBe(400);
      const json = await agent.post(loginPath).set('content-type', 'application/json').send('{"username":"a"}');
      expect(json.status).toBeGreaterThanOrEqual(400);
      expect(json.status).toBeLessThan(500);
    });
  });

  describe('mounting', () => {
    it('leaves host routes and unknown paths under the base path to the host', async () => {
      const { server } = await mount();
      expect((await request(server).get('/host/ping')).text).toBe('pong');
      expect((await request(server).get('/sentinel/api/unknown')).status).toBe(404);
      expect((await request(server).get('/sentinel/well-known/jwks/extra')).status).toBe(404);
    });

    it('serves the app token and the JWKS under a prefix mount', async () => {
      const { server } = await mount({}, { prefix: '/idp' });
      expect((await postAppToken(server, `/idp${appTokenPath()}`).send(ccBody())).status).toBe(200);
      expect((await request(server).get('/idp/sentinel/well-known/jwks')).status).toBe(200);
    });

    it('prefixes the login URL and the cookie path with the host mount path', async () => {
      const { server } = await mount({}, { prefix: '/idp' });
      const agent = request.agent(server);
      const loginPath = await startLogin(agent, `/idp${authorizePath()}`);
      expect(loginPath.startsWith(`/idp/sentinel/api/account/${ACCOUNT}/login?`)).toBe(true);
      const { page, csrf } = await openLogin(agent, loginPath);
      expect(page.text).toContain(`action="/idp/sentinel/api/account/${ACCOUNT}/login?interaction=`);
      const response = await postLogin(agent, loginPath, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
      expect(sessionCookieOf(response)).toContain('Path=/idp/sentinel');
      const again = await agent.get(`/idp${authorizePath()}`);
      expect(parseLocation(again).params.get('code')).toBeTruthy();
    });
  });

  it('answers the CORS preflight of browser clients at UserInfo', async () => {
    const { server } = await mount(oidcOptions());
    const response = await request(server)
      .options(USERINFO)
      .set('origin', 'https://spa.example')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'authorization');
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-headers']).toMatch(/Authorization/);
  });
});
