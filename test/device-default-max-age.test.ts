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
  personDecides,
  poll,
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
