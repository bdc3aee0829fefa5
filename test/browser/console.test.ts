/**
 * The operator console in Chromium: an admin signs in through the service's login page, registers an app (the
 * secret shown once), rotates its secret with overlap, disables it (its tokens stop) and enables it, edits its
 * redirect URIs, deletes it, rotates and revokes a key after a confirmation, and reads the audit page. Every bad
 * input — a forged CSRF token, a viewer's change, another account, an unknown app or kid, a secret rotation on a
 * private_key_jwt app — shows its message, changes nothing and is audited. axe on every page in English and French.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, OTHER_ACCOUNT, PASSWORD } from '../helpers/fixtures.js';
import { seriousViolations } from './axe.js';
import { browserAvailable, launchChromium } from './chromium.js';
import { type ConsoleHost, KEY_BASED_CLIENT_ID, startConsoleHost } from './console-host.js';
import { screenshotForDocs } from './docs-images.js';

const APPS = `/console/${ACCOUNT}/apps`;

async function signInToConsole(page: Page, host: ConsoleHost, username: string): Promise<void> {
  await page.goto(`${host.url}/console/`);
  await page.getByLabel(/Account id|Identifiant du compte/).fill(ACCOUNT);
  await page.getByRole('button', { name: /Continue|Continuer/ }).click();
  await page.waitForURL((url) => url.pathname.endsWith('/login'));
  await page.getByLabel(/Username|Nom d.utilisateur/).fill(username);
  await page.getByLabel(/Password|Mot de passe/).fill(PASSWORD);
  await page.getByRole('button', { name: /^(Sign in|Se connecter)$/ }).click();
  await page.waitForURL((url) => url.pathname.startsWith('/console/'));
}

/** A client-credentials token of an app (the platform's consumer-bound app token), or the error status. */
async function appToken(host: ConsoleHost, clientId: string, secret: string): Promise<string | number> {
  const response = await fetch(`${host.url}/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`, {
    method: 'POST',
    headers: { authorization: basic(clientId, secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  if (response.status !== 200) return response.status;
  return ((await response.json()) as { access_token: string }).access_token;
}

async function accepted(host: ConsoleHost, token: string): Promise<boolean> {
  return (await host.sentinel.checkBearer(`Bearer ${token}`)).ok;
}

/** Submits a form built in the page (what a forged or hand-made request looks like), waits for the answer page. */
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
  // The answer page replaces the old one at the POST's address; nothing may read the page before it has.
  await page.waitForURL((url) => url.pathname === path, { waitUntil: 'domcontentloaded' });
  return response.status();
}

async function csrfOf(page: Page): Promise<string> {
  return page.locator('input[name="csrf"]').first().inputValue();
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page), page.url()).toEqual([]);
}

function deniedEvents(host: ConsoleHost): { reason: string; operator?: string | undefined; action: string }[] {
  return host.events.flatMap((event) => (event.type === 'console.denied' ? [event] : []));
}

/** An end user's sign-in at the main app in a browser of their own: a device session, and the code exchanged. */
async function userSignIn(host: ConsoleHost, browser: Browser): Promise<{ accessToken: string; context: BrowserContext }> {
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  const redirectUri = `${host.url}/callback`;
  await page.goto(
    `${host.url}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: redirectUri, state: 's', scope: 'openid' })}`,
  );
  await page.getByLabel('Username').fill('ursula');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/callback');
  const code = new URL(page.url()).searchParams.get('code') ?? '';
  const response = await fetch(`${host.url}/sentinel/api/account/${ACCOUNT}/token`, {
    method: 'POST',
    headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }).toString(),
  });
  expect(response.status).toBe(200);
  return { accessToken: ((await response.json()) as { access_token: string }).access_token, context };
}

describe.runIf(browserAvailable('browser: operator console'))('browser: operator console', () => {
  let browser: Browser;
  let host: ConsoleHost;
  let admin: BrowserContext;
  let page: Page;
  let registered: { clientId: string; secret: string };

  beforeAll(async () => {
    [browser, host] = await Promise.all([launchChromium(), startConsoleHost()]);
    // bypassCSP only so that axe can be injected; the flows' headers are checked on the responses.
    admin = await browser.newContext({ locale: 'en-US', bypassCSP: true });
    page = await admin.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });

  it('an admin signs in through the service and sees the apps page with the login page headers', async () => {
    const response = await page.goto(`${host.url}/console/`);
    expect(response?.headers()['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    await expectAccessible(page);
    await screenshotForDocs(page, 'console-sign-in');
    await signInToConsole(page, host, 'olga');
    expect(new URL(page.url()).pathname).toBe(APPS);
    const apps = await page.reload();
    expect(apps?.headers()['cache-control']).toBe('no-store');
    expect(apps?.headers()['content-security-policy']).toMatch(/style-src 'nonce-/);
    const cookie = (await admin.cookies()).find((entry) => entry.name === 'sentinel_console');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    await expect.poll(() => page.getByRole('cell', { name: 'Acme Messenger' }).count()).toBe(1);
    expect(host.events.some((event) => event.type === 'console.signed_in' && event.operator === 'u-olga')).toBe(true);
    await expectAccessible(page);
  });

  it('registers an app and shows its secret once', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Console-made app');
    await page.getByLabel('Redirect URIs').fill('https://made.example.com/cb');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'App registered' }).waitFor();
    const secret = (await page.locator('.secret').textContent()) ?? '';
    const clientId = (await page.locator('dd code').first().textContent()) ?? '';
    expect(secret).toMatch(/^[\w-]{40,}$/);
    registered = { clientId, secret };
    await expectAccessible(page);
    await screenshotForDocs(page, 'console-app-registered');
    expect(typeof (await appToken(host, clientId, secret))).toBe('string');
    // Shown once: the app's page does not have it.
    await page.goto(`${host.url}${APPS}/${clientId}`);
    expect(await page.content()).not.toContain(secret);
    expect(JSON.stringify(host.events)).not.toContain(secret);
    expect(
      host.events.some((event) => event.type === 'console.changed' && event.operator === 'u-olga' && event.action === 'app.register'),
    ).toBe(true);
  });

  it('lists, searches and pages the apps', async () => {
    await page.goto(`${host.url}${APPS}?q=console-made`);
    expect(await page.getByRole('cell', { name: 'Console-made app' }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: 'Acme Messenger' }).count()).toBe(0);
  });

  it('rotates the secret with overlap: the old one keeps working, the new one works', async () => {
    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    await expectAccessible(page);
    await screenshotForDocs(page, 'console-app');
    await page.getByLabel('Old secret keeps working for (seconds)').fill('3600');
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByRole('heading', { name: 'Secret rotated' }).waitFor();
    const fresh = (await page.locator('.secret').textContent()) ?? '';
    expect(fresh).not.toBe(registered.secret);
    expect(typeof (await appToken(host, registered.clientId, fresh))).toBe('string');
    expect(typeof (await appToken(host, registered.clientId, registered.secret))).toBe('string');
    // A reload of the secret's page sends the form again: refused, and the secret just shown stays the current one.
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(409);
    expect(await page.content()).not.toContain('class="secret"');
    const rotations = host.events.filter((event) => event.type === 'app.secret_rotated' && event.clientId === registered.clientId);
    expect(rotations).toHaveLength(1);
    expect(typeof (await appToken(host, registered.clientId, fresh))).toBe('string');
    registered = { ...registered, secret: fresh };
  });

  it('disables the app (its tokens stop) and enables it again', async () => {
    const token = await appToken(host, registered.clientId, registered.secret);
    expect(typeof token).toBe('string');
    expect(await accepted(host, token as string)).toBe(true);
    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('Done.', { exact: true }).waitFor();
    expect(await page.getByText('disabled', { exact: true }).count()).toBe(1);
    expect(await accepted(host, token as string)).toBe(false);
    expect(await appToken(host, registered.clientId, registered.secret)).toBe(401);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByText('Done.', { exact: true }).waitFor();
    expect(typeof (await appToken(host, registered.clientId, registered.secret))).toBe('string');
  });

  it('edits the redirect URIs; a wrong one is refused and changes nothing', async () => {
    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    await page.getByRole('textbox', { name: 'Redirect URIs' }).fill('not a uri');
    await page.getByRole('button', { name: 'Save redirect URIs' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/^Not accepted: /);
    expect(deniedEvents(host).at(-1)).toMatchObject({ reason: 'invalid_input', operator: 'u-olga' });
    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    expect(await page.getByRole('textbox', { name: 'Redirect URIs' }).inputValue()).toBe('https://made.example.com/cb');
    await page.getByRole('textbox', { name: 'Redirect URIs' }).fill('https://made.example.com/cb\nhttps://made.example.com/other');
    await page.getByRole('button', { name: 'Save redirect URIs' }).click();
    await page.getByText('Done.', { exact: true }).waitFor();
    expect(await page.getByText('https://made.example.com/other').count()).toBeGreaterThan(0);
  });

  it('refuses a secret rotation on a private_key_jwt app, an unknown app, a forged CSRF token and another account', async () => {
    // The page does not offer the rotation to an app without a secret; a rotation posted anyway is refused.
    await page.goto(`${host.url}${APPS}/${KEY_BASED_CLIENT_ID}`);
    expect(await page.getByRole('button', { name: 'Rotate the secret' }).count()).toBe(0);
    const rotated = await postFromPage(page, `${APPS}/${KEY_BASED_CLIENT_ID}/rotate-secret`, { csrf: await csrfOf(page), overlap: '0' });
    expect(rotated).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('private_key_jwt');
    expect(deniedEvents(host).at(-1)).toMatchObject({ reason: 'key_based_app', operator: 'u-olga' });

    const missing = await page.goto(`${host.url}${APPS}/no-such-app`);
    expect(missing?.status()).toBe(404);
    expect(await page.getByRole('alert').textContent()).toContain('There is no app no-such-app');

    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    const forged = await postFromPage(page, `${APPS}/${registered.clientId}/delete`, { csrf: 'forged' });
    expect(forged).toBe(403);
    expect(await page.getByRole('alert').textContent()).toContain('did not come from this console');
    const missingToken = await postFromPage(page, `${APPS}/${registered.clientId}/disable`, {});
    expect(missingToken).toBe(403);
    expect(
      deniedEvents(host)
        .slice(-2)
        .map((event) => event.reason),
    ).toEqual(['csrf', 'csrf']);
    expect(typeof (await appToken(host, registered.clientId, registered.secret))).toBe('string');

    const other = await page.goto(`${host.url}/console/${OTHER_ACCOUNT}/apps`);
    expect(other?.status()).toBe(403);
    expect(await page.getByRole('alert').textContent()).toContain(`signed in for account ${ACCOUNT}`);
    await page.goto(`${host.url}${APPS}`);
    const csrf = await csrfOf(page);
    expect(await postFromPage(page, `/console/${OTHER_ACCOUNT}/apps/${CLIENT_ID}/disable`, { csrf })).toBe(403);
    expect(
      deniedEvents(host)
        .slice(-2)
        .map((event) => event.reason),
    ).toEqual(['account', 'account']);
  });

  it('rotates the keys, and revokes one after a confirmation', async () => {
    await page.goto(`${host.url}/console/${ACCOUNT}/keys`);
    await expectAccessible(page);
    const before = await page.locator('tbody tr').count();
    expect(await page.getByRole('cell', { name: 'published, not signing yet' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Rotate the keys' }).click();
    await page.getByText('Done.', { exact: true }).waitFor();
    // One new key per algorithm of the ring, published before it signs.
    const pending = await page.getByRole('cell', { name: 'published, not signing yet' }).count();
    expect(pending).toBeGreaterThan(0);
    expect(await page.locator('tbody tr').count()).toBe(before + pending);
    await screenshotForDocs(page, 'console-keys');
    const signing = page
      .locator('tbody tr')
      .filter({ has: page.getByRole('cell', { name: 'signing', exact: true }) })
      .first();
    const kid = (await signing.locator('code').textContent()) ?? '';
    await signing.getByRole('link', { name: /Revoke/ }).click();
    await page.getByRole('heading', { name: `Revoke key ${kid}?` }).waitFor();
    await expectAccessible(page);
    await screenshotForDocs(page, 'console-key-revoke');
    expect(host.sentinel.jwks().keys.some((key) => key.kid === kid)).toBe(true);
    await page.getByRole('button', { name: 'Revoke the key' }).click();
    await page.getByText('Done.', { exact: true }).waitFor();
    const revoked = page.locator('tbody tr').filter({ has: page.getByText(kid, { exact: true }) });
    expect(await revoked.getByRole('cell', { name: 'revoked', exact: true }).count()).toBe(1);
    await expect.poll(() => host.sentinel.jwks().keys.some((key) => key.kid === kid)).toBe(false);
    expect(host.events.some((event) => event.type === 'console.changed' && event.action === 'keys.revoke' && event.target === kid)).toBe(
      true,
    );

    const unknown = await page.goto(`${host.url}/console/${ACCOUNT}/keys/no-such-kid/revoke`);
    expect(unknown?.status()).toBe(404);
    expect(deniedEvents(host).at(-1)).toMatchObject({ reason: 'unknown_kid' });
  });

  it('reads the audit page, filtered by type and app', async () => {
    await page.goto(`${host.url}/console/${ACCOUNT}/audit`);
    expect(await page.getByText('only this instance’s recent events').count()).toBe(1);
    await page.getByLabel('Event type').fill('console.changed');
    await page.getByLabel('Client id').fill(registered.clientId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.searchParams.get('type') === 'console.changed');
    const types = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(types.length).toBeGreaterThan(2);
    expect(new Set(types)).toEqual(new Set(['console.changed']));
    expect(await page.locator('tbody').textContent()).toContain('operator=u-olga');
    await expectAccessible(page);
    await screenshotForDocs(page, 'console-audit');
  });

  it('deletes the app', async () => {
    await page.goto(`${host.url}${APPS}/${registered.clientId}`);
    await page.getByRole('button', { name: 'Delete the app' }).click();
    await page.waitForURL((url) => url.pathname === APPS);
    expect(await page.getByRole('cell', { name: 'Console-made app' }).count()).toBe(0);
    expect(await appToken(host, registered.clientId, registered.secret)).toBe(401);
  });

  it("ends one of a user's sessions, then all of them: their tokens stop", async () => {
    const first = await userSignIn(host, browser);
    const second = await userSignIn(host, browser);
    try {
      expect(await accepted(host, first.accessToken)).toBe(true);
      await page.goto(`${host.url}/console/${ACCOUNT}/sessions`);
      await page.getByLabel('User id').fill('u-ursula');
      await page.getByRole('button', { name: 'Find sessions' }).click();
      await page.waitForURL((url) => url.searchParams.get('user') === 'u-ursula');
      expect(await page.locator('tbody tr').count()).toBe(2);
      expect(await page.locator('tbody').textContent()).toContain(CLIENT_ID);
      await expectAccessible(page);
      await screenshotForDocs(page, 'console-sessions');
      await page.locator('tbody tr').first().getByRole('button', { name: /End/ }).click();
      await page.getByText('Done.', { exact: true }).waitFor();
      expect(await page.locator('tbody tr').count()).toBe(1);
      const stillAccepted = [await accepted(host, first.accessToken), await accepted(host, second.accessToken)];
      expect(stillAccepted.filter(Boolean)).toHaveLength(1);
      await page.getByRole('button', { name: 'End all sessions of this user' }).click();
      await page.getByText('Done.', { exact: true }).waitFor();
      expect(await page.getByText('This user has no session.').count()).toBe(1);
      expect(await accepted(host, first.accessToken)).toBe(false);
      expect(await accepted(host, second.accessToken)).toBe(false);
      expect(
        host.events.filter(
          (event) => event.type === 'console.changed' && event.action.startsWith('session.') && event.target === 'u-ursula',
        ),
      ).toHaveLength(2);
    } finally {
      await Promise.all([first.context.close(), second.context.close()]);
    }
  });

  it('a viewer sees every page and is refused every change, with nothing changed', async () => {
    const context = await browser.newContext({ locale: 'en-US', bypassCSP: true });
    try {
      const viewer = await context.newPage();
      await signInToConsole(viewer, host, 'victor');
      expect(await viewer.getByText('your role is viewer').count()).toBe(1);
      expect(await viewer.getByRole('button', { name: 'Register' }).count()).toBe(0);
      const csrf = await csrfOf(viewer);
      const keysBefore = JSON.stringify(host.sentinel.jwks());
      // A live session of an end user, so that refusing to end it is seen to change nothing.
      const user = await userSignIn(host, browser);
      await user.context.close();
      const ursulaSid = (await host.sentinel.listSessions({ accountId: ACCOUNT, userId: 'u-ursula' }))[0]?.sid ?? '';
      expect(ursulaSid).not.toBe('');
      const attempts: [string, Record<string, string>][] = [
        [`${APPS}`, { name: 'x', redirect_uris: 'https://x.example.com/cb', auth: 'client_secret_basic' }],
        [`${APPS}/${CLIENT_ID}/redirect-uris`, { redirect_uris: 'https://evil.example.com/cb' }],
        [`${APPS}/${CLIENT_ID}/rotate-secret`, { overlap: '0' }],
        [`${APPS}/${CLIENT_ID}/disable`, {}],
        [`${APPS}/${CLIENT_ID}/enable`, {}],
        [`${APPS}/${CLIENT_ID}/delete`, {}],
        [`/console/${ACCOUNT}/keys/rotate`, {}],
        [`/console/${ACCOUNT}/keys/${host.sentinel.jwks().keys[0]?.kid ?? ''}/revoke`, {}],
        [`/console/${ACCOUNT}/sessions/end`, { user: 'u-ursula', sid: ursulaSid }],
        [`/console/${ACCOUNT}/sessions/end-all`, { user: 'u-ursula' }],
      ];
      for (const [path, fields] of attempts) {
        await viewer.goto(`${host.url}/console/${ACCOUNT}/apps`);
        expect(await postFromPage(viewer, path, { csrf, ...fields }), path).toBe(403);
        expect(await viewer.getByRole('alert').textContent()).toContain('Your role is viewer');
        expect(deniedEvents(host).at(-1)).toMatchObject({ reason: 'viewer', operator: 'u-victor' });
      }
      expect(JSON.stringify(host.sentinel.jwks())).toBe(keysBefore);
      expect(await accepted(host, user.accessToken)).toBe(true);
      expect((await host.sentinel.listSessions({ accountId: ACCOUNT, userId: 'u-ursula' })).map((session) => session.sid)).toContain(
        ursulaSid,
      );
      expect(typeof (await appToken(host, CLIENT_ID, CLIENT_SECRET))).toBe('string');
      for (const section of ['apps', 'keys', 'sessions', 'audit']) {
        await viewer.goto(`${host.url}/console/${ACCOUNT}/${section}`);
        await expectAccessible(viewer);
      }
    } finally {
      await context.close();
    }
  });

  it('a signed-in user who is no operator is kept out', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    try {
      const outsider = await context.newPage();
      await signInToConsole(outsider, host, 'ursula');
      expect(await outsider.getByRole('heading', { name: 'Not an operator' }).count()).toBe(1);
      expect((await context.cookies()).some((cookie) => cookie.name === 'sentinel_console')).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('every page passes axe in French too', async () => {
    const context = await browser.newContext({ locale: 'fr-FR', bypassCSP: true });
    try {
      const french = await context.newPage();
      await french.goto(`${host.url}/console/`);
      expect(await french.locator('html').getAttribute('lang')).toBe('fr');
      await expectAccessible(french);
      await signInToConsole(french, host, 'olga');
      const kid = host.sentinel.jwks().keys[0]?.kid ?? '';
      for (const path of ['apps', `apps/${CLIENT_ID}`, 'keys', `keys/${kid}/revoke`, 'sessions', 'audit']) {
        await french.goto(`${host.url}/console/${ACCOUNT}/${path}`);
        expect(await french.locator('h1').textContent(), path).not.toBe('');
        await expectAccessible(french);
      }
      await french.goto(`${host.url}/console/${ACCOUNT}/apps`);
      await screenshotForDocs(french, 'console-apps-fr');
    } finally {
      await context.close();
    }
  });
});
