/**
 * The app's own logout form posted to `POST …/logout` from the app's site. The browser sends no session cookie with
 * that cross-site post (SameSite=Lax), so the endpoint cannot see the session there: it must not send the browser
 * back to the app as if the user were signed out while the session lives on. It forwards the request to
 * RP-initiated logout's GET (a top-level navigation, which carries the cookie), parked as a posted request is.
 *
 * The same goes for a post whose browser does not say where it came from (`Origin: null` and no `Sec-Fetch-Site`,
 * as a browser without fetch metadata sends from a sandboxed frame or a no-referrer page): before, it ended the
 * session at once, so a same-site page could sign a user out; now the user is asked.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { ACCOUNT_PATH, call } from './helpers/direct-flow.js';
import { CLIENT_ID, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { sessionWorks, signInWithSession } from './helpers/logout-flow.js';

const APP_ORIGIN = new URL(REDIRECT_URI).origin;
const FORM = { client_id: CLIENT_ID, post_logout_redirect_uri: REDIRECT_URI, state: 'bye' };

/** The app's form, as a browser posts it from the app's site: no cookie (SameSite=Lax). */
function crossSiteForm(sentinel: Sentinel, form: Record<string, string> = FORM): Promise<SentinelResponse> {
  return call(sentinel, {
    method: 'POST',
    path: `${ACCOUNT_PATH}/logout`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: APP_ORIGIN, 'sec-fetch-site': 'cross-site' },
    body: new URLSearchParams(form).toString(),
  });
}

/** A GET of `location` by the browser holding `cookie` (a top-level navigation carries it). */
function follow(sentinel: Sentinel, location: string, cookie: string): Promise<SentinelResponse> {
  const url = new URL(location, 'http://localhost');
  return call(sentinel, { path: url.pathname, query: url.searchParams, headers: { cookie: `sentinel_session=${cookie}` } });
}

describe("the app's cross-site logout form", () => {
  it('never sends the browser back to the app while its session lives: the user is asked, then signed out', async () => {
    const sentinel = makeSentinel();
    const { cookie } = await signInWithSession(sentinel);
    const posted = await crossSiteForm(sentinel);
    expect(posted.status).toBe(303);
    const location = String(posted.headers.location);
    expect(location, 'not back to the app with the session alive').not.toContain(APP_ORIGIN);
    // Nothing of the form in the URL: only the handle of the parked request.
    expect(location).toMatch(/^\/sentinel\/api\/account\/[^/]+\/end_session\?posted_request=[A-Za-z0-9_-]{43}$/);
    const page = await follow(sentinel, location, cookie);
    expect(page.status).toBe(200);
    const html = String(page.body);
    const confirmation = /name="confirmation" value="([^"]+)"/.exec(html)?.[1] as string;
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] as string;
    expect(confirmation).toBeTruthy();
    const confirmed = await call(sentinel, {
      method: 'POST',
      path: `${ACCOUNT_PATH}/end_session`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `sentinel_session=${cookie}`,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ confirmation, csrf_token: csrf }).toString(),
    });
    expect([confirmed.status, confirmed.headers.location]).toEqual([303, `${REDIRECT_URI}?state=bye`]);
    expect(await sessionWorks(sentinel, cookie)).toBe(false);
  });

  it('a browser with no session goes straight back to the app', async () => {
    const sentinel = makeSentinel();
    const posted = await crossSiteForm(sentinel);
    const back = await call(sentinel, {
      path: new URL(String(posted.headers.location), 'http://localhost').pathname,
      query: new URL(String(posted.headers.location), 'http://localhost').searchParams,
    });
    expect([back.status, back.headers.location]).toEqual([303, `${REDIRECT_URI}?state=bye`]);
  });

  it('an unregistered return address is dropped, as the logout form drops it: signed out, no redirect', async () => {
    const sentinel = makeSentinel();
    const { cookie } = await signInWithSession(sentinel);
    const posted = await crossSiteForm(sentinel, { ...FORM, post_logout_redirect_uri: 'https://evil.example/cb' });
    const page = await follow(sentinel, String(posted.headers.location), cookie);
    expect(page.status).toBe(200);
    expect(String(page.body)).toContain('name="confirmation"');
    expect(String(page.body)).not.toContain('evil.example');
  });

  it('a form longer than end_session takes is refused with 413, nothing parked (not a 414 there after parking it)', async () => {
    // The form's `state` would be parked for end_session, which takes at most 8192 characters: a longer one parked
    // more than a parked request may hold (anyone can send it, with any Origin), then failed there with 414.
    const store = new MemoryStore();
    const parked: string[] = [];
    const set = store.set.bind(store);
    store.set = (key, value, ttlMs) => {
      if (key.startsWith('posted-request:')) parked.push(key);
      return set(key, value, ttlMs);
    };
    const sentinel = makeSentinel({ store });
    const posted = await crossSiteForm(sentinel, { ...FORM, state: 'x'.repeat(9000) });
    expect(posted.status).toBe(413);
    expect(parked).toEqual([]);
    // Within the cap the form is forwarded as before.
    expect((await crossSiteForm(sentinel, { ...FORM, state: 'x'.repeat(7000) })).status).toBe(303);
    expect(parked).toHaveLength(1);
  });

  it('a post that says nothing of where it came from (Origin: null, no Sec-Fetch-Site) is confirmed by the user', async () => {
    const sentinel = makeSentinel();
    const { cookie } = await signInWithSession(sentinel);
    const posted = await call(sentinel, {
      method: 'POST',
      path: `${ACCOUNT_PATH}/logout`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null', cookie: `sentinel_session=${cookie}` },
      body: new URLSearchParams(FORM).toString(),
    });
    expect([posted.status, posted.headers['set-cookie']]).toEqual([303, undefined]);
    expect(String(posted.headers.location)).toMatch(/\/end_session\?posted_request=/);
    expect(await sessionWorks(sentinel, cookie)).toBe(true);
    const page = await follow(sentinel, String(posted.headers.location), cookie);
    expect(String(page.body)).toContain('name="confirmation"');
  });
});
