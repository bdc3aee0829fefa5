/**
 * The authorization code flow in a real Chromium, once per example app (Express, Koa, Fastify), each started as
 * its own process: client page → authorize → login page → credentials → back on the app with a code, which the
 * app exchanges (PKCE S256, RFC 7636) and shows who signed in. Plus the device session (second sign-in without a
 * login page), a wrong password, Cancel (RFC 6749 §4.1.2.1 access_denied), sign-out (RP-initiated logout back to
 * the app), keyboard only, and a browser with JavaScript disabled. And a native app (RFC 8252 §7.3) whose
 * redirect URI is the IPv6 or IPv4 loopback: the pages' CSP form-action must let the 303 back to it through.
 */
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_CATALOGUES, type Messages } from '../../src/index.js';
import { PASSWORD } from '../helpers/fixtures.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { startExample, type RunningExample } from '../helpers/example-process.js';
import { LOGIN_PATH, onPath, signIn, SIGN_IN_LINK, startSignIn, submitCredentials } from './sign-in-flow.js';
import { NATIVE_APP_SIGNED_IN, startNativeAppHost, type NativeAppHost } from './native-app-host.js';

const FRAMEWORKS = ['express', 'koa', 'fastify'] as const;
const DEMO_USER_ID = 'user-demo-1';

describe.runIf(browserAvailable('browser: example flows'))('browser: example flows', () => {
  let browser: Browser | undefined;
  const apps = new Map<string, RunningExample>();
  // Chromium and the three examples start side by side: each start is a process of its own, mostly waiting.
  beforeAll(async () => {
    const started = await Promise.allSettled([launchChromium(), ...FRAMEWORKS.map((framework) => startExample(framework))]);
    const [launched, ...examples] = started;
    if (launched?.status === 'fulfilled') browser = launched.value as Browser;
    for (const example of examples)
      if (example.status === 'fulfilled') apps.set((example.value as RunningExample).framework, example.value as RunningExample);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  });
  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.stop()));
    await browser?.close();
  });

  describe.each(FRAMEWORKS)('examples/%s', (framework) => {
    const contexts: BrowserContext[] = [];

    afterAll(async () => {
      await Promise.all(contexts.map((context) => context.close()));
    });

    function running(): RunningExample {
      const app = apps.get(framework);
      if (app === undefined) throw new Error(`${framework} example is not running`);
      return app;
    }

    /** A fresh browser profile: no cookies, so no device session. */
    async function freshPage(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
      if (browser === undefined) throw new Error('Chromium is not running');
      const context = await browser.newContext({ ...options, viewport: { width: 1024, height: 768 } });
      contexts.push(context);
      return context.newPage();
    }

    async function heading(page: Page): Promise<string> {
      return ((await page.locator('h1').textContent()) ?? '').trim();
    }

    it('signs in with the demo credentials; the app exchanges the code with PKCE and shows the user', async () => {
      const page = await freshPage();
      await startSignIn(page, running().url);
      expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
      expect(await heading(page)).toBe('Sign in');
      await expect(page.locator('.lead').textContent()).resolves.toContain('Demo client');

      const posted = await submitCredentials(page, running().username, running().password);
      expect(posted.status()).toBe(303);
      await page.waitForURL(onPath('/callback'));
      const callback = new URL(page.url());
      expect(callback.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      expect(callback.searchParams.get('iss')).toBe(`${running().url}/sentinel/api/account/123456`);
      expect(await heading(page)).toBe('Signed in');
      expect(await page.locator('#subject').textContent()).toBe(DEMO_USER_ID);
      await expect(page.locator('main').textContent()).resolves.toContain('Access token received');
    });

    it('goes straight through on the device session the second time', async () => {
      const page = await freshPage();
      await signIn(page, running());
      const visited: string[] = [];
      page.on('request', (request) => visited.push(new URL(request.url()).pathname));

      // The signed-in app page has no sign-in link: start the flow as the link does.
      await page.goto(`${running().url}/signin`);
      await page.waitForURL(onPath('/callback'));
      expect(visited).toContain('/sentinel/api/account/123456/authorize');
      expect(visited).not.toContain(LOGIN_PATH);
      expect(await heading(page)).toBe('Signed in');
      expect(await page.locator('#subject').textContent()).toBe(DEMO_USER_ID);
    });

    it('shows the error on a wrong password, keeps the username, and then accepts the right one', async () => {
      const page = await freshPage();
      await startSignIn(page, running().url);
      const posted = await submitCredentials(page, running().username, `${running().password}-wrong`);
      expect(posted.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
      const alert = page.getByRole('alert');
      expect(await alert.textContent()).toBe('Incorrect username or password.');
      expect(await alert.isVisible()).toBe(true);
      expect(await page.getByLabel('Username').inputValue()).toBe(running().username);
      expect(await page.getByLabel('Password').inputValue()).toBe('');
      expect(await page.getByLabel('Password').getAttribute('aria-describedby')).toBe('login-error');

      await submitCredentials(page, running().username, running().password);
      await page.waitForURL(onPath('/callback'));
      expect(await page.locator('#subject').textContent()).toBe(DEMO_USER_ID);
    });

    it('Cancel brings the app an access_denied and signs nobody in', async () => {
      const page = await freshPage();
      await startSignIn(page, running().url);
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.waitForURL(onPath('/callback'));
      const callback = new URL(page.url());
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('code')).toBeNull();
      expect(await heading(page)).toBe('Sign-in failed');
      await expect(page.locator('main').textContent()).resolves.toContain('access_denied');

      // Nothing was remembered: the next sign-in asks for credentials again.
      await startSignIn(page, running().url);
      expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
    });

    it('sign-out ends the device session through end_session and returns to the app: the login page comes back', async () => {
      const page = await freshPage();
      await signIn(page, running());
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(onPath('/signed-out'));
      expect(await heading(page)).toBe('You are signed out');

      await startSignIn(page, running().url);
      expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
      expect(await heading(page)).toBe('Sign in');
    });

    it('works with the keyboard alone (Tab and Enter), from the client page to sign-out', async () => {
      const page = await freshPage();
      await page.goto(`${running().url}/`);
      const focused = (): Promise<string> =>
        page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim() || '');

      await page.keyboard.press('Tab');
      expect(await focused()).toBe(SIGN_IN_LINK);
      await page.keyboard.press('Enter');
      await page.waitForURL(onPath(LOGIN_PATH));
      // autofocus: typing can start at once. Chrome focuses the field at its next rendering step after load, which a
      // loaded host can put a moment after waitForURL returns: wait for it (a page without autofocus still fails).
      await expect.poll(focused, { timeout: 5_000 }).toBe('username');
      await page.keyboard.type(running().username);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('password');
      await page.keyboard.type(running().password);
      await page.keyboard.press('Enter'); // the first submit button is Sign in, not Cancel
      await page.waitForURL(onPath('/callback'));
      expect(await page.locator('#subject').textContent()).toBe(DEMO_USER_ID);

      await page.keyboard.press('Tab');
      expect(await focused()).toBe('Sign out');
      await page.keyboard.press('Enter');
      await page.waitForURL(onPath('/signed-out'));
      expect(await heading(page)).toBe('You are signed out');
    });

    it('completes the flow with JavaScript disabled (the pages need no script)', async () => {
      const page = await freshPage({ javaScriptEnabled: false });
      await startSignIn(page, running().url);
      expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
      await submitCredentials(page, running().username, `${running().password}-wrong`);
      expect(await page.getByRole('alert').textContent()).toBe('Incorrect username or password.');
      await submitCredentials(page, running().username, running().password);
      await page.waitForURL(onPath('/callback'));
      expect(await page.locator('#subject').textContent()).toBe(DEMO_USER_ID);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(onPath('/signed-out'));
      expect(await heading(page)).toBe('You are signed out');
    });
  });
});

describe.runIf(browserAvailable('browser: native app on the loopback'))('browser: native app on the loopback (RFC 8252 §7.3)', () => {
  const en = BUNDLED_CATALOGUES.en as Messages;
  let browser: Browser | undefined;
  let host: NativeAppHost | undefined;
  beforeAll(async () => {
    [browser, host] = await Promise.all([launchChromium(), startNativeAppHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  function native(): NativeAppHost {
    if (host === undefined) throw new Error('native app host is not running');
    return host;
  }

  /**
   * Opens the sign-in of `redirectUri` in a fresh profile, signs `username` in (with its TOTP code when `totp`),
   * and resolves with what the app's loopback server answered and the CSP complaints Chromium logged.
   */
  async function signInTo(redirectUri: string, username: string, totp = false): Promise<{ url: string; body: string; csp: string[] }> {
    if (browser === undefined) throw new Error('Chromium is not running');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const csp: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) csp.push(message.text());
      });
      await page.goto(native().authorizeURL(redirectUri));
      await page.getByLabel(en.username, { exact: true }).fill(username);
      await page.getByLabel(en.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: en.signIn, exact: true }).click();
      if (totp) {
        await page.waitForURL((url) => url.pathname.endsWith('/login/totp'));
        await page.getByLabel(en.totpLabel).fill(await generate({ secret: native().totpSecret }));
        await page.getByRole('button', { name: en.totpVerify }).click();
      }
      // A form-action that does not allow the app's origin blocks the 303 and leaves the browser on the form.
      await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 15_000 }).catch(() => {});
      return { url: page.url(), body: (await page.textContent('body')) ?? '', csp };
    } finally {
      await context.close();
    }
  }

  it('the login form returns a code to http://[::1] and to http://127.0.0.1', async () => {
    for (const redirectUri of [native().redirectUris.ipv6, native().redirectUris.ipv4]) {
      const result = await signInTo(redirectUri, 'alice');
      expect(result.csp, redirectUri).toEqual([]);
      expect(result.url.startsWith(`${redirectUri}?code=`), result.url).toBe(true);
      expect(result.body).toBe(NATIVE_APP_SIGNED_IN);
    }
  });

  it('the TOTP step returns a code to http://[::1]', async () => {
    const redirectUri = native().redirectUris.ipv6;
    const result = await signInTo(redirectUri, 'bob', true);
    expect(result.csp).toEqual([]);
    expect(result.url.startsWith(`${redirectUri}?code=`), result.url).toBe(true);
    expect(result.body).toBe(NATIVE_APP_SIGNED_IN);
  });
});
