/**
 * Step-up to `phishing-resistant` in a real Chromium, through Chrome's virtual authenticator (CDP): a user signed in
 * with a password is asked by the app for `acr_values=urn:sentinel:acr:phishing-resistant`; the password alone is no
 * longer enough and the login page says so, the passkey signs in, and the tokens say `phishing-resistant`.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CATALOGUES, type Messages } from '../../src/index.js';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, PASSWORD } from '../helpers/fixtures.js';
import { claimsOf } from '../helpers/jwt.js';
import { browserAvailable } from './chromium.js';
import { useChromiumAndHost } from './idp-host.js';
import { addVirtualAuthenticator } from './virtual-authenticator.js';

const en = BUNDLED_CATALOGUES.en as Messages;
const PHISHING_RESISTANT = 'urn:sentinel:acr:phishing-resistant';

describe.runIf(browserAvailable('browser: step-up to a passkey'))('browser: step-up to a passkey', () => {
  const { chromium, idp } = useChromiumAndHost();

  async function password(page: Page, username: string): Promise<void> {
    await page.getByLabel(en.username, { exact: true }).fill(username);
    await page.getByLabel(en.password, { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: en.signIn, exact: true }).click();
  }

  async function tokensFor(code: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${idp().url}/sentinel/api/account/${ACCOUNT}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT_ID, CLIENT_SECRET) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: `${idp().url}/callback` }).toString(),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  it('a password session asked for phishing-resistant signs in again with the passkey', async () => {
    const context = await chromium().newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const page = await context.newPage();
    try {
      await addVirtualAuthenticator(page);
      // A password sign-in, then the passkey offer: the user now has a passkey and a password session.
      await page.goto(idp().authorizeURL({ scope: 'openid' }));
      await password(page, 'alice-stepup');
      await page.waitForURL((url) => url.pathname.endsWith('/login/passkey/register'));
      await page.getByRole('button', { name: en.passkeyAdd }).click();
      await page.waitForURL((url) => url.pathname === '/callback');
      const first = await tokensFor(new URL(page.url()).searchParams.get('code') as string);
      expect(claimsOf(first.access_token as string).acr).toBe('urn:sentinel:acr:password');

      // The app asks for more: the session is below it, so the login page shows again.
      await page.goto(idp().authorizeURL({ scope: 'openid', acr_values: PHISHING_RESISTANT }));
      await page.waitForURL((url) => url.pathname.endsWith('/login'));
      // The password is right but not enough: the page says to use the passkey.
      await password(page, 'alice-stepup');
      await page.waitForLoadState('domcontentloaded');
      await expect(page.getByRole('alert').textContent()).resolves.toBe(en.stepUpPasskey);
      await page.getByRole('button', { name: en.passkeySignIn }).click();
      await page.waitForURL((url) => url.pathname === '/callback');
      const callback = new URL(page.url());
      expect(callback.searchParams.get('state')).toBe('browser-state');
      const stepped = await tokensFor(callback.searchParams.get('code') as string);
      for (const token of [stepped.access_token, stepped.id_token]) {
        const claims = claimsOf(token as string);
        expect(claims.acr).toBe(PHISHING_RESISTANT);
        expect(claims.amr).toEqual(expect.arrayContaining(['user', 'mfa']));
        expect((claims.amr as string[]).some((method) => method === 'hwk' || method === 'swk')).toBe(true);
      }
    } finally {
      await context.close();
    }
  });
});
