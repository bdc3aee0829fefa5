/**
 * Names on the pages, as Chromium lays them out: an app named `Acme (beta) Inc.` on the Arabic login page keeps
 * its final full stop after "Inc" (not `.Acme (beta) Inc`: a neutral at the end of a Latin name in a right-to-left
 * sentence takes the sentence's direction), and a user name that opens a right-to-left override
 * (U+202E, which only app names are refused for) reverses itself only, not the sentence that goes on after it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderAccountHtml } from '../../src/account/account-html.js';
import { renderLoginHtml } from '../../src/authorize/pages/login-html.js';
import { contextOf } from '../../src/http/context.js';
import { ar } from '../../src/i18n/ar.js';
import { en } from '../../src/i18n/en.js';
import { makeSentinel } from '../helpers/fixtures.js';
import { browserAvailable, launchChromium } from './chromium.js';

/** The left edges of the characters at `indexes` of the first text node under `selector`. */
function charactersX(page: Page, selector: string, text: string, indexes: number[]): Promise<number[]> {
  return page.evaluate(
    ({ selector, text, indexes }) => {
      const root = document.querySelector(selector);
      const walker = document.createTreeWalker(root ?? document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const start = node.textContent?.indexOf(text) ?? -1;
        if (start === -1) continue;
        return indexes.map((index) => {
          const range = document.createRange();
          range.setStart(node, start + index);
          range.setEnd(node, start + index + 1);
          return range.getBoundingClientRect().x;
        });
      }
      throw new Error(`${text} not under ${selector}`);
    },
    { selector, text, indexes },
  );
}

describe.runIf(browserAvailable('browser: bidi isolation'))('browser: bidi isolation of names', () => {
  let browser: Browser | undefined;
  const branding = contextOf(makeSentinel()).config.branding;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function show(html: string): Promise<Page> {
    if (browser === undefined) throw new Error('Chromium is not running');
    const page = await browser.newPage();
    await page.setContent(html);
    return page;
  }

  it('keeps "Acme (beta) Inc." whole on the Arabic login page', async () => {
    const view = {
      productName: 'Sign in',
      colors: {},
      appName: 'Acme (beta) Inc.',
      accountId: 'a',
      action: '/login',
      interactionId: 'i',
      csrfToken: 't',
      styleNonce: 'n',
      lang: 'ar',
      dir: 'rtl' as const,
      messages: ar,
    };
    const page = await show(renderLoginHtml(view, branding));
    try {
      // "Acme (beta) Inc.": A=0, (=5, )=10, I=12, c=14, .=15. Left to right inside the name, the stop last.
      const [a, open, close, inc, c, stop] = await charactersX(page, '.lead', 'Acme (beta) Inc.', [0, 5, 10, 12, 14, 15]);
      expect(open).toBeGreaterThan(a as number);
      expect(close).toBeGreaterThan(open as number);
      expect(inc).toBeGreaterThan(close as number);
      expect(stop).toBeGreaterThan(c as number);
    } finally {
      await page.close();
    }
  });

  it("contains a user name's override: the sentence after it reads on", async () => {
    const user = '\u202eAlice';
    const html = renderAccountHtml(
      {
        user,
        action: '/account',
        logoutAction: '/logout',
        csrfToken: 't',
        sessions: undefined,
        passkeys: undefined,
        apps: undefined,
        lang: 'en',
        dir: 'ltr',
        messages: { ...en, accountLead: 'Signed in as {user} to this account.' },
        styleNonce: 'n',
      },
      branding,
    );
    const page = await show(html);
    try {
      // " to this account.": the words after the name stay left to right and to its right.
      const [name] = await charactersX(page, '.lead', user, [1]);
      const [to, account] = await charactersX(page, '.lead', ' to this account.', [1, 9]);
      expect(to).toBeGreaterThan(name as number);
      expect(account).toBeGreaterThan(to as number);
    } finally {
      await page.close();
    }
  });
});
