/**
 * The device flow's verification pages (RFC 8628 §3.3) in a real Chromium, in two languages (German, and Arabic
 * right to left): the code typed as a person would (lower case, no dash), a wrong code said in the page's language,
 * the sign-in on the login page, the confirmation naming the app and the code, and the device's poll then getting
 * its tokens. Every page passes axe-core with no serious or critical violation; screenshots of the entry and
 * confirmation pages are the documentation's (`docs/login-device-*.png`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toExpress } from '../../adapters/express/index.js';
import { BUNDLED_CATALOGUES, createSentinel, DEVICE_CODE_GRANT } from '../../src/index.js';
import { ACCOUNT, PASSWORD, SIGNING_KEY } from '../helpers/fixtures.js';
import { seriousViolations } from './axe.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { screenshotForDocs } from './docs-images.js';

const CLIENT_ID = 'acme-tv';
const APP_NAME = 'Acme TV';
const LANGUAGES = ['de', 'ar'] as const;

interface DeviceHost {
  url: string;
  close(): Promise<void>;
}

async function startDeviceHost(): Promise<DeviceHost> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const sentinel = createSentinel({
    issuer: url,
    keys: [SIGNING_KEY],
    apps: [{ accountId: ACCOUNT, clientId: CLIENT_ID, tokenEndpointAuthMethod: 'none', name: APP_NAME, grantTypes: [DEVICE_CODE_GRANT] }],
    users: { authenticate: async ({ username, password }) => (password === PASSWORD ? { id: `u-${username}` } : null) },
    deviceFlow: { interval: 1 },
    logger: { warn: () => {} },
  });
  const app = express();
  app.use(toExpress(sentinel));
  server.on('request', app);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.runIf(browserAvailable('browser: device verification pages'))('browser: device verification pages', () => {
  let browser: Browser | undefined;
  let host: DeviceHost | undefined;
  beforeAll(async () => {
    [browser, host] = await Promise.all([launchChromium(), startDeviceHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  function base(): string {
    if (host === undefined) throw new Error('host is not running');
    return `${host.url}/sentinel/api/account/${ACCOUNT}`;
  }

  async function newPage(locale: string): Promise<Page> {
    if (browser === undefined) throw new Error('Chromium is not running');
    // bypassCSP lets axe-core in past the pages' script-free CSP; the flow itself needs no script.
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      locale,
      bypassCSP: true,
      colorScheme: 'light',
      reducedMotion: 'reduce',
    });
    return context.newPage();
  }

  async function post(path: string, form: Record<string, string>): Promise<Record<string, unknown>> {
    const response = await fetch(`${base()}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  it.each(LANGUAGES)('%s: enter the code, sign in, see the app and the code, allow; the device gets its tokens', async (tag) => {
    const messages = BUNDLED_CATALOGUES[tag];
    if (messages === undefined) throw new Error(tag);
    const codes = await post('/device_authorization', { client_id: CLIENT_ID });
    const userCode = String(codes.user_code);
    const page = await newPage(tag);
    try {
      await page.goto(String(codes.verification_uri));
      expect(await page.getAttribute('html', 'lang')).toBe(tag);
      expect(await page.getAttribute('html', 'dir')).toBe(tag === 'ar' ? 'rtl' : null);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.deviceTitle);
      expect(await seriousViolations(page), `${tag} code entry`).toEqual([]);
      await screenshotForDocs(page, `login-device-${tag}`);

      // A wrong code first: said in the page's language, and the field is marked invalid.
      await page.getByLabel(messages.deviceCodeLabel, { exact: true }).fill('bcdf ghjk');
      await page.getByRole('button', { name: messages.deviceContinue, exact: true }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toBe(messages.deviceCodeWrong);
      expect(await page.getAttribute('#user_code', 'aria-invalid')).toBe('true');
      expect(await seriousViolations(page), `${tag} wrong code`).toEqual([]);

      // The right one, typed as people type it: lower case, no dash.
      await page.getByLabel(messages.deviceCodeLabel, { exact: true }).fill(userCode.replace('-', '').toLowerCase());
      await page.getByRole('button', { name: messages.deviceContinue, exact: true }).click();
      await page.waitForURL(/\/login\?interaction=/);
      await expect(page.getByText(APP_NAME).isVisible()).resolves.toBe(true);
      await page.getByLabel(messages.username, { exact: true }).fill(`viewer-${tag}`);
      await page.getByLabel(messages.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: messages.signIn, exact: true }).click();

      await page.waitForURL(/\/device\/confirm\?confirmation=/);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.deviceConfirmTitle);
      await expect(page.getByText(APP_NAME).isVisible()).resolves.toBe(true);
      await expect(page.getByText(userCode).isVisible()).resolves.toBe(true);
      expect(await seriousViolations(page), `${tag} confirmation`).toEqual([]);
      await screenshotForDocs(page, `login-device-confirm-${tag}`);

      expect(
        (await post('/token', { grant_type: DEVICE_CODE_GRANT, device_code: String(codes.device_code), client_id: CLIENT_ID })).error,
      ).toBe('authorization_pending');
      await page.getByRole('button', { name: messages.deviceAllow, exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.deviceApprovedTitle);
      expect(await seriousViolations(page), `${tag} done`).toEqual([]);

      // The pages allow no framing (clickjacking) and are not cached.
      const entry = await fetch(String(codes.verification_uri));
      expect(entry.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(entry.headers.get('x-frame-options')).toBe('DENY');

      await new Promise((resolve) => setTimeout(resolve, 1100));
      const tokens = await post('/token', { grant_type: DEVICE_CODE_GRANT, device_code: String(codes.device_code), client_id: CLIENT_ID });
      expect(tokens.token_type).toBe('Bearer');
    } finally {
      await page.context().close();
    }
  });

  it('deny: the device hears access_denied', async () => {
    const messages = BUNDLED_CATALOGUES.de;
    if (messages === undefined) throw new Error('de');
    const codes = await post('/device_authorization', { client_id: CLIENT_ID });
    const page = await newPage('de');
    try {
      await page.goto(String(codes.verification_uri_complete));
      await page.getByRole('button', { name: messages.deviceContinue, exact: true }).click();
      await page.getByLabel(messages.username, { exact: true }).fill('viewer-deny');
      await page.getByLabel(messages.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: messages.signIn, exact: true }).click();
      await page.waitForURL(/\/device\/confirm\?confirmation=/);
      await page.getByRole('button', { name: messages.deviceDeny, exact: true }).click();
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(messages.deviceDeniedTitle);
      expect(await seriousViolations(page), 'denied').toEqual([]);
      const answer = await post('/token', { grant_type: DEVICE_CODE_GRANT, device_code: String(codes.device_code), client_id: CLIENT_ID });
      expect(answer.error).toBe('access_denied');
    } finally {
      await page.context().close();
    }
  });
});
