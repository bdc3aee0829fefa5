/**
 * The demo as a newcomer meets it: `examples/express/server.ts` started with its embedded defaults (only the port
 * chosen), in a real Chromium. Sign in, then every button of the signed-in page with the result each must show
 * (the brand-tokens API refusing the user's token and accepting a consumer-bound one, refresh, revocation, refresh
 * refused after it), the account page and the operator console reached from the page's links, and RP-initiated
 * sign-out back to the app. axe finds nothing serious or critical on the demo's pages; the pages work with
 * JavaScript off. Screenshots of the home and signed-in pages go to docs/ when asked.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../helpers/example-process.js';
import { SCREENSHOT_DIR } from './artifacts.js';
import { seriousViolations } from './axe.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { screenshotForDocs } from './docs-images.js';
import { DEMO_ACCOUNT, LOGIN_PATH, onPath, signIn } from './sign-in-flow.js';

const CONSUMER = '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b';

/** The README's first screen: what the viewport shows (not the whole page), published like the docs' images. */
async function viewportForDocs(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, animations: 'disabled' });
  if (process.env.SENTINEL_UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(path, join(process.cwd(), 'docs', `${name}.png`));
}

describe.runIf(browserAvailable('browser: the demo'))('browser: the demo', () => {
  let browser: Browser | undefined;
  let app: RunningExample | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [browser, app] = await Promise.all([launchChromium(), startExample('express')]);
  });
  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await app?.stop();
    await browser?.close();
  });

  function running(): RunningExample {
    if (app === undefined) throw new Error('the demo is not running');
    return app;
  }

  async function freshPage(options: { javaScriptEnabled?: boolean; bypassCSP?: boolean } = {}): Promise<Page> {
    if (browser === undefined) throw new Error('Chromium is not running');
    const context = await browser.newContext({ ...options, viewport: { width: 1100, height: 860 } });
    contexts.push(context);
    return context.newPage();
  }

  /** Presses a button of the signed-in page and waits for the page the post redirects back to. */
  async function press(page: Page, name: string): Promise<{ title: string; text: string }> {
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/' && url.hash === '#result'),
      page.getByRole('button', { name }).click(),
    ]);
    const result = page.locator('#result');
    return { title: ((await result.locator('h2').textContent()) ?? '').trim(), text: (await result.textContent()) ?? '' };
  }

  it('signs in, and every button does what it says', async () => {
    const page = await freshPage();
    await page.goto(`${running().url}/`);
    expect(await page.locator('h1').textContent()).toBe('Sign in to see what an app receives');
    await signIn(page, running());
    expect(await page.locator('h1').textContent()).toBe('Signed in');
    expect(await page.locator('#subject').textContent()).toBe('user-demo-1');
    expect(await page.locator('#result').textContent()).toContain('Access token received');
    // The claims, decoded: the ID token is for this app, the access token for this account.
    const idToken = page.locator('#id-token');
    expect(await idToken.getByRole('row', { name: /^sub / }).textContent()).toContain('user-demo-1');
    expect(await idToken.getByRole('row', { name: /^iss / }).textContent()).toContain(`/sentinel/api/account/${DEMO_ACCOUNT}`);
    expect(
      await page
        .locator('#access-token')
        .getByRole('row', { name: /^scope / })
        .textContent(),
    ).toContain('openid');
    const firstJti = await page.locator('#access-token').getByRole('row', { name: /^jti / }).locator('td').textContent();

    // The user's access token is not bound to a consumer: the guarded API refuses it.
    let result = await press(page, 'Call the brand-tokens API');
    expect(result.title).toBe('The brand-tokens API answered 401');
    expect(result.text).toContain('invalid_token');
    expect(await page.locator('#result').getAttribute('class')).toContain('refused');

    result = await press(page, 'Get a consumer-bound token');
    expect(result.title).toBe('The app-token endpoint answered 200');
    expect(await page.locator('#consumer-token').getByRole('row', { name: /^sub / }).textContent()).toContain(CONSUMER);
    expect(await page.locator('#consumer-token').getByRole('row', { name: /^gty / }).textContent()).toContain('client_credentials');

    result = await press(page, 'Call the brand-tokens API');
    expect(result.title).toBe('The brand-tokens API answered 200');
    expect(result.text).toContain('acme-coffee');
    expect(result.text).not.toContain('invalid_token');

    result = await press(page, 'Refresh the tokens');
    expect(result.title).toBe('The tokens were refreshed');
    const secondJti = await page.locator('#access-token').getByRole('row', { name: /^jti / }).locator('td').textContent();
    expect(secondJti).not.toBe(firstJti);
    expect(result.text).toContain(secondJti ?? 'no jti');

    result = await press(page, 'Revoke the grant');
    expect(result.title).toBe('The revocation endpoint answered 200');
    expect(result.text).toContain('active: false');

    result = await press(page, 'Refresh the tokens');
    expect(result.title).toBe('The token endpoint answered 400');
    expect(result.text).toContain('invalid_grant');

    // The result is shown once: a reload shows the page without it.
    await page.reload();
    expect(await page.locator('#result').count()).toBe(0);
    expect(await page.locator('#subject').textContent()).toBe('user-demo-1');
  });

  it('opens the account page and the console from the page, signed in already, and signs out through the service', async () => {
    const page = await freshPage();
    await signIn(page, running());

    await page.getByRole('link', { name: 'Your account page' }).first().click();
    await page.waitForURL(onPath(`/sentinel/api/account/${DEMO_ACCOUNT}/account`));
    expect(await page.locator('main').textContent()).toContain('Demo client'); // its connected apps

    await page.goto(`${running().url}/`);
    await page.getByRole('link', { name: 'Operator console' }).first().click();
    await page.waitForURL(onPath('/console/'));
    await page.getByLabel('Account id').fill(DEMO_ACCOUNT);
    await page.getByRole('button', { name: 'Continue' }).click();
    // The device session of the app's sign-in: no password asked again; the demo user is the console's admin.
    await page.waitForURL(onPath(`/console/${DEMO_ACCOUNT}/apps`));
    expect(await page.locator('main').textContent()).toContain('Demo client');
    expect(await page.locator('main').textContent()).toContain('user-demo-1');

    await page.goto(`${running().url}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(onPath('/signed-out'));
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    // The service's session ended too: the next sign-in asks for the password.
    await page.getByRole('link', { name: 'Sign in with the platform' }).click();
    await page.waitForURL(onPath(LOGIN_PATH));
  });

  it('works with JavaScript off, from sign-in to sign-out', async () => {
    const page = await freshPage({ javaScriptEnabled: false });
    await signIn(page, running());
    const result = await press(page, 'Get a consumer-bound token');
    expect(result.title).toBe('The app-token endpoint answered 200');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(onPath('/signed-out'));
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
  });

  it('has no serious or critical axe violation on its pages, and takes the docs screenshots', async () => {
    const page = await freshPage({ bypassCSP: true });
    await page.goto(`${running().url}/`);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotForDocs(page, 'demo-home');
    await signIn(page, running());
    expect(await seriousViolations(page)).toEqual([]);
    await press(page, 'Get a consumer-bound token');
    await page.evaluate(() => window.scrollTo(0, 0));
    await viewportForDocs(page, 'demo-first-screen');
    await press(page, 'Call the brand-tokens API');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotForDocs(page, 'demo-signed-in');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(onPath('/signed-out'));
    expect(await seriousViolations(page)).toEqual([]);
  });
});
