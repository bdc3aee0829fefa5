/**
 * Login CSRF on a browser without `Sec-Fetch-Site` (Safari before 16.4): a form on another site, in a sandboxed frame
 * or under `no-referrer`, posts with `Origin: null`, which our own `no-referrer` form sends too. The login page ties
 * the interaction to the browser it was served to (a SameSite=Lax cookie, its digest in the interaction), so the
 * attacker's copy of the form (their interaction, their CSRF token, their password) does not sign the victim's
 * browser into the attacker's account; the browser that opened the page signs in as before.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelOptions, type SentinelResponse } from '../src/index.js';
import { call, csrfOf, LOGIN_PATH, postForm, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

/** What an old Safari sends with a form post from an opaque origin, or from our own `no-referrer` page. */
const NULL_ORIGIN = { origin: 'null' };

function harness(overrides: Partial<SentinelOptions> = {}) {
  return makeSentinel({
    store: new MemoryStore(),
    ...overrides,
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      passkeys: new MemoryPasskeys(),
    },
  });
}

/** The login page as one browser gets it: its CSRF token and the cookie it keeps (sent back as `name=value`). */
async function openPage(sentinel: ReturnType<typeof harness>, interaction: string, cookie?: string) {
  const page = await call(sentinel, {
    path: LOGIN_PATH,
    query: new URLSearchParams({ interaction }),
    headers: cookie === undefined ? {} : { cookie },
  });
  expect(page.status).toBe(200);
  const line = setCookies(page).find((set) => set.startsWith('sentinel_session_login='));
  return { csrf: csrfOf(page.body), line, cookie: line?.split(';')[0] };
}

function signedIn(response: SentinelResponse): boolean {
  return setCookies(response).some((line) => line.startsWith('sentinel_session=') && !line.startsWith('sentinel_session=;'));
}

describe('the login form is tied to the browser its page was served to', () => {
  it("refuses the attacker's form posted from the victim's browser with Origin: null", async () => {
    const sentinel = harness();
    const { interaction } = await startInteraction(sentinel);
    const attacker = await openPage(sentinel, interaction); // the attacker's own browser, or a script
    const form = { csrf_token: attacker.csrf, username: USERNAME, password: PASSWORD };
    // The victim's browser: no cookie of the attacker's (a SameSite=Lax cookie is not sent cross-site anyway)…
    const forged = await postLogin(sentinel, interaction, form, undefined, undefined);
    expect(forged.status, 'a client without browser headers is not a victim: nothing changes for it').toBe(303);
    const { interaction: second } = await startInteraction(sentinel);
    const again = await openPage(sentinel, second);
    const noCookie = await postForm(sentinel, LOGIN_PATH, new URLSearchParams({ ...form, csrf_token: again.csrf }).toString(), {
      query: new URLSearchParams({ interaction: second }),
      headers: NULL_ORIGIN,
    });
    expect(noCookie.status).toBe(403);
    expect(signedIn(noCookie)).toBe(false);
    expect(noCookie.headers.location).toBeUndefined();
    // …nor with the victim's own login cookie, from a page it opened itself.
    const { interaction: own } = await startInteraction(sentinel);
    const victim = await openPage(sentinel, own);
    const withVictimCookie = await postForm(sentinel, LOGIN_PATH, new URLSearchParams({ ...form, csrf_token: again.csrf }).toString(), {
      query: new URLSearchParams({ interaction: second }),
      headers: { ...NULL_ORIGIN, cookie: victim.cookie as string },
    });
    expect(withVictimCookie.status).toBe(403);
    expect(signedIn(withVictimCookie)).toBe(false);
    // The attacker's interaction is still theirs: the refusal took nothing.
    const attackerPost = await postForm(sentinel, LOGIN_PATH, new URLSearchParams({ ...form, csrf_token: again.csrf }).toString(), {
      query: new URLSearchParams({ interaction: second }),
      headers: { ...NULL_ORIGIN, cookie: again.cookie as string },
    });
    expect(attackerPost.status).toBe(303);
  });

  it('signs in the browser that opened the page, Origin: null and all, with a cookie like the session one', async () => {
    const sentinel = harness();
    const { interaction } = await startInteraction(sentinel);
    const page = await openPage(sentinel, interaction);
    expect(page.line).toMatch(
      /^sentinel_session_login=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/sentinel; HttpOnly;( Secure;)? SameSite=Lax$/,
    );
    const done = await postLogin(
      sentinel,
      interaction,
      { csrf_token: page.csrf, username: USERNAME, password: PASSWORD },
      undefined,
      undefined,
    );
    expect(done.status).toBe(303);
    const session = setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string;
    expect(page.line?.includes('; Secure'), 'Secure where the session cookie is').toBe(session.includes('; Secure'));
    const { interaction: next } = await startInteraction(sentinel);
    const nextPage = await openPage(sentinel, next, page.cookie);
    expect(nextPage.cookie, 'one cookie per browser, kept across its sign-ins').toBe(page.cookie);
    const response = await postForm(
      sentinel,
      LOGIN_PATH,
      new URLSearchParams({ csrf_token: nextPage.csrf, username: USERNAME, password: PASSWORD }).toString(),
      {
        query: new URLSearchParams({ interaction: next }),
        headers: { ...NULL_ORIGIN, cookie: page.cookie as string },
      },
    );
    expect(response.status).toBe(303);
    expect(signedIn(response)).toBe(true);
  });

  it('a page served to another browser ties the interaction to it, and the token read before is worthless', async () => {
    const sentinel = harness();
    const { interaction } = await startInteraction(sentinel);
    const first = await openPage(sentinel, interaction);
    expect((await openPage(sentinel, interaction, first.cookie)).csrf, 'the same browser keeps its token').toBe(first.csrf);
    const second = await openPage(sentinel, interaction);
    expect(second.cookie).not.toBe(first.cookie);
    expect(second.csrf).not.toBe(first.csrf);
    const post = (csrf: string, cookie: string) =>
      postForm(sentinel, LOGIN_PATH, new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString(), {
        query: new URLSearchParams({ interaction }),
        headers: { ...NULL_ORIGIN, cookie },
      });
    expect((await post(first.csrf, first.cookie as string)).status).toBe(403);
    expect((await post(first.csrf, second.cookie as string)).status).toBe(403);
    expect((await post(second.csrf, first.cookie as string)).status).toBe(403);
    expect((await post(second.csrf, second.cookie as string)).status).toBe(303);
  });

  it('holds for the passkey endpoints of the login page too', async () => {
    const sentinel = harness();
    const { interaction } = await startInteraction(sentinel);
    const page = await openPage(sentinel, interaction);
    const options = (cookie?: string) =>
      postForm(sentinel, `${LOGIN_PATH}/passkey/options`, new URLSearchParams({ csrf_token: page.csrf }).toString(), {
        query: new URLSearchParams({ interaction }),
        headers: cookie === undefined ? NULL_ORIGIN : { ...NULL_ORIGIN, cookie },
      });
    expect((await options()).status).toBe(403);
    expect((await options(page.cookie)).status).toBe(200);
    const signIn = await postForm(
      sentinel,
      `${LOGIN_PATH}/passkey`,
      new URLSearchParams({ csrf_token: page.csrf, assertion: '{}' }).toString(),
      { query: new URLSearchParams({ interaction }), headers: NULL_ORIGIN },
    );
    expect(signIn.status).toBe(403);
  });

  it('many browsers opening one link at once: those that lose the tie are told to reload, not a 500', async () => {
    const errors: unknown[] = [];
    const sentinel = harness({ onError: (error) => void errors.push(error) });
    const { interaction } = await startInteraction(sentinel);
    // A link scanner, or a page reloaded in a loop: each GET without the cookie is another browser, re-tying the link.
    const open = () => call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    const pages = await Promise.all(Array.from({ length: 40 }, open));
    const lost = pages.filter((page) => page.status !== 200);
    expect(lost.length, 'the storm makes some lose every attempt').toBeGreaterThan(0);
    for (const page of lost) {
      expect(page.status).toBe(503);
      expect(page.headers['retry-after']).toBe('1');
      expect(page.body).toContain('Reload the page to continue.');
    }
    expect(errors, 'contention is no failure of the service').toEqual([]);
    // Still single-use and tied: a reload ties the link to this browser, whose form alone signs in, once.
    const reload = await openPage(sentinel, interaction);
    const post = (csrf: string, cookie: string) =>
      postForm(sentinel, LOGIN_PATH, new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString(), {
        query: new URLSearchParams({ interaction }),
        headers: { ...NULL_ORIGIN, cookie },
      });
    const earlier = pages.find((page) => page.status === 200) as SentinelResponse;
    const earlierCookie = setCookies(earlier)
      .find((set) => set.startsWith('sentinel_session_login='))
      ?.split(';')[0] as string;
    expect((await post(csrfOf(earlier.body), earlierCookie)).status).toBe(403);
    expect((await post(reload.csrf, reload.cookie as string)).status).toBe(303);
    expect((await post(reload.csrf, reload.cookie as string)).status).toBe(400);
  });
});
