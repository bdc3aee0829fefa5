/**
 * Driving the device flow (RFC 8628) directly through `sentinel.handle()`: the device's requests (codes, polls) and
 * the person's browser (code entry, sign-in on the login page, confirmation), with the session cookie carried by hand.
 */
import { expect } from 'vitest';
import type { AppOptions, Sentinel, SentinelResponse } from '../../src/index.js';
import { DEVICE_CODE_GRANT } from '../../src/index.js';
import { call, csrfOf, postForm, setCookies, TOKEN_PATH, ACCOUNT_PATH } from './direct-flow.js';
import { ACCOUNT, baseOptions, PASSWORD, USERNAME } from './fixtures.js';

export const DEVICE_AUTHORIZATION_PATH = `${ACCOUNT_PATH}/device_authorization`;
export const DEVICE_PATH = `${ACCOUNT_PATH}/device`;
export const DEVICE_CONFIRM_PATH = `${ACCOUNT_PATH}/device/confirm`;
export const DEVICE_CLIENT_ID = 'dddddddd-0000-4000-8000-000000000001';
export const DEVICE_SECRET_CLIENT_ID = 'dddddddd-0000-4000-8000-000000000002';
export const DEVICE_CLIENT_SECRET = 'device-client-secret-for-tests-0123456789';

/** The fixture apps plus a public device app (a CLI) and a confidential one (a kiosk). */
export function deviceApps(): AppOptions[] {
  return [
    ...(baseOptions().apps ?? []),
    {
      accountId: ACCOUNT,
      clientId: DEVICE_CLIENT_ID,
      tokenEndpointAuthMethod: 'none',
      name: 'Acme TV',
      grantTypes: [DEVICE_CODE_GRANT, 'refresh_token'],
    },
    {
      accountId: ACCOUNT,
      clientId: DEVICE_SECRET_CLIENT_ID,
      clientSecret: DEVICE_CLIENT_SECRET,
      name: 'Acme Kiosk',
      grantTypes: [DEVICE_CODE_GRANT],
    },
  ];
}

/** What the device authorization endpoint answered. */
export interface DeviceCodes {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The JSON body of a response. */
export function jsonBody(response: SentinelResponse): Record<string, unknown> {
  return (typeof response.body === 'string' ? JSON.parse(response.body) : response.body) as Record<string, unknown>;
}

/** Asks for codes as the public device app. */
export async function requestCodes(sentinel: Sentinel, form: Record<string, string> = {}): Promise<DeviceCodes> {
  const response = await postForm(
    sentinel,
    DEVICE_AUTHORIZATION_PATH,
    new URLSearchParams({ client_id: DEVICE_CLIENT_ID, ...form }).toString(),
  );
  expect(response.status, String(response.body)).toBe(200);
  return jsonBody(response) as unknown as DeviceCodes;
}

/** One poll of the token endpoint. */
export function poll(sentinel: Sentinel, deviceCode: string, form: Record<string, string> = {}): Promise<SentinelResponse> {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({ grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: DEVICE_CLIENT_ID, ...form }).toString(),
  );
}

/** A refresh of the public device app's tokens (`form` adds parameters, e.g. `resource`). */
export function refreshDevice(sentinel: Sentinel, refreshToken: string, form: Record<string, string> = {}): Promise<SentinelResponse> {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: DEVICE_CLIENT_ID, ...form }).toString(),
  );
}

/** The `error` of a poll's answer. */
export async function pollError(sentinel: Sentinel, deviceCode: string, form: Record<string, string> = {}): Promise<string | undefined> {
  const response = await poll(sentinel, deviceCode, form);
  return jsonBody(response).error as string | undefined;
}

/** A person's browser: its cookie and language. */
export interface Browser {
  cookie?: string | undefined;
  language?: string | undefined;
}

function browserHeaders(browser: Browser): Record<string, string> {
  return {
    'sec-fetch-site': 'same-origin',
    ...(browser.cookie === undefined ? {} : { cookie: browser.cookie }),
    ...(browser.language === undefined ? {} : { 'accept-language': browser.language }),
  };
}

/** The cookie of the code entry form's CSRF token: `name=value`, as the browser sends it back. */
export function entryCookieOf(response: SentinelResponse): string {
  const line = setCookies(response).find((entry) => entry.startsWith('sentinel_session_device='));
  expect(line, 'the code entry page gives its form a cookie').toBeDefined();
  return (line as string).split(';')[0] as string;
}

/** Opens the code entry page (`query`, e.g. `ui_locales=fr`): its CSRF token and the cookie it is bound to. */
export async function openEntry(
  sentinel: Sentinel,
  browser: Browser,
  query?: string,
): Promise<{ page: SentinelResponse; csrf: string; cookie: string }> {
  const page = await call(sentinel, { path: DEVICE_PATH, query, headers: browserHeaders(browser) });
  expect(page.status).toBe(200);
  return { page, csrf: csrfOf(page.body as string), cookie: entryCookieOf(page) };
}

/** Opens the code entry page and posts its form with `userCode`, as a browser does. */
export async function enterCode(sentinel: Sentinel, browser: Browser, userCode: string, ip?: string): Promise<SentinelResponse> {
  const entry = await openEntry(sentinel, browser);
  const cookie = [browser.cookie, entry.cookie].filter((part) => part !== undefined).join('; ');
  return postForm(sentinel, DEVICE_PATH, new URLSearchParams({ csrf_token: entry.csrf, user_code: userCode }).toString(), {
    headers: { ...browserHeaders(browser), cookie },
    ip,
  });
}

/** Signs in on the login page a code entry sent the browser to; returns the 303 to the confirmation page. */
export async function signInForDevice(sentinel: Sentinel, browser: Browser, entered: SentinelResponse): Promise<SentinelResponse> {
  expect(entered.status).toBe(303);
  const login = String(entered.headers.location);
  expect(login).toMatch(/\/login\?interaction=[A-Za-z0-9_-]{43}$/);
  const [path, query] = login.split('?') as [string, string];
  const page = await call(sentinel, { path, query, headers: browserHeaders(browser) });
  expect(page.status).toBe(200);
  const response = await postForm(
    sentinel,
    path,
    new URLSearchParams({ csrf_token: csrfOf(page.body as string), username: USERNAME, password: PASSWORD }).toString(),
    { query, headers: browserHeaders(browser) },
  );
  const session = setCookies(response).find((line) => line.startsWith('sentinel_session='));
  if (session !== undefined) browser.cookie = session.split(';')[0];
  return response;
}

/** Opens the confirmation page a 303 points to: its id and CSRF token. */
export async function openConfirmation(
  sentinel: Sentinel,
  browser: Browser,
  redirect: SentinelResponse,
): Promise<{ page: SentinelResponse; confirmation: string; csrf: string }> {
  expect(redirect.status).toBe(303);
  const location = String(redirect.headers.location);
  expect(location).toMatch(/\/device\/confirm\?confirmation=[A-Za-z0-9_-]{43}$/);
  const [path, query] = location.split('?') as [string, string];
  const page = await call(sentinel, { path, query, headers: browserHeaders(browser) });
  expect(page.status, String(page.body)).toBe(200);
  return { page, confirmation: new URLSearchParams(query).get('confirmation') as string, csrf: csrfOf(page.body as string) };
}

/** The person's way to the confirmation page: enter the code, sign in, open the page the sign-in leads to. */
export async function openConfirmationFor(
  sentinel: Sentinel,
  browser: Browser,
  userCode: string,
): Promise<{ page: SentinelResponse; confirmation: string; csrf: string }> {
  return openConfirmation(sentinel, browser, await signInForDevice(sentinel, browser, await enterCode(sentinel, browser, userCode)));
}

/** Posts the decision of a confirmation page. */
export function decide(
  sentinel: Sentinel,
  browser: Browser,
  opened: { confirmation: string; csrf: string },
  choice: 'approve' | 'deny',
): Promise<SentinelResponse> {
  const form = new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, [choice]: '1' });
  return postForm(sentinel, DEVICE_CONFIRM_PATH, form.toString(), { headers: browserHeaders(browser) });
}

/** The whole person's side: enter the code, sign in, and approve or deny. Returns the final page. */
export async function personDecides(
  sentinel: Sentinel,
  userCode: string,
  choice: 'approve' | 'deny',
  browser: Browser = {},
): Promise<SentinelResponse> {
  return decide(sentinel, browser, await openConfirmationFor(sentinel, browser, userCode), choice);
}
