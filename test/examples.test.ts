/**
 * Each example app, started as its own process the way a user starts it (`node --import tsx examples/<fw>/server.ts`)
 * on a free port: the start-up banner, the consumer-bound client credentials flow into the guarded token-retrieval
 * API, and the authorization code flow through the demo client page (sign-in, callback, code exchange, a demo button
 * through the adapter, SSO, logout).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExampleStarts, type RunningExample, startExamples } from './helpers/example-process.js';

const FRAMEWORKS = ['express', 'koa', 'fastify'] as const;
const ACCOUNT = '123456';
const SEEDED_CONSUMER = '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b';
const OTHER_SEEDED_CONSUMER = '5f2b9c1e7a3d4f608b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6';
const EMPTY_CONSUMER = '99999999-8888-4777-8666-555555555555';

function bannerValue(banner: string, label: string): string {
  const found = new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm').exec(banner);
  if (found?.[1] === undefined) throw new Error(`banner has no ${label}:\n${banner}`);
  return found[1];
}

/** A minimal cookie jar: name → value, updated from every response. */
function createJar(): { header(): string; take(response: Response): void; has(name: string): boolean } {
  const cookies = new Map<string, string>();
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    take(response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';');
        const [name = '', value = ''] = pair.split('=');
        const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute));
        if (expired || value === '') cookies.delete(name.trim());
        else cookies.set(name.trim(), value.trim());
      }
    },
    has: (name) => cookies.has(name),
  };
}

// The three examples start side by side; each describe waits for its own.
let starts: ExampleStarts;
beforeAll(() => {
  starts = startExamples(Object.fromEntries(FRAMEWORKS.map((framework) => [framework, { framework }])));
});
afterAll(() => starts.stopAll());

describe.each(FRAMEWORKS)('examples/%s', (framework) => {
  let app: RunningExample | undefined;
  let clientId = '';
  let clientSecret = '';

  beforeAll(async () => {
    app = await starts.get(framework);
    clientId = bannerValue(app.output(), 'client id');
    clientSecret = bannerValue(app.output(), 'client secret');
  });
  afterAll(() => app?.stop());

  function base(): string {
    if (app === undefined) throw new Error('example not running');
    return app.url;
  }

  async function appToken(consumerId: string): Promise<Response> {
    return fetch(`${base()}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${consumerId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
  }

  const brandTokens = (consumerId: string, token?: string): Promise<Response> =>
    fetch(`${base()}/api/account/${ACCOUNT}/consumer/${consumerId}/brand/tokens`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  it('prints the app credentials, the demo user, a sign-in URL and a ready-to-paste curl', () => {
    const banner = app?.output() ?? '';
    expect(clientId).toMatch(/^[0-9a-f-]{36}$/);
    expect(clientSecret.length).toBeGreaterThanOrEqual(26);
    expect(bannerValue(banner, 'demo user')).toBe('demo');
    expect(banner).toContain(`${base()}/signin`);
    expect(banner).toContain(`curl -s -X POST '${base()}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${SEEDED_CONSUMER}'`);
    expect(banner).toContain(`client_secret=${clientSecret}`);
    // Where each page is: the app, the login (through authorize), the account page, the console, discovery.
    expect(banner).toMatch(new RegExp(`^\\s+app\\s+${base()}/\\s`, 'm'));
    expect(banner).toContain(`${base()}/sentinel/api/account/${ACCOUNT}/authorize`);
    expect(banner).toContain(`${base()}/sentinel/api/account/${ACCOUNT}/account`);
    expect(banner).toContain(`${base()}/console/`);
    expect(banner).toContain(`${base()}/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`);
  });

  it('client credentials: a consumer-bound token reads that consumer’s brand tokens and nobody else’s', async () => {
    const issued = await appToken(SEEDED_CONSUMER);
    expect(issued.status).toBe(200);
    const body = (await issued.json()) as { access_token: string; token_type: string; expires_in: string };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toMatch(/^\d+$/);

    const own = await brandTokens(SEEDED_CONSUMER, body.access_token);
    expect(own.status).toBe(200);
    const tokens = (await own.json()) as { consumerId: string; tokens: { brandId: string }[] };
    expect(tokens.consumerId).toBe(SEEDED_CONSUMER);
    expect(tokens.tokens.map((token) => token.brandId)).toEqual(['acme-coffee', 'acme-tea']);

    const foreign = await brandTokens(OTHER_SEEDED_CONSUMER, body.access_token);
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('www-authenticate')).toContain('invalid_token');
    expect((await brandTokens(SEEDED_CONSUMER)).status).toBe(401);
  });

  it('the token-retrieval API answers 404 for a consumer with nothing stored and 400 for a malformed id', async () => {
    const issued = (await (await appToken(EMPTY_CONSUMER)).json()) as { access_token: string };
    const none = await brandTokens(EMPTY_CONSUMER, issued.access_token);
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ error: 'not_found' });
    const malformed = await brandTokens('not-a-consumer', issued.access_token);
    expect(malformed.status).toBe(400);
    // A segment that does not percent-decode is bad input too: 400 in every framework, never the catch-all's 500.
    expect((await brandTokens('%ZZ', issued.access_token)).status).toBe(400);
  });

  it('the client page offers "Sign in with the platform" and starts the code flow with PKCE S256', async () => {
    const home = await fetch(`${base()}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await home.text()).toContain('href="/signin">Sign in with the platform');
    const start = await fetch(`${base()}/signin`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get('location') ?? '');
    expect(location.pathname).toBe(`/sentinel/api/account/${ACCOUNT}/authorize`);
    expect(location.searchParams.get('client_id')).toBe(clientId);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('state')).toMatch(/^[\w-]{43}$/);
    expect(start.headers.getSetCookie()[0]).toMatch(/^demo_flow=[\w-]{43}; Path=\/callback; HttpOnly; SameSite=Lax/);
  });

  it('the callback refuses a response this browser did not start', async () => {
    const response = await fetch(
      `${base()}/callback?code=abc&state=forged&iss=${encodeURIComponent(`${base()}/sentinel/api/account/${ACCOUNT}`)}`,
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('No sign-in was started in this browser');
  });

  it('code flow: sign in, callback, code exchange, then single sign-on and sign-out', async () => {
    const jar = createJar();
    const get = async (url: string): Promise<Response> => {
      const response = await fetch(new URL(url, base()), { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(response);
      return response;
    };
    const start = await get('/signin');
    const toLogin = await get(start.headers.get('location') ?? '');
    expect(toLogin.status).toBe(302);
    const loginPage = await get(toLogin.headers.get('location') ?? '');
    expect(loginPage.status).toBe(200);
    const html = await loginPage.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(action).toContain('/login');

    const login = await fetch(new URL(action, base()), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: base(),
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({
        csrf_token: csrf,
        username: 'demo',
        password: app?.password ?? '',
      }),
    });
    jar.take(login);
    expect(login.status).toBe(303);
    const callbackURL = new URL(login.headers.get('location') ?? '');
    expect(callbackURL.pathname).toBe('/callback');
    expect(callbackURL.searchParams.get('code')).not.toBeNull();

    const signedIn = await get(callbackURL.toString());
    expect(signedIn.status).toBe(200);
    const page = await signedIn.text();
    expect(page).toContain('Signed in as <strong id="subject">user-demo-1</strong>');
    expect(page).not.toContain(callbackURL.searchParams.get('code') ?? 'no code');

    // A demo button through this framework's adapter: the form body reaches the handler, bound to the session's
    // CSRF token; without the token nothing happens.
    const demoCsrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const press = (body: string): Promise<Response> =>
      fetch(`${base()}/demo/app-token`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    expect((await press('csrf=forged')).status).toBe(403);
    expect(await (await get('/')).text()).not.toContain('id="result"');
    const pressed = await press(`csrf=${demoCsrf}`);
    expect(pressed.status).toBe(303);
    const shown = await (await get('/')).text();
    expect(shown).toContain('The app-token endpoint answered 200');
    expect(shown).toContain(`<code>${SEEDED_CONSUMER}</code>`);

    // A second sign-in in the same browser goes straight back with a code: the device session is reused.
    const again = await get('/signin');
    const direct = await get(again.headers.get('location') ?? '');
    expect(direct.status).toBe(302);
    expect(new URL(direct.headers.get('location') ?? '', base()).pathname).toBe('/callback');

    const logout = await fetch(`${base()}/sentinel/api/account/${ACCOUNT}/logout`, {
      method: 'POST',
      headers: {
        cookie: jar.header(),
        'content-type': 'application/x-www-form-urlencoded',
        origin: base(),
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ client_id: clientId }),
    });
    expect(logout.status).toBe(200);
    expect(await logout.text()).toContain('signed out');
  });
});

describe.each(FRAMEWORKS)('examples/%s on a port another program holds', (framework) => {
  it('says it cannot listen and exits 1, without a banner announcing a server that is not there', async () => {
    const holder = createServer((_request, response) => response.end('another program'));
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', `examples/${framework}/server.ts`], {
        cwd: process.cwd(),
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ISSUER: `http://127.0.0.1:${port}`, NODE_ENV: 'test' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      // An example that wrongly stays up is killed, so that it fails the test instead of outliving it.
      const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
      const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
      clearTimeout(killer);
      expect(code, output).toBe(1);
      expect(output).toContain('EADDRINUSE');
      expect(output).not.toContain('listening on');
      expect(output).not.toContain('client secret');
    } finally {
      holder.close();
    }
  }, 60_000);
});
