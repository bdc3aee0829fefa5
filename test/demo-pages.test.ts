/**
 * The demo application's pages over HTTP, in process (examples/shared/demo.ts as `npm start` builds it, mounted in
 * Express as examples/express/server.ts mounts it): every page carries the login page's headers (a fresh style
 * nonce and no script in the CSP, frame-ancestors 'none', X-Frame-Options DENY, no-store), and the demo's POSTs are
 * refused, changing nothing, without the session's CSRF token, with a forged one, from another site, or without a
 * session; a sign-out return with another state leaves the session alone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { toExpress } from '../adapters/express/index.js';
import { createDemoClient } from '../examples/shared/client.js';
import { createDemo, type Demo, printBanner } from '../examples/shared/demo.js';
import { generatePrivateJWK } from '../src/index.js';
import { makeSentinel } from './helpers/fixtures.js';

const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = 'demo-pages-password';

let server: Server;
let base = '';
let demo: Demo;

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  demo = await createDemo({
    framework: 'express',
    defaultPort: port,
    env: { HOST: '127.0.0.1', ISSUER: base, DEMO_PASSWORD: PASSWORD },
  });
  const app = express();
  app.use(toExpress(demo.sentinel));
  app.use(toExpress(demo.operatorConsole));
  app.use(toExpress(demo.client));
  server.on('request', app);
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

/** A browser that signed in through the demo: its agent (cookies) and the page it landed on. */
async function signedIn(): Promise<{ agent: request.Agent; page: string; csrf: string }> {
  const agent = request.agent(base);
  const start = await agent.get('/signin');
  const toLogin = await agent.get(new URL(start.headers.location as string).pathname + new URL(start.headers.location as string).search);
  const loginPath = toLogin.headers.location as string;
  const login = await agent.get(loginPath);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(login.text)?.[1] ?? '';
  const posted = await agent
    .post(loginPath)
    .set('content-type', FORM)
    .send(new URLSearchParams({ csrf_token: csrf, username: 'demo', password: PASSWORD }).toString());
  expect(posted.status).toBe(303);
  const callback = new URL(posted.headers.location as string);
  const page = await agent.get(`${callback.pathname}${callback.search}`);
  expect(page.status).toBe(200);
  const demoCsrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  expect(demoCsrf).toMatch(/^[\w-]{43}$/);
  return { agent, page: page.text, csrf: demoCsrf };
}

function expectPageHeaders(response: request.Response): void {
  const policy = response.headers['content-security-policy'] as string;
  const nonce = /style-src 'nonce-([^']+)'/.exec(policy)?.[1];
  expect(nonce).toBeDefined();
  expect(response.text).toContain(`<style nonce="${nonce}">`);
  expect(policy).toContain("default-src 'none'");
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).not.toContain('script-src');
  expect(response.text).not.toContain('<script');
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['content-type']).toMatch(/^text\/html/);
}

const jtiOf = (page: string): string | undefined => /<code>jti<\/code><\/th><td><code>([^<]+)</.exec(page)?.[1];

describe('the demo pages', () => {
  it('send the login page headers, with a fresh nonce per response', async () => {
    const [first, second] = [await request(base).get('/'), await request(base).get('/')];
    expectPageHeaders(first);
    expect(first.headers['content-security-policy']).not.toBe(second.headers['content-security-policy']);
    expect(first.text).toContain('href="/signin">Sign in with the platform');

    const { agent, page } = await signedIn();
    expect(page).toContain('Signed in as <strong id="subject">user-demo-1</strong>');
    expectPageHeaders(await agent.get('/'));
    expectPageHeaders(await request(base).get('/callback?state=x&code=y'));
    expectPageHeaders(await request(base).get('/signed-out'));
    expectPageHeaders(await request(base).post('/demo/refresh').set('content-type', FORM).send('csrf=x'));
  });

  it('tell a newcomer the account id the console’s sign-in asks for, on the home page and in the banner', async () => {
    // The console's first page is a blank "Account id" field: without the id there, the link leads nowhere.
    const home = await request(base).get('/');
    expect(home.text).toMatch(/>Operator console<\/a>:[^<]*account id <strong>123456<\/strong>/);
    let banner = '';
    const log = vi.spyOn(console, 'log').mockImplementation((text: unknown) => {
      banner += String(text);
    });
    try {
      printBanner(demo);
    } finally {
      log.mockRestore();
    }
    expect(banner).toMatch(/ {2}console {8}\S+ {3}\(account id 123456, then the demo user: its admin\)/);
  });

  it('say in the banner that the temporary-key warning above it is expected, and not when SENTINEL_KEYS pins the keys', async () => {
    const bannerOf = (shown: Demo): string => {
      let text = '';
      const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
        text += String(line);
      });
      try {
        printBanner(shown);
      } finally {
        log.mockRestore();
      }
      return text;
    };
    // The core warns "no signing keys configured; generated temporary …" first: the banner is what the newcomer reads.
    expect(bannerOf(demo)).toContain('  signing keys   generated for this run, as the warning above says');
    const keys = JSON.stringify([generatePrivateJWK('ES256'), generatePrivateJWK('RS256')]);
    const pinned = await createDemo({ framework: 'express', defaultPort: 1, env: { SENTINEL_KEYS: keys, DEMO_PASSWORD: PASSWORD } });
    expect(bannerOf(pinned)).not.toContain('signing keys');
  });

  it('refuse a POST without the session’s CSRF token, with a forged one, or from another site, and change nothing', async () => {
    const { agent, page, csrf } = await signedIn();
    const jti = jtiOf(page);
    expect(jti).toBeDefined();
    const attempts = [
      agent.post('/demo/refresh').set('content-type', FORM).send(''),
      agent.post('/demo/refresh').set('content-type', FORM).send('csrf=forged'),
      agent
        .post('/demo/revoke')
        .set('content-type', FORM)
        .send(`csrf=${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`),
      agent.post('/demo/refresh').set('content-type', FORM).set('sec-fetch-site', 'cross-site').send(`csrf=${csrf}`),
      request(base).post('/demo/app-token').set('content-type', FORM).send(`csrf=${csrf}`),
    ];
    for (const attempt of attempts) {
      const refused = await attempt;
      expect(refused.status).toBe(403);
      expect(refused.text).toMatch(/did not come from the demo application’s own pages|not signed in to the demo application/);
    }
    // Nothing happened: the same access token, no result to show, and the refresh token still works once.
    const after = await agent.get('/');
    expect(jtiOf(after.text)).toBe(jti);
    expect(after.text).not.toContain('id="result"');
    const refreshed = await agent.post('/demo/refresh').set('content-type', FORM).set('sec-fetch-site', 'same-origin').send(`csrf=${csrf}`);
    expect(refreshed.status).toBe(303);
    expect(refreshed.headers.location).toBe('/#result');
    const shown = await agent.get('/');
    expect(shown.text).toContain('The tokens were refreshed');
    expect(jtiOf(shown.text)).not.toBe(jti);
  });

  it('leave a session alone when the sign-out return carries another state, and leave other paths to the host', async () => {
    const { agent } = await signedIn();
    const wrong = await agent.get('/signed-out?state=not-the-one');
    expect(wrong.status).toBe(400);
    expect((await agent.get('/')).text).toContain('Signed in as');
    expect((await agent.get('/demo/refresh')).status).toBe(404);
    expect((await agent.post('/demo/unknown').set('content-type', FORM).send('')).status).toBe(404);
  });

  it('mark every cookie Secure behind an https issuer, the sign-in binding included', async () => {
    const issuer = 'https://id.example.com';
    const client = createDemoClient({
      sentinel: { config: makeSentinel({ issuer }).config },
      issuer,
      internalURL: 'http://127.0.0.1:1',
      accountId: '123456',
      clientId: 'demo-app',
      clientSecret: 'not-used-here',
      redirectUri: `${issuer}/callback`,
      postLogoutRedirectUri: `${issuer}/signed-out`,
      consumerId: 'consumer-1',
    });
    const get = (path: string) => client.handle({ method: 'GET', path, query: new URLSearchParams(), headers: {} });
    const started = await get('/signin');
    const failed = await get('/callback');
    const cookies = [started?.headers['set-cookie'], failed?.headers['set-cookie']].flat();
    expect(cookies).toHaveLength(2);
    for (const cookie of cookies) expect(String(cookie)).toMatch(/^demo_flow=.*; Secure(;|$)/);
  });
});
