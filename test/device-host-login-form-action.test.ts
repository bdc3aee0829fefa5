/**
 * The device flow's forms that lead to the sign-in (the code entry form, and "Not you?" on the confirmation page) are
 * answered with a 303 to the login page. With `login.url` on another origin (the host's own sign-in site), that 303
 * leaves the service's origin, and Chromium applies `form-action` to the redirects after a form post: a CSP allowing
 * only `'self'` blocked the person on the page, so the device could never be signed in. The pages allow the host
 * login page's origin too, and only it.
 */
import { describe, expect, it } from 'vitest';
import { postForm, setCookies } from './helpers/direct-flow.js';
import {
  type Browser,
  DEVICE_CONFIRM_PATH,
  deviceApps,
  enterCode,
  openConfirmation,
  openEntry,
  requestCodes,
} from './helpers/device-drive.js';
import { makeSentinel, USER_ID } from './helpers/fixtures.js';
import type { SentinelResponse } from '../src/index.js';

function formAction(response: SentinelResponse): string | undefined {
  return /form-action ([^;]*)/.exec(String(response.headers['content-security-policy']))?.[1];
}

describe('device pages with a host login page on another origin', () => {
  it('the code entry page allows its form to end at the host login page', async () => {
    const sentinel = makeSentinel({ apps: deviceApps(), login: { url: 'https://login.example.net:8443/sign-in?tenant=a' } });
    const { page } = await openEntry(sentinel, {});
    expect(formAction(page)).toBe("'self' https://login.example.net:8443");
    // The form does end there.
    const codes = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, {}, codes.user_code);
    expect(entered.status).toBe(303);
    expect(new URL(String(entered.headers.location)).origin).toBe('https://login.example.net:8443');
  });

  it('the confirmation page allows "Not you?" to end at the host login page', async () => {
    const sentinel = makeSentinel({ apps: deviceApps(), login: { url: 'https://login.example.net/sign-in' } });
    const browser: Browser = {};
    const first = await requestCodes(sentinel);
    const entered = await enterCode(sentinel, browser, first.user_code);
    const interaction = new URL(String(entered.headers.location)).searchParams.get('interaction') as string;
    const done = await sentinel.completeLogin(interaction, { userId: USER_ID });
    browser.cookie = (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0];
    const second = await requestCodes(sentinel);
    const opened = await openConfirmation(sentinel, browser, await enterCode(sentinel, browser, second.user_code));
    expect(formAction(opened.page)).toBe("'self' https://login.example.net");
    const switched = await postForm(
      sentinel,
      DEVICE_CONFIRM_PATH,
      new URLSearchParams({ confirmation: opened.confirmation, csrf_token: opened.csrf, switch: '1' }).toString(),
      { headers: { 'sec-fetch-site': 'same-origin', cookie: browser.cookie as string } },
    );
    expect(new URL(String(switched.headers.location)).origin).toBe('https://login.example.net');
  });

  it('a protocol-relative login.url takes the issuer scheme (the page resolves it so)', async () => {
    for (const url of ['//login.example.net/sign-in', '/\\login.example.net/sign-in']) {
      const sentinel = makeSentinel({ apps: deviceApps(), login: { url } });
      const { page } = await openEntry(sentinel, {});
      expect(formAction(page)).toBe("'self' http://login.example.net");
    }
  });

  it('a login.url path on the service itself, or none, adds nothing', async () => {
    for (const login of [{ url: '/account/sign-in' }, { url: 'sign-in' }, {}]) {
      const sentinel = makeSentinel({ apps: deviceApps(), login });
      const { page } = await openEntry(sentinel, {});
      expect(formAction(page)).toBe("'self'");
    }
  });
});
