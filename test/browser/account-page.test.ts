/**
 * The end user's account page in Chromium: a user signs in through the login page and back, sees where they are
 * signed in, their passkeys and their connected apps; ends another session (that browser is signed out), ends every
 * other one, adds a passkey with the browser's authenticator, disconnects an app (its refresh token stops), and
 * removes a passkey after signing in again with one; a sign-in left open past `account.maxSignInAge` signs in again
 * before either, and a page left open past it says why "Add a passkey" failed. A forged CSRF token shows the page's message and changes
 * nothing. Without JavaScript every form still works. axe on every page in English and in Arabic (right to left); screenshots of both for docs/.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT, CLIENT_ID, PASSWORD } from '../helpers/fixtures.js';
import { ACCOUNT_PAGE, type AccountHost, PHOTOS_CLIENT_ID, SEEDED_PASSKEYS, startAccountHost } from './account-host.js';
import { seriousViolations } from './axe.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { screenshotForDocs } from './docs-images.js';
import { addVirtualAuthenticator } from './virtual-authenticator.js';

const LOGIN = `/sentinel/api/account/${ACCOUNT}/login`;

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page), page.url()).toEqual([]);
}

/** Types alice's password into the login page, whatever its language (by field name, not label). */
async function passwordStep(page: Page): Promise<void> {
  await page.waitForURL((url) => url.pathname === LOGIN);
  await page.locator('input[name="username"]').fill('alice');
  await page.locator('input[name="password"]').fill(PASSWORD);
  await page.locator('form:has(input[name="password"]) button.primary').click();
}

/** Opens the account page without a session: the login page, then back on the account page. */
async function signInToAccountPage(page: Page, host: AccountHost): Promise<void> {
  await page.goto(`${host.url}${ACCOUNT_PAGE}`);
  await passwordStep(page);
  await page.waitForURL((url) => url.pathname === ACCOUNT_PAGE);
}

/** Signs in at an app in this browser (a code without a login page when the browser already has a session). */
async function connect(page: Page, host: AccountHost, clientId: string): Promise<string> {
  await page.goto(host.authorizeURL(clientId));
  await page.waitForURL((url) => url.pathname === '/callback' || url.pathname === LOGIN);
  if (new URL(page.url()).pathname === LOGIN) {
    await passwordStep(page);
    await page.waitForURL((url) => url.pathname === '/callback');
  }
  return host.exchange(clientId, new URL(page.url()).searchParams.get('code') ?? '');
}

/** Whether this browser's session is still live: the account page shows itself rather than the login page. */
async function signedIn(page: Page, host: AccountHost): Promise<boolean> {
  await page.goto(`${host.url}${ACCOUNT_PAGE}`);
  return new URL(page.url()).pathname === ACCOUNT_PAGE;
}

/** Submits a hand-made form from the page (what a forged post looks like); resolves with the answer's status. */
async function postFromPage(page: Page, path: string, fields: Record<string, string>): Promise<number> {
  const answer = page.waitForResponse((response) => new URL(response.url()).pathname === path && response.request().method() === 'POST');
  await page.evaluate(
    ({ path, fields }) => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = path;
      for (const [name, value] of Object.entries(fields)) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    },
    { path, fields },
  );
  const response = await answer;
  await page.waitForURL((url) => url.pathname === path, { waitUntil: 'domcontentloaded' });
  return response.status();
}

const passkeyIds = (host: AccountHost): string[] =>
  host.passkeys
    .list({ accountId: ACCOUNT, userId: 'u-alice' })
    .map((passkey) => passkey.id)
    .sort();

describe.runIf(browserAvailable('browser: account page'))('browser: account page', () => {
  let browser: Browser;
  let host: AccountHost;
  let laptop: BrowserContext;
  let page: Page;
  const others: BrowserContext[] = [];

  async function newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1100, height: 900 }, colorScheme: 'light', ...options });
    others.push(context);
    return context;
  }

  beforeAll(async () => {
    [browser, host] = await Promise.all([launchChromium(), startAccountHost()]);
    // bypassCSP only so that axe can be injected; the page's own headers are checked on its responses.
    laptop = await browser.newContext({ locale: 'en-US', viewport: { width: 1100, height: 900 }, colorScheme: 'light', bypassCSP: true });
    page = await laptop.newPage();
  });
  afterAll(async () => {
    await Promise.all(others.map((context) => context.close()));
    await browser?.close();
    await host?.close();
  });

  let messengerToken: string;

  it('signs in through the login page and shows the sessions, passkeys and connected apps under the login page headers', async () => {
    const phone = await (await newContext()).newPage();
    await signInToAccountPage(phone, host);
    await signInToAccountPage(page, host);
    messengerToken = await connect(page, host, CLIENT_ID);
    const response = await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    const headers = response?.headers() ?? {};
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(headers['content-security-policy']).toMatch(/script-src 'nonce-/);
    expect(await page.getByRole('heading', { name: 'Your account', level: 1 }).count()).toBe(1);
    expect(await page.getByText('Signed in as Alice Martin.').count()).toBe(1);
    const sessions = page.locator('#sessions li');
    expect(await sessions.count()).toBe(2);
    expect(await sessions.first().textContent()).toContain('This device');
    expect(await sessions.first().textContent()).toContain('Apps: Acme Messenger');
    expect(await page.locator('#passkeys li').count()).toBe(SEEDED_PASSKEYS.length);
    const apps = page.locator('#apps li');
    expect(await apps.count()).toBe(1);
    expect(await apps.first().textContent()).toContain('Acme Messenger');
    expect(await apps.first().textContent()).toContain('Can use: openid');
    await expectAccessible(page);
    await screenshotForDocs(page, 'account-en');
  });

  it('ends the other session: that browser is signed out, this one is not', async () => {
    const phone = others[0]?.pages()[0] as Page;
    const other = page.locator('#sessions li').filter({ hasNotText: 'This device' });
    expect(await other.count()).toBe(1);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('status').filter({ hasText: 'That session was signed out.' }).waitFor();
    expect(await page.locator('#sessions li').count()).toBe(1);
    expect(await signedIn(phone, host)).toBe(false);
    expect(await signedIn(page, host)).toBe(true);
    expect(host.events.some((event) => event.type === 'session.ended')).toBe(true);
  });

  it('ends every other session and keeps this one', async () => {
    const tablet = await (await newContext()).newPage();
    const desktop = await (await newContext()).newPage();
    await signInToAccountPage(tablet, host);
    await signInToAccountPage(desktop, host);
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.locator('#sessions li').count()).toBe(3);
    await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await page.getByRole('status').filter({ hasText: 'Every other session was signed out.' }).waitFor();
    expect(await page.locator('#sessions li').count()).toBe(1);
    expect([await signedIn(tablet, host), await signedIn(desktop, host), await signedIn(page, host)]).toEqual([false, false, true]);
  });

  it("adds a passkey with the browser's authenticator, once the sign-in is as strong as the user's own", async () => {
    await addVirtualAuthenticator(page);
    // Signed in with a password while alice has a passkey: the page offers a stronger sign-in instead of the button.
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.locator('#passkey-step-up').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
    // Without a passkey (nor a TOTP secret), the password is the strongest sign-in she has.
    for (const id of passkeyIds(host)) await host.passkeys.remove?.({ accountId: ACCOUNT, userId: 'u-alice', credentialId: id });
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'The passkey was added.' }).waitFor();
    expect(passkeyIds(host)).toHaveLength(1);
    expect(await page.locator('#passkeys li').count()).toBe(1);
    expect(host.events.some((event) => event.type === 'passkey.added')).toBe(true);
  });

  it('disconnects an app: its tokens stop, the other app keeps its own', async () => {
    const photosToken = await connect(page, host, PHOTOS_CLIENT_ID);
    const live = await host.refresh(CLIENT_ID, messengerToken);
    expect(live.status).toBe(200);
    messengerToken = live.refreshToken as string;
    const accessToken = live.accessToken as string;
    expect((await host.sentinel.checkBearer(`Bearer ${accessToken}`)).ok).toBe(true);
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.locator('#apps li').count()).toBe(2);
    await page.locator(`#apps li[data-client="${CLIENT_ID}"]`).getByRole('button', { name: 'Disconnect' }).click();
    await page.getByRole('status').filter({ hasText: 'The app was disconnected' }).waitFor();
    expect(await page.locator(`#apps li[data-client="${CLIENT_ID}"]`).count()).toBe(0);
    expect(await host.refresh(CLIENT_ID, messengerToken)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await host.sentinel.checkBearer(`Bearer ${accessToken}`)).ok).toBe(false);
    expect((await host.refresh(PHOTOS_CLIENT_ID, photosToken)).status).toBe(200);
  });

  it("removes a passkey once the sign-in is as strong as the user's own: the step-up link, the passkey, then Remove", async () => {
    // Alice has the passkey the browser made (the test before) and a seeded one; her session is a password's.
    const [seeded] = SEEDED_PASSKEYS as [string];
    host.passkeys.save({ accountId: ACCOUNT, userId: 'u-alice', passkey: { id: seeded, publicKey: 'pQE', counter: 0, createdAt: 1 } });
    const own = passkeyIds(host).filter((id) => id !== seeded);
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    await page.locator('#passkey-step-up').click();
    await page.waitForURL((url) => url.pathname === LOGIN);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL((url) => url.pathname === ACCOUNT_PAGE);
    await page.locator(`#passkeys li[data-passkey="${seeded}"]`).getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').filter({ hasText: 'The passkey was removed.' }).waitFor();
    expect(passkeyIds(host)).toEqual(own);
    expect(await page.locator('#passkeys li').count()).toBe(1);
    expect(host.events.some((event) => event.type === 'passkey.removed')).toBe(true);
    // The password session this sign-in replaced is carried by it (the same user signing in again in this browser):
    // it is listed as this browser's one session, not as another device to sign out, and signing out here ends both.
    expect(await page.locator('#sessions li').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Sign out everywhere else' }).count()).toBe(0);
  });

  it('asks a sign-in left open past account.maxSignInAge to sign in again before a passkey is added or removed', async () => {
    // Signed in with the passkey just now (the test before): Remove is there. Then the browser is left for 11 minutes.
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(1);
    const session = (await laptop.cookies()).find((cookie) => cookie.name === 'sentinel_session');
    await host.ageSignIn(session?.value as string, 11 * 60);
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
    const before = passkeyIds(host);
    const csrf = (await page.locator('input[name="csrf_token"]').first().getAttribute('value')) as string;
    const fields = { csrf_token: csrf, action: 'remove-passkey', credential_id: before[0] as string };
    expect(await postFromPage(page, ACCOUNT_PAGE, fields)).toBe(403);
    expect(await page.locator('main').textContent()).toContain('Sign in again to add or remove a passkey');
    expect(passkeyIds(host)).toEqual(before);
    expect(host.events.some((event) => event.type === 'account.denied' && event.reason.includes('maxSignInAge'))).toBe(true);
    // The link signs in again (her passkey: her strongest) and comes back with the buttons.
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    await page.getByRole('link', { name: 'Sign in again to add or remove a passkey' }).click();
    await page.waitForURL((url) => url.pathname === LOGIN);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL((url) => url.pathname === ACCOUNT_PAGE);
    expect(await page.getByRole('button', { name: 'Remove' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(1);
    await expectAccessible(page);
  });

  it('says so when "Add a passkey" is refused because the sign-in grew too old while the page was open', async () => {
    // Signed in with a passkey just now (the test before): the button is there. The page stays open 11 minutes.
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    const alert = page.locator('#passkey-error');
    expect(await alert.isVisible()).toBe(false);
    const session = (await laptop.cookies()).find((cookie) => cookie.name === 'sentinel_session');
    await host.ageSignIn(session?.value as string, 11 * 60);
    const options = page.waitForResponse((response) => response.request().method() === 'POST' && response.url().includes('/passkey'));
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    expect((await options).status()).toBe(403);
    await alert.waitFor({ state: 'visible', timeout: 5000 });
    expect(await alert.getAttribute('role')).toBe('alert');
    expect(await alert.textContent()).toBe(
      'The passkey could not be added. Reload this page and try again: you may be asked to sign in again first.',
    );
    expect(await page.getByRole('button', { name: 'Add a passkey' }).isEnabled()).toBe(true);
    await expectAccessible(page);
    // Reloaded, the page offers the new sign-in instead of the button.
    await page.reload();
    expect(await page.getByRole('link', { name: 'Sign in again to add or remove a passkey' }).count()).toBe(1);
  });

  it('a forged or missing CSRF token shows the message, changes nothing, and is audited', async () => {
    await page.goto(`${host.url}${ACCOUNT_PAGE}`);
    const before = passkeyIds(host);
    const [kept] = before;
    for (const csrf of [{ csrf_token: 'forged' }, {}] as Record<string, string>[]) {
      const status = await postFromPage(page, ACCOUNT_PAGE, { ...csrf, action: 'remove-passkey', credential_id: kept as string });
      expect(status).toBe(403);
      expect(await page.locator('main').textContent()).toContain('The page is out of date. Nothing was changed; try again.');
    }
    expect(passkeyIds(host)).toEqual(before);
    const denied = host.events.flatMap((event) => (event.type === 'account.denied' ? [event.reason] : []));
    expect(denied.slice(-2)).toEqual(['wrong CSRF token', 'wrong CSRF token']);
    await expectAccessible(page);
  });

  it('works without JavaScript: the forms post, and the passkey button stays hidden', async () => {
    const plain = await (await newContext({ javaScriptEnabled: false })).newPage();
    await signInToAccountPage(plain, host);
    expect(await plain.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
    const sessions = plain.locator('#sessions li');
    expect(await sessions.count()).toBe(2);
    await sessions.filter({ hasNotText: 'This device' }).getByRole('button', { name: 'Sign out' }).click();
    await plain.getByRole('status').filter({ hasText: 'That session was signed out.' }).waitFor();
    expect(await signedIn(page, host)).toBe(false);
    expect(await plain.locator('#sessions li').count()).toBe(1);
  });

  it('in Arabic: right to left, translated, axe-clean, on the page and on the "not signed in" page', async () => {
    const context = await newContext({ locale: 'ar-EG', bypassCSP: true });
    const arabic = await context.newPage();
    await arabic.goto(`${host.url}${ACCOUNT_PAGE}?signin=cancelled`);
    expect(await arabic.locator('html').getAttribute('dir')).toBe('rtl');
    expect(await arabic.getByText('لم تسجّل الدخول.').count()).toBe(1);
    await expectAccessible(arabic);
    await signInToAccountPage(arabic, host);
    await connect(arabic, host, PHOTOS_CLIENT_ID);
    await arabic.goto(`${host.url}${ACCOUNT_PAGE}`);
    expect(await arabic.locator('html').getAttribute('lang')).toBe('ar');
    expect(await arabic.locator('html').getAttribute('dir')).toBe('rtl');
    expect(await arabic.getByRole('heading', { name: 'حسابك', level: 1 }).count()).toBe(1);
    expect(await arabic.getByRole('heading', { name: 'التطبيقات المتصلة' }).count()).toBe(1);
    await expectAccessible(arabic);
    await screenshotForDocs(arabic, 'account-ar');
  });

  it('the "not signed in" page in English is axe-clean too', async () => {
    const context = await newContext({ bypassCSP: true });
    const visitor = await context.newPage();
    await visitor.goto(`${host.url}${ACCOUNT_PAGE}?signin=cancelled`);
    expect(await visitor.getByText('You are not signed in.').count()).toBe(1);
    await expectAccessible(visitor);
  });
});
