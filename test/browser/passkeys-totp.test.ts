/**
 * Passkeys and the second factor in a real Chromium. A passkey is registered after a password sign-in and then
 * used to sign in, through Chrome's virtual authenticator (CDP `WebAuthn.enable` / `addVirtualAuthenticator`,
 * WebAuthn §7.1 and §7.2); the same passkey is refused on another account's login page. The TOTP step (RFC 6238)
 * takes a right code, refuses a wrong one and a replayed one. A refused ceremony start says so on the page. With JavaScript disabled the passkey button stays
 * hidden and the password form signs in. Screenshots: passkey prompt, TOTP step, phone width.
 */
import { generate } from 'otplib';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CATALOGUES, type Messages } from '../../src/index.js';
import { ACCOUNT, OTHER_ACCOUNT, PASSWORD } from '../helpers/fixtures.js';
import { browserAvailable } from './chromium.js';
import { saveScreenshot } from './artifacts.js';
import { screenshotForDocs } from './docs-images.js';
import { useChromiumAndHost } from './idp-host.js';
import { addVirtualAuthenticator } from './virtual-authenticator.js';

const en = BUNDLED_CATALOGUES.en as Messages;

describe.runIf(browserAvailable('browser: passkeys and TOTP'))('browser: passkeys and TOTP', () => {
  const { chromium, idp } = useChromiumAndHost();

  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    const context = await chromium().newContext({
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
      colorScheme: 'light',
      ...options,
    });
    return context.newPage();
  }

  async function password(page: Page, username: string): Promise<void> {
    await page.getByLabel(en.username, { exact: true }).fill(username);
    await page.getByLabel(en.password, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: en.signIn, exact: true }).click();
  }

  async function onCallback(page: Page): Promise<void> {
    await page.waitForURL((url) => url.pathname === '/callback' || url.pathname.endsWith('/login/passkey/register'));
    // A user without a passkey is offered one after the password (and TOTP) step: "Not now" goes on to the app.
    if (new URL(page.url()).pathname.endsWith('/login/passkey/register')) await page.getByRole('button', { name: en.passkeySkip }).click();
    await page.waitForURL((url) => url.pathname === '/callback');
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
  }

  it('registers a passkey after a password sign-in and signs in with it; another account refuses it', async () => {
    const page = await newPage();
    try {
      await addVirtualAuthenticator(page);
      await page.goto(idp().authorizeURL());
      await password(page, 'alice');
      await page.waitForURL((url) => url.pathname.endsWith('/login/passkey/register'));
      await page.getByRole('button', { name: en.passkeyAdd }).click();
      // Not onCallback(): the page is still the offer while the script registers the passkey, and "Not now" must
      // not be pressed in that moment; the script itself goes on to the app.
      await page.waitForURL((url) => url.pathname === '/callback');
      expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
      const saved = idp().passkeys.list({ accountId: ACCOUNT, userId: 'u-alice' });
      expect(saved).toHaveLength(1);
      // The virtual authenticator makes device-bound credentials (BE unset): kept, so no assertion can claim otherwise.
      expect(saved[0]?.backupEligible).toBe(false);

      // A new browser session: the login page offers the passkey, and the passkey alone signs in.
      await page.context().clearCookies();
      await page.goto(idp().authorizeURL());
      const button = page.getByRole('button', { name: en.passkeySignIn });
      await expect(button.isVisible()).resolves.toBe(true);
      await saveScreenshot(page, 'login-passkey');
      await button.click();
      await onCallback(page);
      expect(idp().passkeys.list({ accountId: ACCOUNT, userId: 'u-alice' })[0]?.counter).toBeGreaterThanOrEqual(saved[0]?.counter ?? 0);

      // The same passkey on the other account's login page (same issuer, so the same RP id): refused.
      await page.context().clearCookies();
      await page.goto(idp().authorizeURL({}, 'other'));
      await page.getByRole('button', { name: en.passkeySignIn }).click();
      await page.waitForLoadState('domcontentloaded');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(en.passkeyFailed);
      expect(new URL(page.url()).pathname).toBe(`/sentinel/api/account/${OTHER_ACCOUNT}/login/passkey`);
      // The password form is still there to use.
      await expect(page.getByLabel(en.password, { exact: true }).isVisible()).resolves.toBe(true);
    } finally {
      await page.context().close();
    }
  });

  it('says so when the service refuses to start a passkey ceremony, on the login page and on the offer', async () => {
    const page = await newPage();
    try {
      await addVirtualAuthenticator(page);
      // The options call refused (a sign-in throttled or out of date): without a word the button only came back.
      await page.route(/\/passkey(\/register)?\/options(\?|$)/, (route) =>
        route.fulfill({ status: 429, contentType: 'application/json', body: '{"error":"slow_down"}' }),
      );
      await page.goto(idp().authorizeURL());
      await page.getByRole('button', { name: en.passkeySignIn }).click();
      await page.getByRole('alert').filter({ hasText: en.passkeyFailed }).waitFor({ timeout: 5000 });
      await expect(page.getByRole('button', { name: en.passkeySignIn }).isEnabled()).resolves.toBe(true);
      await password(page, 'alice-refused');
      await page.waitForURL((url) => url.pathname.endsWith('/login/passkey/register'));
      await page.getByRole('button', { name: en.passkeyAdd }).click();
      await page.getByRole('alert').filter({ hasText: en.passkeyNotAdded }).waitFor({ timeout: 5000 });
      // "Not now" still goes on to the app.
      await onCallback(page);
    } finally {
      await page.context().close();
    }
  });

  it('TOTP step: a right code signs in, a wrong one and a replayed one are refused', async () => {
    const page = await newPage();
    try {
      await page.goto(idp().authorizeURL());
      await password(page, 'bob');
      await page.waitForURL((url) => url.pathname.endsWith('/login/totp'));
      await screenshotForDocs(page, 'login-totp');
      const right = await generate({ secret: idp().totpSecret });
      const wrong = right === '000000' ? '111111' : '000000';
      await page.getByLabel(en.totpLabel).fill(wrong);
      await page.getByRole('button', { name: en.totpVerify }).click();
      await page.waitForLoadState('domcontentloaded');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(en.totpWrong);
      await page.getByLabel(en.totpLabel).fill(right);
      await page.getByRole('button', { name: en.totpVerify }).click();
      await onCallback(page);

      // The same code again, in a new sign-in within its window: refused.
      await page.context().clearCookies();
      await page.goto(idp().authorizeURL());
      await password(page, 'bob');
      await page.waitForURL((url) => url.pathname.endsWith('/login/totp'));
      await page.getByLabel(en.totpLabel).fill(right);
      await page.getByRole('button', { name: en.totpVerify }).click();
      await page.waitForLoadState('domcontentloaded');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(en.totpWrong);
      expect(new URL(page.url()).pathname).toMatch(/\/login\/totp$/);

      // The recovery code (behind a disclosure that needs no script) signs in instead.
      await page.getByText(en.recoveryToggle).click();
      await page.getByLabel(en.recoveryLabel).fill(idp().recoveryCode);
      await page.getByRole('button', { name: en.recoveryUse }).click();
      await onCallback(page);
    } finally {
      await page.context().close();
    }
  });

  it('with JavaScript disabled the passkey button stays hidden and the password form signs in', async () => {
    const page = await newPage({ javaScriptEnabled: false });
    try {
      await page.goto(idp().authorizeURL({ ui_locales: 'fr' }));
      await expect(page.getByRole('button', { name: BUNDLED_CATALOGUES.fr?.passkeySignIn }).isVisible()).resolves.toBe(false);
      await page.getByLabel(BUNDLED_CATALOGUES.fr?.username ?? '', { exact: true }).fill('alice');
      await page.getByLabel(BUNDLED_CATALOGUES.fr?.password ?? '', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: BUNDLED_CATALOGUES.fr?.signIn, exact: true }).click();
      // Alice may already have a passkey from the first test; either way "Plus tard"/no offer ends at the app.
      await page.waitForURL((url) => url.pathname === '/callback' || url.pathname.endsWith('/login/passkey/register'));
      if (new URL(page.url()).pathname.endsWith('/login/passkey/register')) {
        await expect(page.getByRole('button', { name: BUNDLED_CATALOGUES.fr?.passkeyAdd }).isVisible()).resolves.toBe(false);
        await page.getByRole('button', { name: BUNDLED_CATALOGUES.fr?.passkeySkip }).click();
      }
      await onCallback(page);
    } finally {
      await page.context().close();
    }
  });

  it('phone width: no sideways scroll, passkey button in reach', async () => {
    const page = await newPage({ viewport: { width: 375, height: 667 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      await page.goto(idp().authorizeURL({ ui_locales: 'pt-BR' }));
      const widths = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.client);
      await expect(page.getByRole('button', { name: BUNDLED_CATALOGUES['pt-BR']?.passkeySignIn }).isVisible()).resolves.toBe(true);
      await screenshotForDocs(page, 'login-phone');
    } finally {
      await page.context().close();
    }
  });
});
