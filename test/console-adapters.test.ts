/**
 * The operator console mounts like the service on every framework of test/helpers/hosts.ts: its pages with the
 * security headers, a form body read through the adapter, the host's own routes untouched, a mount prefix kept in
 * the addresses it hands out, and — mounted beside the service, as a host does — a whole operator sign-in over
 * HTTP through the service's login page, then an app registered whose secret gets a token; and under a prefix, a
 * sign-in that a visitor spelling the prefix in another case (Express matches it) cannot break.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CLIENT_ID, createConsole } from '../src/console/index.js';
import { contextOf } from '../src/http/context.js';
import type { Sentinel } from '../src/index.js';
import { ACCOUNT, appTokenPath, basic, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';

/** A browser's cookies, by name, from the `Set-Cookie` headers it was sent. */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      if (/max-age=0/i.test(line) || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return response;
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** Follows one redirect's Location on the host, whatever origin the issuer gave it. */
function onHost(base: string, location: string | null): string {
  const url = new URL(location ?? '', base);
  return `${base}${url.pathname}${url.search}`;
}

/** A browser: its cookie jar, and requests that do not follow redirects. */
class Browser {
  readonly jar = new CookieJar();
  get = async (url: string): Promise<Response> =>
    this.jar.take(await fetch(url, { redirect: 'manual', headers: { cookie: this.jar.header() } }));
  post = async (url: string, form: Record<string, string>): Promise<Response> =>
    this.jar.take(
      await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: this.jar.header(), 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams(form).toString(),
      }),
    );
}

/**
 * Signs an operator in through the console at `{url}{prefix}/console` and the service's login page; `meanwhile`
 * runs while they are on the login page. Answers the apps page's CSRF token and its registration form's `once`.
 */
async function signIn(
  browser: Browser,
  url: string,
  prefix: string,
  meanwhile?: () => Promise<void>,
): Promise<{ csrf: string; once: string }> {
  const { get, post } = browser;
  const started = await get(`${url}${prefix}/console/sign-in?account=${ACCOUNT}`);
  expect(started.status).toBe(303);
  const authorized = await get(onHost(url, started.headers.get('location')));
  expect(authorized.status).toBe(302);
  const loginURL = onHost(url, authorized.headers.get('location'));
  const login = await get(loginURL);
  expect(login.status).toBe(200);
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(await login.text())?.[1] ?? '';
  await meanwhile?.();
  const signedIn = await post(loginURL, { csrf_token: csrfToken, username: USERNAME, password: PASSWORD });
  expect(signedIn.status).toBe(303);
  // The login page's 303, the authorization endpoint's redirect to the console's callback, the callback's 303.
  const visited: string[] = [];
  let next = signedIn;
  while (next.status >= 300 && next.status < 400 && visited.length < 5) {
    const at = onHost(url, next.headers.get('location'));
    visited.push(new URL(at).pathname);
    next = await get(at);
  }
  expect(visited).toContain(`${prefix}/console/callback`);
  expect(visited.at(-1)).toBe(`${prefix}/console/${ACCOUNT}/apps`);
  expect(next.status).toBe(200);
  const page = await next.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return { csrf, once: /name="once" value="([^"]+)"/.exec(page)?.[1] ?? '' };
}

describe.each(HOSTS)('console on $name', (host) => {
  let mounted: MountedHost;
  let prefixed: MountedHost;

  beforeAll(async () => {
    const operatorConsole = createConsole(makeSentinel(), { authorize: () => 'admin' });
    // The hosts mount anything with the service's shape (`config` and `handle`), which is what the adapters read.
    const asService = operatorConsole as unknown as Sentinel;
    [mounted, prefixed] = await Promise.all([host.mount(asService), host.mount(asService, { prefix: '/ops' })]);
  });
  afterAll(async () => {
    await Promise.all([mounted?.close(), prefixed?.close()]);
  });

  it('serves its pages with the login page headers and leaves the host routes alone', async () => {
    const page = await fetch(`${mounted.url}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await page.text()).toContain('<form method="get" action="/console/sign-in">');
    const ping = await fetch(`${mounted.url}/host/ping`);
    expect(await ping.text()).toBe('pong');
  });

  it('reads a form through the adapter and refuses a change without a session', async () => {
    const refused = await fetch(`${mounted.url}/console/${ACCOUNT}/apps/x/delete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=forged',
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('did not come from this console');
  });

  it('keeps a mount prefix in the addresses it hands out', async () => {
    const page = await fetch(`${prefixed.url}/ops/console/${ACCOUNT}/apps`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/ops/console/sign-in?account=${ACCOUNT}`);
  });
});

describe.each(HOSTS)('console beside the service on $name', (host) => {
  let mounted: MountedHost;
  let sentinel: Sentinel;

  beforeAll(async () => {
    sentinel = makeSentinel();
    const operatorConsole = createConsole(sentinel, { authorize: ({ userId }) => (userId === USER_ID ? 'admin' : null) });
    mounted = await host.mount(sentinel, { beside: operatorConsole });
  });
  afterAll(async () => {
    await mounted?.close();
  });

  it('signs an operator in through the login page, and registers an app whose secret gets a token', async () => {
    const browser = new Browser();
    const { csrf, once } = await signIn(browser, mounted.url, '');
    const { post } = browser;
    const registered = await post(`${mounted.url}/console/${ACCOUNT}/apps`, {
      csrf,
      once,
      name: `Made on ${host.name}`,
      redirect_uris: 'https://made.example.com/cb',
      auth: 'client_secret_basic',
    });
    expect(registered.status).toBe(200);
    const page = await registered.text();
    const secret = /<p class="secret">([^<]+)<\/p>/.exec(page)?.[1] ?? '';
    const clientId = /<dd><code>([^<]+)<\/code><\/dd>/.exec(page)?.[1] ?? '';
    expect(secret).not.toBe('');
    const token = await fetch(`${mounted.url}${appTokenPath()}`, {
      method: 'POST',
      headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    // The service's own discovery still answers beside the console.
    const metadata = await fetch(`${mounted.url}/.well-known/oauth-authorization-server/sentinel/api/account/${ACCOUNT}`);
    expect(metadata.status).toBe(200);
  });
});

describe.each(HOSTS)('console beside the service under a prefix on $name', (host) => {
  let mounted: MountedHost;
  let sentinel: Sentinel;

  beforeAll(async () => {
    sentinel = makeSentinel({ issuer: 'http://localhost/ops' });
    const operatorConsole = createConsole(sentinel, { authorize: ({ userId }) => (userId === USER_ID ? 'admin' : null) });
    mounted = await host.mount(sentinel, { prefix: '/ops', beside: operatorConsole });
  });
  afterAll(async () => {
    await mounted?.close();
  });

  it('keeps its callback when a visitor spells the prefix in another case, and the sign-in under way completes', async () => {
    const callbacks = async () => (await contextOf(sentinel).apps.findApp(ACCOUNT, CONSOLE_CLIENT_ID))?.redirectUris;
    await signIn(new Browser(), mounted.url, '/ops', async () => {
      expect(await callbacks()).toEqual(['http://localhost/ops/console/callback']);
      const visitor = await fetch(`${mounted.url}/OPS/console/sign-in?account=${ACCOUNT}`, { redirect: 'manual' });
      // Express matches `/OPS` as its `/ops` mount, so the console answers it; the other hosts do not.
      expect(visitor.status).toBe(host.name.startsWith('express') ? 303 : 404);
      expect(await callbacks()).toEqual(['http://localhost/ops/console/callback']);
    });
  });
});
