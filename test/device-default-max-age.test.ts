/**
 * An app registered with `defaultMaxAge` (OpenID Connect Registration §2 `default_max_age`) wants its user
 * authenticated no longer ago than that. A browser already signed in skips the sign-in of the device flow; it may do
 * so for such an app only while its sign-in is younger than that, or the device's ID token would carry an `auth_time`
 * the app registered it does not take. An older sign-in signs in again, as /authorize has it.
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppOptions } from '../src/index.js';
import { frozenClock } from './helpers/clock.js';
import {
  type Browser,
  DEVICE_CLIENT_ID,
  decide,
  deviceApps,
  enterCode,
  jsonBody,
  openConfirmation,
  openConfirmationFor,
  personDecides,
  poll,
  pollError,
  requestCodes,
  signInForDevice,
} from './helpers/device-drive.js';
import { makeSentinel } from './helpers/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const MAX_AGE = 300;

function appsWithMaxAge(): AppOptions[] {
  return deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, defaultMaxAge: MAX_AGE } : app));
}

const toLogin = (location: unknown) => /\/login\?interaction=/.test(String(location));
const toConfirmation = (location: unknown) => /\/device\/confirm\?confirmation=/.test(String(location));

describe("a device app's defaultMaxAge", () => {
  it('lets a browser signed in within it go straight to the confirmation', async () => {
    const clock = frozenClock();
    const sentinel = makeSentinel({ apps: appsWithMaxAge() });
    const browser: Browser = {};
    await personDecides(sentinel, (await requestCodes(sentinel)).user_code, 'approve', browser);
    clock.at(MAX_AGE - 1);
    const entered = await enterCode(sentinel, browser, (await requestCodes(sentinel)).user_code);
    expect(entered.status).toBe(303);
    expect(toConfirmation(entered.headers.location)).toBe(true);
  });

  it('signs a browser signed in longer ago in again, and the tokens carry the new auth_time', async () => {
    const clock = frozenClock();
    const sentinel = makeSentinel({ apps: appsWithMaxAge() });
    const browser: Browser = {};
    await personDecides(sentinel, (await requestCodes(sentinel)).user_code, 'approve', browser);
    const signedInAt = Math.floor(Date.now() / 1000);
    clock.at(MAX_AGE);
    const codes = await requestCodes(sentinel, { scope: 'openid' });
    const entered = await enterCode(sentinel, browser, codes.user_code);
    expect(entered.status).toBe(303);
    expect(toLogin(entered.headers.location)).toBe(true);
    const opened = await openConfirmation(sentinel, browser, await signInForDevice(sentinel, browser, entered));
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(200);
    clock.at(MAX_AGE + 10);
    const response = await poll(sentinel, codes.device_code);
    expect(response.status, String(response.body)).toBe(200);
    const idToken = decodeJwt(jsonBody(response).id_token as string);
    expect(idToken.auth_time).toBe(signedInAt + MAX_AGE);
  });

  it('asks again at Allow for a sign-in that became too old while the page was open', async () => {
    const clock = frozenClock();
    const sentinel = makeSentinel({ apps: appsWithMaxAge() });
    const browser: Browser = {};
    // Signed in, then the confirmation page opened with a sign-in just young enough; Allow pressed after the limit.
    const codes = await requestCodes(sentinel, { scope: 'openid' });
    const opened = await openConfirmationFor(sentinel, browser, codes.user_code);
    clock.at(MAX_AGE);
    const allowed = await decide(sentinel, browser, opened, 'approve');
    expect(allowed.status, String(allowed.body)).toBe(303);
    expect(toLogin(allowed.headers.location)).toBe(true);
    expect(await pollError(sentinel, codes.device_code)).toBe('authorization_pending');
    // The old confirmation is spent; a new sign-in leads to one that approves, with the new auth_time.
    expect((await decide(sentinel, browser, opened, 'approve')).status).toBe(400);
    const again = await openConfirmation(sentinel, browser, await signInForDevice(sentinel, browser, allowed));
    expect((await decide(sentinel, browser, again, 'approve')).status).toBe(200);
    const response = await poll(sentinel, codes.device_code);
    expect(response.status, String(response.body)).toBe(200);
    expect(decodeJwt(jsonBody(response).id_token as string).auth_time).toBe(Math.floor(Date.now() / 1000));
  });

  it('takes Allow from a sign-in still within it, and Deny from any', async () => {
    const clock = frozenClock();
    const sentinel = makeSentinel({ apps: appsWithMaxAge() });
    const browser: Browser = {};
    const allowed = await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code);
    clock.at(MAX_AGE - 1);
    expect((await decide(sentinel, browser, allowed, 'approve')).status).toBe(200);
    const codes = await requestCodes(sentinel);
    const denied = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, codes.user_code));
    clock.at(MAX_AGE * 2);
    expect((await decide(sentinel, browser, denied, 'deny')).status).toBe(200);
    expect(await pollError(sentinel, codes.device_code)).toBe('access_denied');
  });

  it('leaves an app without it to any live session', async () => {
    const clock = frozenClock();
    const sentinel = makeSentinel({ apps: deviceApps() });
    const browser: Browser = {};
    await personDecides(sentinel, (await requestCodes(sentinel)).user_code, 'approve', browser);
    clock.at(MAX_AGE * 4);
    const entered = await enterCode(sentinel, browser, (await requestCodes(sentinel)).user_code);
    expect(toConfirmation(entered.headers.location)).toBe(true);
  });
});
