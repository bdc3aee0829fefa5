/**
 * How the service's pages look and whether everyone can use them, in a real Chromium: screenshots of the login
 * page (default, branded, wrong password, throttled, 375×667 phone) and of the error page, saved under
 * test-results/screenshots/, with layout checks (centred card, app name and account visible, no sideways scroll
 * on a phone), and an axe-core audit with no serious or critical violation (WCAG 2.x A/AA).
 *
 * platform-operations.md §5 item 2 (the user signs in on the service's page); RFC 6749 §4.1.2.1 (the error page
 * when the client is unknown); RFC 6749 §10.10 (throttled guessing answers 429).
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './axe.js';
import { publishDocsScreenshot, saveScreenshot } from './artifacts.js';
import { ACCOUNT } from '../helpers/fixtures.js';
import { BRANDED_APP_NAME, BRANDING, startBrandedHost, UNNAMED_CLIENT_ID, type BrandedHost } from './branded-host.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { startExample, type RunningExample } from '../helpers/example-process.js';
import { DEMO_ACCOUNT, LOGIN_PATH, onPath, signIn, startSignIn, submitCredentials } from './sign-in-flow.js';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 667 };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

describe.runIf(browserAvailable('browser: login page look and accessibility'))('browser: login page look and accessibility', () => {
  let browser: Browser | undefined;
  let app: RunningExample | undefined;
  let branded: BrandedHost | undefined;

  beforeAll(async () => {
    [browser, app, branded] = await Promise.all([launchChromium(), startExample('express'), startBrandedHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all([app?.stop(), branded?.close()]);
  });

  function running(): RunningExample {
    if (app === undefined) throw new Error('express example is not running');
    return app;
  }

  function brandedHost(): BrandedHost {
    if (branded === undefined) throw new Error('branded host is not running');
    return branded;
  }

  /** A fresh profile; `audit` lets axe-core in past the pages' script-free CSP (only for the audit contexts). */
  async function newPage(options: { audit?: boolean; viewport?: typeof DESKTOP } = {}): Promise<Page> {
    if (browser === undefined) throw new Error('Chromium is not running');
    const phone = options.viewport === PHONE;
    const contextOptions: BrowserContextOptions = {
      viewport: options.viewport ?? DESKTOP,
      deviceScaleFactor: phone ? 2 : 1,
      isMobile: phone,
      hasTouch: phone,
      bypassCSP: options.audit === true,
      colorScheme: 'light',
      reducedMotion: 'reduce',
    };
    const context = await browser.newContext(contextOptions);
    return context.newPage();
  }

  async function closePage(page: Page): Promise<void> {
    await page.context().close();
  }

  async function box(page: Page, selector: string): Promise<Box> {
    const found = await page.locator(selector).boundingBox();
    if (found === null) throw new Error(`${selector} is not rendered`);
    return found;
  }

  /** The card sits in the middle of the viewport (horizontally exact, vertically when it fits). */
  async function expectCentredCard(page: Page, viewport: typeof DESKTOP): Promise<void> {
    const card = await box(page, '.card');
    expect(Math.abs(card.x + card.width / 2 - viewport.width / 2)).toBeLessThanOrEqual(1);
    if (card.height < viewport.height) expect(Math.abs(card.y + card.height / 2 - viewport.height / 2)).toBeLessThanOrEqual(1);
  }

  /** The card's content sits as far from its top edge as from its bottom edge. */
  async function expectBalancedCard(page: Page): Promise<void> {
    const gaps = await page.locator('.card').evaluate((card) => {
      const outer = card.getBoundingClientRect();
      const first = card.firstElementChild?.getBoundingClientRect();
      const last = card.lastElementChild?.getBoundingClientRect();
      return first === undefined || last === undefined ? null : { top: first.top - outer.top, bottom: outer.bottom - last.bottom };
    });
    expect(gaps).not.toBeNull();
    expect(Math.abs((gaps?.top ?? 0) - (gaps?.bottom ?? 0))).toBeLessThanOrEqual(1);
  }

  /** Wrong passwords for a fresh username until the throttle answers 429 (default budget: 5 failures). */
  async function throttle(page: Page): Promise<number> {
    const username = `mallory-${randomBytes(4).toString('hex')}`;
    await startSignIn(page, running().url);
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      const response = await submitCredentials(page, username, 'not-the-password');
      if (response.status() === 429) {
        expect(response.headers()['retry-after']).toMatch(/^\d+$/);
        return attempt;
      }
      expect(response.status()).toBe(200);
    }
    throw new Error('the login page never throttled');
  }

  /** Pairs of letters a line break falls between inside `selector`: words split mid-word ("applic|ation"). */
  function splitWords(page: Page, selector: string): Promise<string[]> {
    return page.locator(selector).evaluate((element) => {
      const letters: { character: string; top: number }[] = [];
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (let index = 0; index < text.length; index += 1) {
          const range = document.createRange();
          range.setStart(node, index);
          range.setEnd(node, index + 1);
          const rect = range.getClientRects()[0];
          if (rect !== undefined) letters.push({ character: text.charAt(index), top: Math.round(rect.top) });
        }
      }
      const split: string[] = [];
      for (let index = 1; index < letters.length; index += 1) {
        const before = letters[index - 1];
        const after = letters[index];
        if (before === undefined || after === undefined) continue;
        if (after.top > before.top && /\S/.test(before.character) && /\S/.test(after.character)) {
          split.push(`${before.character}|${after.character}`);
        }
      }
      return split;
    });
  }

  async function expectNoSeriousViolations(page: Page): Promise<void> {
    expect(await seriousViolations(page)).toEqual([]);
  }

  it('default page: a centred card that names the app and the account', async () => {
    const page = await newPage();
    await startSignIn(page, running().url);
    expect(new URL(page.url()).pathname).toBe(LOGIN_PATH);
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    expect(await page.locator('.lead').textContent()).toBe('to continue to Demo client');
    expect(await page.locator('.lead strong').isVisible()).toBe(true);
    expect(await page.locator('.meta').textContent()).toBe(`Account ${DEMO_ACCOUNT}`);
    expect(await page.locator('.meta').isVisible()).toBe(true);
    expect(await page.title()).toBe('Sign in');
    // 16 px or more: readable, and phones do not zoom into the fields on focus.
    const fontSize = await page.getByLabel('Username').evaluate((input) => Number.parseFloat(getComputedStyle(input).fontSize));
    expect(fontSize).toBeGreaterThanOrEqual(16);
    publishDocsScreenshot(await saveScreenshot(page, 'login-default'));
    await closePage(page);
  });

  it('branded page: product name, the host-served logo (allowed by the CSP) and the brand colour', async () => {
    const page = await newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) blocked.push(message.text());
    });
    await page.goto(brandedHost().authorizeURL());
    expect(new URL(page.url()).pathname).toBe(`/sentinel/api/account/${ACCOUNT}/login`);
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    expect(await page.locator('.brand span').textContent()).toBe(BRANDING.productName);
    expect(await page.locator('.lead').textContent()).toBe(`to continue to ${BRANDED_APP_NAME}`);
    const logoWidth = await page.locator('.brand img').evaluate((image) => (image as HTMLImageElement).naturalWidth);
    expect(logoWidth).toBeGreaterThan(0);
    expect(blocked).toEqual([]);
    const primary = await page
      .getByRole('button', { name: 'Sign in', exact: true })
      .evaluate((button) => getComputedStyle(button).backgroundColor);
    expect(primary).toBe('rgb(109, 40, 217)');
    expect(await page.title()).toBe(`Sign in – ${BRANDING.productName}`);
    await saveScreenshot(page, 'login-branded');
    await closePage(page);
  });

  it('error state: the wrong-password message is visible above the fields', async () => {
    const page = await newPage();
    await startSignIn(page, running().url);
    await submitCredentials(page, running().username, 'wrong password');
    const alert = await box(page, '[role="alert"]');
    const username = await box(page, '#username');
    expect(alert.y + alert.height).toBeLessThanOrEqual(username.y);
    expect(await page.getByRole('alert').textContent()).toBe('Incorrect username or password.');
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    await saveScreenshot(page, 'login-error');
    await closePage(page);
  });

  it('throttled state: after five failures the sixth attempt gets the 429 page', async () => {
    const page = await newPage();
    expect(await throttle(page)).toBe(6);
    expect(await page.locator('h1').textContent()).toBe('Too many attempts');
    expect(await page.locator('.lead').textContent()).toContain('Wait a few minutes');
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    await saveScreenshot(page, 'login-throttled');
    await closePage(page);
  });

  it('phone (375×667): everything fits the width, nothing scrolls sideways', async () => {
    const page = await newPage({ viewport: PHONE });
    await startSignIn(page, running().url);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth).toBeLessThanOrEqual(PHONE.width);
    for (const selector of ['.card', '#username', '#password', 'button.primary', 'button.secondary', '.meta']) {
      const found = await box(page, selector);
      expect(found.x, selector).toBeGreaterThanOrEqual(0);
      expect(found.x + found.width, selector).toBeLessThanOrEqual(PHONE.width);
    }
    expect(await page.locator('.lead strong').isVisible()).toBe(true);
    await saveScreenshot(page, 'login-mobile');
    await closePage(page);
  });

  it('phone (375×667): an app without a name shows its client id, wrapped inside the card', async () => {
    const page = await newPage({ viewport: PHONE });
    await page.goto(brandedHost().authorizeURL(UNNAMED_CLIENT_ID));
    expect(await page.locator('.lead strong').textContent()).toBe(UNNAMED_CLIENT_ID);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    const card = await box(page, '.card');
    const name = await box(page, '.lead strong');
    expect(name.x + name.width).toBeLessThanOrEqual(card.x + card.width);
    await saveScreenshot(page, 'login-mobile-unnamed-app');
    await closePage(page);
  });

  it('error page for an unknown application (401, no redirect)', async () => {
    const page = await newPage();
    const response = await page.goto(
      `${running().url}/sentinel/api/account/${DEMO_ACCOUNT}/authorize?response_type=code&client_id=no-such-app&state=s`,
    );
    expect(response?.status()).toBe(401);
    expect(await page.locator('h1').textContent()).toBe('Unknown account or application');
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    await saveScreenshot(page, 'error-unknown-client');
    await closePage(page);
  });

  it('wraps the small print between words, never inside one (desktop error page, phone 429 page)', async () => {
    const desktop = await newPage();
    await desktop.goto(`${running().url}/sentinel/api/account/${DEMO_ACCOUNT}/authorize?response_type=code&client_id=no-such-app`);
    const lines = await desktop.locator('.meta').evaluate((element) => Math.round(element.getBoundingClientRect().height));
    expect(lines).toBeGreaterThan(20); // it does wrap (two lines at this width), so the check below means something
    expect(await splitWords(desktop, '.meta')).toEqual([]);
    expect(await splitWords(desktop, '.lead')).toEqual([]);
    await closePage(desktop);

    const phone = await newPage({ viewport: PHONE });
    await throttle(phone);
    expect(await splitWords(phone, '.meta')).toEqual([]);
    expect(await splitWords(phone, '.lead')).toEqual([]);
    await closePage(phone);
  });

  /** Signs in on the example and presses its Sign out button: the service's "signed out" page. */
  async function signOut(page: Page): Promise<void> {
    // The service's own signed-out page: RP-initiated logout confirmed on its page (the demo's button signs out
    // with an id_token_hint and comes straight back to the app instead).
    await signIn(page, running());
    await page.goto(`${running().url}/sentinel/api/account/${DEMO_ACCOUNT}/end_session`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => onPath(`/sentinel/api/account/${DEMO_ACCOUNT}/end_session`)(url) && url.search === '');
  }

  it('signed-out page: the same centred card', async () => {
    const page = await newPage();
    await signOut(page);
    expect(await page.locator('h1').textContent()).toBe('You are signed out');
    await expectCentredCard(page, DESKTOP);
    await expectBalancedCard(page);
    await saveScreenshot(page, 'signed-out');
    await closePage(page);
  });

  describe('axe-core: no serious or critical violation', () => {
    it('on the login page', async () => {
      const page = await newPage({ audit: true });
      await startSignIn(page, running().url);
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the login page with the wrong-password error', async () => {
      const page = await newPage({ audit: true });
      await startSignIn(page, running().url);
      await submitCredentials(page, running().username, 'wrong password');
      expect(await page.getByRole('alert').count()).toBe(1);
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the branded login page', async () => {
      const page = await newPage({ audit: true });
      await page.goto(brandedHost().authorizeURL());
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the login page of a phone', async () => {
      const page = await newPage({ audit: true, viewport: PHONE });
      await startSignIn(page, running().url);
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the 401 error page', async () => {
      const page = await newPage({ audit: true });
      await page.goto(`${running().url}/sentinel/api/account/${DEMO_ACCOUNT}/authorize?response_type=code&client_id=no-such-app`);
      expect(await page.locator('h1').textContent()).toBe('Unknown account or application');
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the signed-out page', async () => {
      const page = await newPage({ audit: true });
      await signOut(page);
      await expectNoSeriousViolations(page);
      await closePage(page);
    });

    it('on the 429 page', async () => {
      const page = await newPage({ audit: true });
      await throttle(page);
      expect(await page.locator('h1').textContent()).toBe('Too many attempts');
      await expectNoSeriousViolations(page);
      await closePage(page);
    });
  });
});
