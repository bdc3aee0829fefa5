/**
 * RP-initiated logout in Chromium: the confirmation page of a logout request that is not tied to the session,
 * signed out through its form with the browser's own Sec-Fetch-Site, cookies and CSP in force, and checked with
 * axe-core like the other pages.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExample, type RunningExample } from '../helpers/example-process.js';
import { seriousViolations } from './axe.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { DEMO_ACCOUNT, LOGIN_PATH, signIn } from './sign-in-flow.js';

const END_SESSION = `/sentinel/api/account/${DEMO_ACCOUNT}/end_session`;

describe.runIf(browserAvailable('browser: RP-initiated logout'))('browser: RP-initiated logout', () => {
  let browser: Browser | undefined;
  let app: RunningExample | undefined;

  beforeAll(async () => {
    [browser, app] = await Promise.all([launchChromium(), startExample('express')]);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  async function newPage(audit = false): Promise<Page> {
    if (browser === undefined) throw new Error('Chromium is not running');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: audit });
    return context.newPage();
  }

  function running(): RunningExample {
    if (app === undefined) throw new Error('express example is not running');
    return app;
  }

  it('asks before signing out, signs out through the form, and the next sign-in shows the login page again', async () => {
    const page = await newPage();
    await signIn(page, running());
    await page.goto(`${running().url}${END_SESSION}`);
    expect(await page.locator('h1').textContent()).toBe('Sign out?');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === END_SESSION && url.search === '');
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    // The demo app keeps its own session after the service's ends, so its home shows the signed-in page: start the
    // next sign-in at the app's /signin, which sends the browser to authorize.
    await page.goto(`${running().url}/signin`);
    await page.waitForURL((url) => url.pathname === LOGIN_PATH || url.pathname === '/callback');
    expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
    await page.context().close();
  });

  it('axe-core: no serious or critical violation on the confirmation page', async () => {
    const page = await newPage(true);
    await signIn(page, running());
    await page.goto(`${running().url}${END_SESSION}`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});
