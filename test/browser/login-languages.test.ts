/**
 * The login page's languages in a real Chromium: each bundled language chosen by `ui_locales` (OpenID Connect
 * Core §3.1.2.1) and by the browser's `Accept-Language` (RFC 9110 §12.5.4), `<html lang>` and right-to-left
 * layout for Arabic, and an axe-core audit with no serious or critical violation on every page (login, wrong
 * password, TOTP step, passkey offer, 429, error, signed out) in every bundled language. Screenshots of each.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CATALOGUES } from '../../src/index.js';
import { PASSWORD } from '../helpers/fixtures.js';
import { seriousViolations } from './axe.js';
import { browserAvailable } from './chromium.js';
import { screenshotForDocs } from './docs-images.js';
import { APP_NAME, useChromiumAndHost } from './idp-host.js';

const LANGUAGES = Object.keys(BUNDLED_CATALOGUES);

describe.runIf(browserAvailable('browser: login page languages'))('browser: login page languages', () => {
  const { chromium, idp } = useChromiumAndHost();

  async function newPage(options: { locale?: string; audit?: boolean } = {}): Promise<Page> {
    const context = await chromium().newContext({
      viewport: { width: 1280, height: 800 },
      locale: options.locale ?? 'en-US',
      bypassCSP: options.audit === true,
      colorScheme: 'light',
      reducedMotion: 'reduce',
    });
    return context.newPage();
  }

  async function expectLanguage(page: Page, tag: string): Promise<void> {
    expect(await page.getAttribute('html', 'lang')).toBe(tag);
    expect(await page.getAttribute('html', 'dir')).toBe(tag === 'ar' ? 'rtl' : null);
  }

  async function audit(page: Page, what: string): Promise<void> {
    expect(await seriousViolations(page), what).toEqual([]);
  }

  it.each(LANGUAGES)('%s: chosen by ui_locales over a different Accept-Language', async (tag) => {
    const messages = BUNDLED_CATALOGUES[tag];
    if (messages === undefined) throw new Error(tag);
    const page = await newPage({ locale: tag === 'de' ? 'fr' : 'de' });
    try {
      await page.goto(idp().authorizeURL({ ui_locales: `${tag} en` }));
      await expectLanguage(page, tag);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.signInTitle);
      await expect(page.getByLabel(messages.username, { exact: true }).isVisible()).resolves.toBe(true);
      await expect(page.getByText(APP_NAME).isVisible()).resolves.toBe(true);
      if (tag === 'ar') {
        // Right to left: the form's labels start at the card's right edge.
        const card = await page.locator('.card').boundingBox();
        const label = await page.locator('label[for="username"]').boundingBox();
        if (card === null || label === null) throw new Error('not rendered');
        expect(card.x + card.width - (label.x + label.width)).toBeLessThan(40);
      }
      await screenshotForDocs(page, `login-${tag}`);
    } finally {
      await page.context().close();
    }
  });

  it.each(LANGUAGES)('%s: chosen by Accept-Language, and every page passes axe', async (tag) => {
    const messages = BUNDLED_CATALOGUES[tag];
    if (messages === undefined) throw new Error(tag);
    const page = await newPage({ locale: tag, audit: true });
    try {
      await page.goto(idp().authorizeURL());
      await expectLanguage(page, tag);
      await audit(page, `${tag} login`);

      // Its own user per language: the wrong password below stays counted for the throttle window (a right
      // password gives back only its own slot), so one shared name would be locked by the third language.
      await page.getByLabel(messages.username, { exact: true }).fill(`alice-${tag}`);
      await page.getByLabel(messages.password, { exact: true }).fill('wrong');
      await page.getByRole('button', { name: messages.signIn, exact: true }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toBe(messages.wrongCredentials);
      await audit(page, `${tag} wrong password`);

      // Passkey offer after a right password (this user has no passkey yet), then "Not now".
      await page.getByLabel(messages.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: messages.signIn, exact: true }).click();
      await page.waitForURL((url) => url.pathname.endsWith('/login/passkey/register'));
      await expectLanguage(page, tag);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.passkeyOfferTitle);
      await audit(page, `${tag} passkey offer`);
      if (tag === 'en') await screenshotForDocs(page, 'login-passkey-offer');
      await page.getByRole('button', { name: messages.passkeySkip }).click();
      await page.waitForURL((url) => url.pathname === '/callback');

      // TOTP step (bob).
      await page.context().clearCookies();
      await page.goto(idp().authorizeURL());
      await page.getByLabel(messages.username, { exact: true }).fill('bob');
      await page.getByLabel(messages.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: messages.signIn, exact: true }).click();
      await page.waitForURL((url) => url.pathname.endsWith('/login/totp'));
      await expectLanguage(page, tag);
      await audit(page, `${tag} TOTP step`);
      await page.getByText(messages.recoveryToggle).click();
      await audit(page, `${tag} TOTP step with recovery open`);

      // 429: three wrong passwords for one name, then the throttle's page.
      await page.goto(idp().authorizeURL());
      for (let attempt = 0; attempt < 4; attempt += 1) {
        await page.getByLabel(messages.username, { exact: true }).fill(`locked-${tag}`);
        await page.getByLabel(messages.password, { exact: true }).fill('wrong');
        const next = page.waitForEvent('domcontentloaded');
        await page.getByRole('button', { name: messages.signIn, exact: true }).click();
        await next;
        if ((await page.getByRole('heading', { level: 1 }).textContent()) === messages.errorTooManyAttempts) break;
      }
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.errorTooManyAttempts);
      await expectLanguage(page, tag);
      await audit(page, `${tag} 429`);

      // Error page: an unknown application.
      await page.goto(idp().authorizeURL({ client_id: 'nobody' }));
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.errorUnknown);
      await expectLanguage(page, tag);
      await audit(page, `${tag} error`);

      // Signed out: a same-origin logout form.
      const signedOut = page.waitForURL((url) => url.pathname.endsWith('/logout'));
      await page.evaluate(
        (action) => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = action;
          document.body.append(form);
          form.submit();
        },
        `${new URL(idp().authorizeURL()).pathname.replace(/authorize$/, 'logout')}`,
      );
      await signedOut;
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.signedOutHeading);
      await expectLanguage(page, tag);
      await audit(page, `${tag} signed out`);
    } finally {
      await page.context().close();
    }
  });
});
