/**
 * A device sign-in for an app registered with `defaultMaxAge` carries it as its `maxAge`, as an app's own
 * authorization request without `max_age` does: the host's login page is told (`sentinel.interaction()`), and a
 * `completeLogin()` with a sign-in that old or older is refused with a 400 page (there is no redirect URI to answer
 * to), nothing issued and the device still waiting. Before, the verification page sent a too-old session to sign in
 * again, but the host's page could hand the same old sign-in back and the device's ID token carried its auth_time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sentinel, SentinelEvent, SentinelResponse } from '../src/index.js';
import { frozenClock } from './helpers/clock.js';
import { postForm, setCookies } from './helpers/direct-flow.js';
import {
  type Browser,
  DEVICE_CLIENT_ID,
  DEVICE_CONFIRM_PATH,
  deviceApps,
  enterCode,
  openConfirmation,
  pollError,
  requestCodes,
} from './helpers/device-drive.js';
import { makeSentinel, USER_ID } from './helpers/fixtures.js';
import { HOST_LOGIN, hostInteraction } from './helpers/host-login.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function harness(): { sentinel: Sentinel; events: SentinelEvent[] } {
  const events: SentinelEvent[] = [];
  const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, defaultMaxAge: 300 } : app));
  const sentinel = makeSentinel({ apps, login: { url: HOST_LOGIN }, onEvent: (event) => events.push(event) });
  return { sentinel, events };
}

const sessionCookieOf = (response: SentinelResponse) => setCookies(response).find((line) => line.startsWith('sentinel_session='));

describe('a device sign-in on the host’s login page for an app with defaultMaxAge', () => {
  it('is told the app’s maxAge, and a sign-in that old is refused with a 400 page, the device still waiting', async () => {
    frozenClock();
    const { sentinel, events } = harness();
    const codes = await requestCodes(sentinel);
    const interaction = hostInteraction(await enterCode(sentinel, {}, codes.user_code));
    expect((await sentinel.interaction(interaction))?.maxAge).toBe(300);
    const now = Math.floor(Date.now() / 1000);
    const refused = await sentinel.completeLogin(interaction, { userId: USER_ID, authTime: now - 300 });
    expect(refused.status).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(String(refused.headers['content-type'])).toContain('text/html');
    expect(String(refused.body)).toContain('Enter the code from your device again');
    expect(sessionCookieOf(refused)).toBeUndefined();
    expect(events.filter((event) => event.type === 'session.created')).toEqual([]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'authorize.denied', clientId: DEVICE_CLIENT_ID, error: 'login_required' }),
    );
    // The interaction is spent, as a refused /authorize sign-in's is.
    expect((await sentinel.completeLogin(interaction, { userId: USER_ID })).status).toBe(400);
    // Nothing decided: the device keeps waiting, and the code entered again signs in anew.
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    const again = hostInteraction(await enterCode(sentinel, {}, codes.user_code));
    const accepted = await sentinel.completeLogin(again, { userId: USER_ID, authTime: now - 299 });
    expect(accepted.status).toBe(303);
    expect(String(accepted.headers.location)).toMatch(/\/device\/confirm\?confirmation=/);
    expect(sessionCookieOf(accepted)).toBeDefined();
  });

  it('carries the maxAge into the sign-in of "Not you?" too', async () => {
    frozenClock();
    const { sentinel } = harness();
    const browser: Browser = {};
    const first = await requestCodes(sentinel);
    const signedIn = await sentinel.completeLogin(hostInteraction(await enterCode(sentinel, browser, first.user_code)), {
      userId: USER_ID,
    });
    browser.cookie = (sessionCookieOf(signedIn) as string).split(';')[0];
    const second = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, second.user_code));
    const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, switch: '1' });
    const switched = await postForm(sentinel, DEVICE_CONFIRM_PATH, form.toString(), {
      headers: { 'sec-fetch-site': 'same-origin', cookie: browser.cookie as string },
    });
    const interaction = hostInteraction(switched);
    expect((await sentinel.interaction(interaction))?.maxAge).toBe(300);
    const now = Math.floor(Date.now() / 1000);
    expect((await sentinel.completeLogin(interaction, { userId: 'u-bob', authTime: now - 301 })).status).toBe(400);
  });
});
