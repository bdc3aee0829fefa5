/**
 * openid-client 6's device-flow functions (`initiateDeviceAuthorization`, `pollDeviceAuthorizationGrant`) against the
 * service over HTTP, configured only from the discovered metadata: approve (then UserInfo and refresh), deny, expire
 * with a moved clock, and slow down. The person's side is a browser with a cookie jar on the verification pages.
 */
import * as client from 'openid-client';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, type SentinelEvent } from '../src/index.js';
import { advanceClock } from './helpers/clock.js';
import { DEVICE_CLIENT_ID, deviceApps } from './helpers/device-drive.js';
import { baseOptions, ISSUER, USER_ID } from './helpers/fixtures.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { MountedHost } from './helpers/host.js';
import { ACCOUNT_ISSUER } from './helpers/oauth.js';
import { ALICE, oidcOptions, submitLogin } from './helpers/oidc.js';

const FORM = 'application/x-www-form-urlencoded';
const open: MountedHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The service (polling interval 1 s, to keep the suite quick), openid-client configured from discovery, and a browser. */
async function setUp() {
  const events: SentinelEvent[] = [];
  const sentinel = createSentinel(
    baseOptions({ ...oidcOptions(), apps: deviceApps(), deviceFlow: { interval: 1 }, onEvent: (event) => events.push(event) }),
  );
  const mounted = await HANDLE_HOST.mount(sentinel);
  open.push(mounted);
  // The issuer is http://localhost; the host listens on an ephemeral port, so requests are re-pointed there.
  const rewrite: client.CustomFetch = (url, options) => fetch(url.replace(ISSUER, mounted.url), options as RequestInit);
  const config = await client.discovery(new URL(ACCOUNT_ISSUER), DEVICE_CLIENT_ID, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: rewrite,
  });
  return { config, events, browser: request.agent(mounted.server) };
}

/** The person: opens verification_uri_complete, continues with the prefilled code, signs in and decides. */
async function personDecides(browser: ReturnType<typeof request.agent>, completeUri: string, choice: 'approve' | 'deny'): Promise<string> {
  const entry = new URL(completeUri);
  const page = await browser.get(`${entry.pathname}${entry.search}`);
  expect(page.status).toBe(200);
  const userCode = /name="user_code"[^>]* value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const entered = await browser
    .post(entry.pathname)
    .set('content-type', FORM)
    .set('sec-fetch-site', 'same-origin')
    .send(new URLSearchParams({ csrf_token: csrfToken, user_code: userCode }).toString());
  expect(entered.status).toBe(303);
  const toConfirm = await submitLogin(browser, entered.headers.location as string);
  const confirm = await browser.get(toConfirm.headers.location as string);
  expect(confirm.status).toBe(200);
  const field = (name: string): string => new RegExp(`name="${name}" value="([^"]+)"`).exec(confirm.text)?.[1] ?? '';
  const decided = await browser
    .post(entry.pathname.replace(/\/device$/, '/device/confirm'))
    .set('content-type', FORM)
    .set('sec-fetch-site', 'same-origin')
    .send(new URLSearchParams({ confirmation: field('confirmation'), csrf_token: field('csrf_token'), [choice]: '1' }).toString());
  expect(decided.status).toBe(200);
  return decided.text;
}

/** The error code an openid-client call failed with. */
async function errorOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { error?: string }).error ?? (error as { cause?: { error?: string } }).cause?.error;
  }
  return undefined;
}

describe('openid-client 6 device flow', () => {
  it('approve: the tokens, the ID token checked by the client, UserInfo and refresh', async () => {
    const { config, browser } = await setUp();
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${ACCOUNT_ISSUER}/device_authorization`);
    const response = await client.initiateDeviceAuthorization(config, { scope: 'openid profile email' });
    expect(response.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const polling = client.pollDeviceAuthorizationGrant(config, response);
    await personDecides(browser, response.verification_uri_complete ?? '', 'approve');
    const tokens = await polling;
    expect(tokens.claims()?.sub).toBe(USER_ID);
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, USER_ID);
    expect(userinfo).toMatchObject({ sub: USER_ID, email: ALICE.email });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
    expect(refreshed.claims()?.sub).toBe(USER_ID);
  });

  it('deny: the poll ends with access_denied', async () => {
    const { config, browser } = await setUp();
    const response = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = errorOf(client.pollDeviceAuthorizationGrant(config, response));
    expect(await personDecides(browser, response.verification_uri_complete ?? '', 'deny')).toContain('Access denied');
    expect(await polling).toBe('access_denied');
  });

  it('expire: with the clock moved past expires_in, the poll ends with expired_token', async () => {
    const { config } = await setUp();
    const response = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    advanceClock(response.expires_in + 1);
    expect(await errorOf(client.pollDeviceAuthorizationGrant(config, response))).toBe('expired_token');
  });

  it('slow down: a client polling faster than the interval is told slow_down, waits 5 s more, and still gets its tokens', async () => {
    const { config, browser, events } = await setUp();
    const response = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    // A client that ignores the interval: it polls at once, twice; the second poll is too soon.
    const polling = client.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 });
    await vi.waitFor(() => expect(events.some((event) => event.type === 'token.denied' && event.error === 'slow_down')).toBe(true), {
      timeout: 5000,
    });
    await personDecides(browser, response.verification_uri_complete ?? '', 'approve');
    expect((await polling).claims()?.sub).toBe(USER_ID);
  }, 20_000);
});
