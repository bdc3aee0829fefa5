/**
 * The device flow's confirmation page names the signed-in user (the `name` claim of the claims hook, else the user
 * id), as the account page does, and offers "Not you? Sign in as someone else": at a shared computer, a browser
 * still signed in as another person would otherwise hand that person's account to the device unknowingly.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { BUNDLED_CATALOGUES, MemoryStore, type Sentinel } from '../src/index.js';
import { escapeHTML } from '../src/authorize/pages/escape-html.js';
import { ACCOUNT, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';
import { call, csrfOf, postForm, setCookies } from './helpers/direct-flow.js';
import {
  type Browser,
  DEVICE_CONFIRM_PATH,
  decide,
  deviceApps,
  enterCode,
  jsonBody,
  openConfirmation,
  openConfirmationFor,
  poll,
  requestCodes,
} from './helpers/device-drive.js';

const ALICE = { id: 'user-alice', name: 'Alice Example' };
const BOB = { id: 'user-bob', name: 'Bob <Builder>' };

function sharedComputerSentinel(): Sentinel {
  return makeSentinel({
    apps: deviceApps(),
    users: {
      authenticate: async ({ accountId, username, password }) => {
        if (accountId !== ACCOUNT || password !== PASSWORD) return null;
        if (username === USERNAME) return { id: ALICE.id };
        return username === 'bob' ? { id: BOB.id } : null;
      },
      claims: async ({ userId }) => ({ name: userId === ALICE.id ? ALICE.name : BOB.name }),
    },
  });
}

function headers(browser: Browser): Record<string, string> {
  return { 'sec-fetch-site': 'same-origin', ...(browser.cookie === undefined ? {} : { cookie: browser.cookie }) };
}

describe('the device confirmation page says who is signed in', () => {
  it('names the user, and "not you?" signs in as someone else for the same code', async () => {
    const sentinel = sharedComputerSentinel();
    const browser: Browser = {};
    // Alice signed in on this computer earlier (through a device of her own).
    await decide(sentinel, browser, await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code), 'approve');
    // Bob's TV: the browser goes straight to the confirmation, still signed in as Alice.
    const codes = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    const page = String(opened.page.body);
    expect(page).toContain('Signed in as <strong><bdi>Alice Example</bdi></strong>.');
    expect(page).toContain('name="switch"');
    expect(page).toContain(BUNDLED_CATALOGUES.en?.deviceSwitchUser ?? 'missing');

    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, switch: '1' });
    const switched = await postForm(sentinel, DEVICE_CONFIRM_PATH, form.toString(), { headers: headers(browser) });
    expect(switched.status).toBe(303);
    const login = String(switched.headers.location);
    expect(login).toMatch(/\/login\?interaction=[A-Za-z0-9_-]{43}$/);
    // Alice's confirmation is spent: it decides nothing any more, and the device still waits.
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(400);
    expect(jsonBody(await poll(sentinel, codes.device_code)).error).toBe('authorization_pending');

    // The login page asks for credentials although the browser holds Alice's session; Bob signs in.
    const [path, query] = login.split('?') as [string, string];
    const loginPage = await call(sentinel, { path, query, headers: headers(browser) });
    expect(loginPage.status).toBe(200);
    const body = new URLSearchParams({ csrf_token: csrfOf(String(loginPage.body)), username: 'bob', password: PASSWORD });
    const signedIn = await postForm(sentinel, path, body.toString(), { query, headers: headers(browser) });
    browser.cookie = (setCookies(signedIn).find((line) => line.startsWith('sentinel_session=')) ?? '').split(';')[0];
    const bobs = await openConfirmation(sentinel, browser, signedIn);
    expect(String(bobs.page.body)).toContain('Signed in as <strong><bdi>Bob &lt;Builder&gt;</bdi></strong>.');
    expect((await decide(sentinel, browser, bobs, 'approve')).status).toBe(200);
    const tokens = jsonBody(await poll(sentinel, codes.device_code));
    expect(decodeJwt(tokens.access_token as string).sub).toBe(BOB.id);
  });

  it('shows the user id without a claims hook, in the page language of every bundled catalogue', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    for (const [tag, messages] of Object.entries(BUNDLED_CATALOGUES)) {
      const browser: Browser = { language: tag };
      const opened = await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code);
      const page = String(opened.page.body);
      const signedInAs = messages?.deviceSignedInAs ?? '';
      expect(signedInAs, tag).toContain('{user}');
      expect(page, tag).toMatch(/<strong><bdi>[^<]+<\/bdi><\/strong>/);
      expect(page, tag).toContain(escapeHTML(signedInAs.split('{user}')[0] ?? ''));
      expect(page, tag).toContain(escapeHTML(messages?.deviceSwitchUser ?? 'missing'));
      if (tag !== 'en') expect(messages?.deviceSwitchUser, tag).not.toBe(BUNDLED_CATALOGUES.en?.deviceSwitchUser);
    }
  });

  it('keeps the confirmation when "not you?" fails to start the new sign-in (a store failure)', async () => {
    const store = new MemoryStore();
    const real = store.set.bind(store);
    let failInteractions = false;
    vi.spyOn(store, 'set').mockImplementation((key, value, ttlMs) =>
      failInteractions && key.startsWith('interaction:') ? Promise.reject(new Error('store down')) : real(key, value, ttlMs),
    );
    const sentinel = makeSentinel({ apps: deviceApps(), store, onError: () => undefined });
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code);
    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, switch: '1' }).toString();
    failInteractions = true;
    expect((await postForm(sentinel, DEVICE_CONFIRM_PATH, form, { headers: headers(browser) })).status).toBe(500);
    failInteractions = false;
    // Nothing was switched: the same page's "not you?", posted again, starts the sign-in.
    const switched = await postForm(sentinel, DEVICE_CONFIRM_PATH, form, { headers: headers(browser) });
    expect(switched.status, String(switched.body)).toBe(303);
    expect(String(switched.headers.location)).toMatch(/\/login\?interaction=[A-Za-z0-9_-]{43}$/);
  });

  it('refuses "not you?" posted without the form\'s CSRF token, and spends nothing', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code);
    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: 'x'.repeat(43), switch: '1' });
    const refused = await postForm(sentinel, DEVICE_CONFIRM_PATH, form.toString(), { headers: headers(browser) });
    expect(refused.status).toBe(403);
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
  });
});
