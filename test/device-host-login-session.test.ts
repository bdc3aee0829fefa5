/**
 * A device sign-in started in a browser that holds a session ("Not you?" on the confirmation page, or a sign-in
 * older than the app's defaultMaxAge) ends in a session that replaces it, as a sign-in /authorize asks for does:
 * also on the host's own login page, whose `completeLogin()` has no cookie and learns the browser's session only from
 * the interaction. Before, that session survived there: still live and listed, the grants issued through it beyond
 * the reach of this browser's sign-out.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { frozenClock } from './helpers/clock.js';
import { postForm, setCookies } from './helpers/direct-flow.js';
import {
  type Browser,
  DEVICE_AUTHORIZATION_PATH,
  DEVICE_CLIENT_ID,
  DEVICE_CLIENT_SECRET,
  DEVICE_CONFIRM_PATH,
  DEVICE_SECRET_CLIENT_ID,
  deviceApps,
  enterCode,
  jsonBody,
  openConfirmation,
  requestCodes,
} from './helpers/device-drive.js';
import { makeSentinel, USER_ID } from './helpers/fixtures.js';
import { HOST_LOGIN, hostInteraction } from './helpers/host-login.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The host's page signs the user in: the session cookie of its answer goes to the browser. */
async function hostCompletes(sentinel: Sentinel, browser: Browser, interaction: string): Promise<SentinelResponse> {
  const response = await sentinel.completeLogin(interaction, { userId: USER_ID });
  const session = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  expect(session, 'a session cookie').toBeDefined();
  browser.cookie = (session as string).split(';')[0];
  return response;
}

describe('a device sign-in on the host’s login page, in a browser with a session', () => {
  it('replaces the session the browser held ("Not you?")', async () => {
    const sentinel = makeSentinel({ apps: deviceApps(), login: { url: HOST_LOGIN } });
    const browser: Browser = {};
    // The browser signs in through a first device code.
    const first = await requestCodes(sentinel);
    await hostCompletes(sentinel, browser, hostInteraction(await enterCode(sentinel, browser, first.user_code)));
    const earlier: Browser = { cookie: browser.cookie };
    // A second code goes straight to the confirmation; "Not you?" signs in again on the host's page.
    const second = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, second.user_code));
    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, switch: '1' });
    const switched = await postForm(sentinel, DEVICE_CONFIRM_PATH, form.toString(), {
      headers: { 'sec-fetch-site': 'same-origin', cookie: browser.cookie as string },
    });
    await hostCompletes(sentinel, browser, hostInteraction(switched));
    expect(browser.cookie).not.toBe(earlier.cookie);
    // The earlier session is gone: its cookie signs nothing in any more (a code entry asks for a sign-in).
    const third = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, earlier, third.user_code);
    expect(String(entered.headers.location)).toMatch(new RegExp(`^${HOST_LOGIN}\\?interaction=`));
  });

  it('replaces the session the browser held when it was too old for the app (defaultMaxAge)', async () => {
    const clock = frozenClock();
    const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, defaultMaxAge: 300 } : app));
    const sentinel = makeSentinel({ apps, login: { url: HOST_LOGIN } });
    const browser: Browser = {};
    const first = await requestCodes(sentinel);
    await hostCompletes(sentinel, browser, hostInteraction(await enterCode(sentinel, browser, first.user_code)));
    const earlier: Browser = { cookie: browser.cookie };
    clock.at(300);
    // Too old for the app: the same user signs in again on the host's page.
    const second = await requestCodes(sentinel);
    await hostCompletes(sentinel, browser, hostInteraction(await enterCode(sentinel, browser, second.user_code)));
    expect(browser.cookie).not.toBe(earlier.cookie);
    // Carried over into the new session: the earlier cookie signs nothing in any more, not even for the kiosk app,
    // which has no defaultMaxAge (a live session would go straight to its confirmation).
    const kiosk = await postForm(
      sentinel,
      DEVICE_AUTHORIZATION_PATH,
      new URLSearchParams({ client_id: DEVICE_SECRET_CLIENT_ID, client_secret: DEVICE_CLIENT_SECRET }).toString(),
    );
    const entered = await enterCode(sentinel, earlier, jsonBody(kiosk).user_code as string);
    expect(String(entered.headers.location)).toMatch(new RegExp(`^${HOST_LOGIN}\\?interaction=`));
  });
});
