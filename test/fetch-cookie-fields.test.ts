/**
 * The fetch adapter and a browser's cookies sent as several `Cookie` fields. Over HTTP/2 a browser may send one field
 * per cookie, which must reach the application joined with `; ` (RFC 9113 §8.2.3); some runtimes hand them to a
 * fetch handler joined with `, `, as `Headers` joins any other field (Deno Deploy did, denoland/deploy_feedback#943).
 * The service's cookie then read as part of the value of the one before it. Node joins them with `; ` itself, so the
 * Node hosts never see the comma.
 */
import { describe, expect, it } from 'vitest';
import { toFetch } from '../adapters/fetch/index.js';
import { csrfOf } from './helpers/direct-flow.js';
import { DEVICE_PATH, deviceApps, requestCodes } from './helpers/device-drive.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, REDIRECT_URI, USERNAME } from './helpers/fixtures.js';

const ORIGIN = 'http://localhost';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };

/** The Cookie header as such a runtime hands it over: the service's cookie between two others, fields joined by `, `. */
function commaJoined(cookie: string): string {
  return `theme=dark, ${cookie}, consent=yes`;
}

/** `name=value` of the Set-Cookie starting with `name=`. */
function cookieOf(response: Response | null, name: string): string {
  const line = response?.headers.getSetCookie().find((entry) => entry.startsWith(`${name}=`));
  expect(line, `a ${name} cookie`).toBeDefined();
  return (line as string).split(';')[0] as string;
}

describe('the fetch adapter with cookie fields joined by a comma', () => {
  it('takes the device code entry, whose form is tied to a cookie', async () => {
    const sentinel = makeSentinel({ apps: deviceApps() });
    const idp = toFetch(sentinel, { ip: () => '127.0.0.1' });
    const page = await idp(new Request(`${ORIGIN}${DEVICE_PATH}`));
    expect(page?.status).toBe(200);
    const tie = cookieOf(page, 'sentinel_session_device');
    const csrf = csrfOf(await page?.text());
    const codes = await requestCodes(sentinel);
    const entry = await idp(
      new Request(`${ORIGIN}${DEVICE_PATH}`, {
        method: 'POST',
        headers: { ...FORM, cookie: commaJoined(tie) },
        body: new URLSearchParams({ csrf_token: csrf, user_code: codes.user_code }),
      }),
    );
    expect(entry?.status).toBe(303);
  });

  it('knows the browser signed in from its session cookie', async () => {
    const idp = toFetch(makeSentinel(), { ip: () => '127.0.0.1' });
    const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 's1' });
    const authorizeURL = `${ORIGIN}/sentinel/api/account/${ACCOUNT}/authorize?${query}`;
    const authorize = await idp(new Request(authorizeURL));
    const login = `${ORIGIN}${authorize?.headers.get('location') ?? ''}`;
    const csrf = csrfOf(await (await idp(new Request(login)))?.text());
    const signedIn = await idp(
      new Request(login, {
        method: 'POST',
        headers: FORM,
        body: new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }),
      }),
    );
    expect(signedIn?.status).toBe(303);
    const session = cookieOf(signedIn, 'sentinel_session');
    // Signed in: the next authorization request goes straight back to the app with a code, no login page.
    const again = await idp(new Request(authorizeURL, { headers: { cookie: commaJoined(session) } }));
    expect(again?.status).toBe(302);
    expect(again?.headers.get('location')?.startsWith(`${REDIRECT_URI}?code=`)).toBe(true);
  });

  it('leaves a Cookie header without such a join as it came', async () => {
    const seen: (string | undefined)[] = [];
    const real = makeSentinel();
    const idp = toFetch({
      config: real.config,
      handle: async (request) => {
        seen.push(request.headers.cookie as string | undefined);
        return null;
      },
    });
    const header = 'a=1; b="x, y"; c=2,3';
    await idp(new Request(`${ORIGIN}/sentinel/anything`, { headers: { cookie: header } }));
    expect(seen).toEqual([header]);
  });
});
