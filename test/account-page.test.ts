/**
 * The end user's account page through `sentinel.handle()`: signing in through the login page and coming back (no
 * code issued), the page's headers, and each passkey action with its refusals (another site, a forged or stale CSRF
 * token, no session, another user's passkey, a bad attestation): refused, nothing changed, an `account.denied` event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelEvent, type SentinelOptions, type StoredPasskey } from '../src/index.js';
import { ACCOUNT_PATH, call, csrfOf, openLogin, postForm, postLogin, recordingStore, setCookies } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';
import { encodeSessionRecord, parseSessionRecord, sessionKey } from '../src/authorize/state/session.js';
import { passkeyAmr } from '../src/assurance/levels.js';
import { advanceClock, frozenClock } from './helpers/clock.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const OPTIONS = `${ACCOUNT_PATH}/account/passkeys/options`;
const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };

function harness(overrides: Partial<SentinelOptions> = {}) {
  const passkeys = new MemoryPasskeys();
  const events: SentinelEvent[] = [];
  for (const [userId, id] of [
    [USER_ID, 'cred-alice-1'],
    [USER_ID, 'cred-alice-2'],
    ['u-mallory', 'cred-mallory'],
  ] as const) {
    passkeys.save({ accountId: ACCOUNT, userId, passkey: { id, publicKey: 'pQECAyYgASFYIA', counter: 0, createdAt: Date.now() } });
  }
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      passkeys,
    },
    account: { enabled: true },
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { sentinel, passkeys, events };
}

type Harness = ReturnType<typeof harness>;

/** Opens the page without a session, signs in on the login page and follows the 303 back: the session cookie. */
async function signInToPage(h: Harness): Promise<string> {
  const start = await call(h.sentinel, { path: PAGE });
  expect(start.status).toBe(303);
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  expect(interaction).toBeTruthy();
  const csrf = await openLogin(h.sentinel, interaction);
  const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(done.status).toBe(303);
  expect(done.headers.location).toBe(PAGE);
  const cookie = setCookies(done).find((line) => line.startsWith('sentinel_session='));
  return (cookie as string).split(';')[0] as string;
}

async function openPage(h: Harness, cookie: string) {
  const page = await call(h.sentinel, { path: PAGE, headers: { cookie } });
  expect(page.status).toBe(200);
  return { page, csrf: csrfOf(page.body) };
}

function post(h: Harness, cookie: string, form: Record<string, string>, headers: Record<string, string> = SAME_ORIGIN) {
  return postForm(h.sentinel, PAGE, new URLSearchParams(form).toString(), { headers: { cookie, ...headers } });
}

/** Makes the cookie's session one a passkey signed in (as the store records it): strong enough to change passkeys. */
async function asPasskeySignIn(h: Harness, cookie: string): Promise<string> {
  const store = contextOf(h.sentinel).store;
  const key = sessionKey(cookie.slice('sentinel_session='.length));
  const record = parseSessionRecord(await store.get(key));
  if (record === null) throw new Error('no session to strengthen');
  await store.set(key, encodeSessionRecord({ ...record, amr: passkeyAmr('singleDevice') }), 60_000);
  return cookie;
}

const ids = (h: Harness, userId = USER_ID) => h.passkeys.list({ accountId: ACCOUNT, userId }).map((passkey) => passkey.id);

describe('account page', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers 404 while the option is off', async () => {
    const sentinel = makeSentinel();
    const response = await call(sentinel, { path: PAGE });
    expect(response.status).toBe(404);
  });

  it('signs a browser in through the login page and back, with the session and no code', async () => {
    const h = harness();
    const start = await call(h.sentinel, { path: PAGE });
    const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
    const login = await call(h.sentinel, { path: `${ACCOUNT_PATH}/login`, query: new URLSearchParams({ interaction }) });
    expect(login.body).toContain('Your account');
    const cookie = await signInToPage(h);
    expect(h.events.some((event) => event.type === 'code.issued')).toBe(false);
    const { page } = await openPage(h, cookie);
    expect(page.body).toContain(`<strong><bdi>${USER_ID}</bdi></strong>`);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/style-src 'nonce-[^']+'/);
    expect(csp).toMatch(/script-src 'nonce-[^']+'/);
  });

  it('a session of another account is not a session here', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const other = await call(h.sentinel, { path: `/sentinel/api/account/${OTHER_ACCOUNT}/account`, headers: { cookie } });
    expect(other.status).toBe(303);
    expect(String(other.headers.location)).toContain(`/account/${OTHER_ACCOUNT}/login?interaction=`);
  });

  it('cancelling the sign-in comes back to a "not signed in" page, not to an app', async () => {
    const h = harness();
    const start = await call(h.sentinel, { path: PAGE });
    const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
    const csrf = await openLogin(h.sentinel, interaction);
    const cancelled = await postLogin(h.sentinel, interaction, { csrf_token: csrf, cancel: '1' });
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.location).toBe(`${PAGE}?signin=cancelled`);
    const page = await call(h.sentinel, { path: PAGE, query: 'signin=cancelled' });
    expect(page.status).toBe(200);
    expect(page.body).toContain('You are not signed in.');
  });

  it('keeps ?ui_locales= through the sign-in, every form, the pager and the redirect after an action', async () => {
    const h = harness();
    for (let index = 0; index < 20; index++) {
      const id = `cred-more-${String(index).padStart(2, '0')}`;
      h.passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: { id, publicKey: 'pQE', counter: 0, createdAt: index } });
    }
    const german = `${PAGE}?ui_locales=de`;
    const lang = (body: unknown) => /<html lang="([^"]*)"/.exec(String(body))?.[1];
    const begin = async () => {
      const start = await call(h.sentinel, { path: PAGE, query: 'ui_locales=de' });
      const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
      return { interaction, csrf: await openLogin(h.sentinel, interaction) };
    };
    // Cancelled: the "not signed in" page in German, its link asking for German again.
    const first = await begin();
    const cancelled = await postLogin(h.sentinel, first.interaction, { csrf_token: first.csrf, cancel: '1' });
    expect(cancelled.headers.location).toBe(`${german}&signin=cancelled`);
    const notSignedIn = await call(h.sentinel, { path: PAGE, query: 'ui_locales=de&signin=cancelled' });
    expect(lang(notSignedIn.body)).toBe('de');
    expect(notSignedIn.body).toContain(`href="${german}"`);
    // Signed in: back to the page in German, whatever the browser prefers.
    const second = await begin();
    const done = await postLogin(h.sentinel, second.interaction, { csrf_token: second.csrf, username: USERNAME, password: PASSWORD });
    expect(done.headers.location).toBe(german);
    const cookie = await asPasskeySignIn(
      h,
      (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string,
    );
    const headers = { cookie, 'accept-language': 'fr' };
    const page = await call(h.sentinel, { path: PAGE, query: 'ui_locales=de', headers });
    expect(lang(page.body)).toBe('de');
    expect(page.body).toContain(`<form method="post" action="${german}">`);
    expect(page.body).not.toMatch(new RegExp(`action="${PAGE}"`));
    expect(page.body).toContain(`action="/sentinel/api/account/${ACCOUNT}/logout?ui_locales=de"`);
    expect(page.body).toContain(`href="${german}&amp;passkeys=2#passkeys-heading"`);
    // An action: the redirect keeps the language, and the page after it says what was done in German.
    const removed = await postForm(
      h.sentinel,
      PAGE,
      new URLSearchParams({ csrf_token: csrfOf(page.body), action: 'remove-passkey', credential_id: 'cred-alice-1' }).toString(),
      {
        query: 'ui_locales=de',
        headers: { ...headers, ...SAME_ORIGIN },
      },
    );
    expect(removed.headers.location).toBe(`${german}&done=passkey-removed`);
    const after = await call(h.sentinel, { path: PAGE, query: 'ui_locales=de&done=passkey-removed', headers });
    expect(lang(after.body)).toBe('de');
    expect(after.body).toContain('Der Passkey wurde entfernt.');
  });

  it("lists the user's own passkeys only, and removes one", async () => {
    const h = harness();
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { page, csrf } = await openPage(h, cookie);
    expect(page.body).toContain('data-passkey="cred-alice-1"');
    expect(page.body).not.toContain('cred-mallory');
    // Each Remove button is described by its own row, so a screen reader tells them apart.
    for (const index of [0, 1]) {
      expect(page.body).toContain(`<div id="passkey-${index}">`);
      expect(page.body).toContain(`aria-describedby="passkey-${index}"`);
    }
    const removed = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(removed.status).toBe(303);
    expect(removed.headers.location).toBe(`${PAGE}?done=passkey-removed`);
    expect(ids(h)).toEqual(['cred-alice-2']);
    expect(h.events.filter((event) => event.type === 'passkey.removed')).toHaveLength(1);
    const after = await call(h.sentinel, { path: PAGE, query: 'done=passkey-removed', headers: { cookie } });
    expect(after.body).toContain('The passkey was removed.');
  });

  it('removes no passkey on a sign-in weaker than the user has: no Remove button, 403, nothing removed', async () => {
    const h = harness();
    const cookie = await signInToPage(h); // a password alone, for a user who has passkeys
    const { page, csrf } = await openPage(h, cookie);
    expect(page.body).toContain('data-passkey="cred-alice-1"');
    expect(page.body).not.toContain('value="remove-passkey"');
    expect(page.body).toContain(`href="${PAGE}?step_up=passkey"`);
    expect(page.body).toContain('Sign in again with your second factor or passkey to add or remove a passkey');
    const refused = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('to add or remove a passkey');
    // Nor does it learn which ids are hers: another user's passkey gets the same answer.
    const other = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-mallory' });
    expect(other.status).toBe(403);
    expect(ids(h)).toEqual(['cred-alice-1', 'cred-alice-2']);
    expect(h.events.some((event) => event.type === 'passkey.removed')).toBe(false);
    // A TOTP user's password-only sign-in neither (the TOTP step is the level).
    const totp = harness({
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        passkeys: h.passkeys,
        totpSecret: async () => 'JBSWY3DPEHPK3PXP',
      },
    });
    const totpCookie = await signInToPage(totp);
    const { csrf: totpCsrf } = await openPage(totp, totpCookie);
    const totpRefused = await post(totp, totpCookie, { csrf_token: totpCsrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(totpRefused.status).toBe(403);
    expect(ids(h)).toEqual(['cred-alice-1', 'cred-alice-2']);
    // Signing out the other sessions stays open to every sign-in (the way to end an intruder's): it grants no level.
    const others = await post(h, cookie, { csrf_token: csrf, action: 'end-other-sessions' });
    expect(others.headers.location).toBe(`${PAGE}?done=others-ended`);
  });

  it("shows the page with a placeholder for a passkey whose createdAt is no time (NaN, beyond a Date's range)", async () => {
    const errors: unknown[] = [];
    const h = harness({ onError: (error: unknown) => void errors.push(error) });
    const cookie = await signInToPage(h);
    for (const [index, createdAt] of [Number.NaN, 1e17, -1e17, Number.POSITIVE_INFINITY, 'soon' as unknown as number].entries()) {
      h.passkeys.save({
        accountId: ACCOUNT,
        userId: USER_ID,
        passkey: { id: `cred-odd-${index}`, publicKey: 'pQE', counter: 0, createdAt },
      });
      const page = await call(h.sentinel, { path: PAGE, headers: { cookie } });
      expect(page.status, String(createdAt)).toBe(200);
      expect(page.body, String(createdAt)).toContain(`data-passkey="cred-odd-${index}"`);
      expect(page.body, String(createdAt)).toContain('Added —');
    }
    expect(errors).toEqual([]);
  });

  it("greets the user by the claims hook's name when the hooks are methods of a class (called on their object)", async () => {
    // A user store written as a class: its methods reach their state through `this`, as UserInfo calls them.
    class Directory {
      readonly names = new Map([[USER_ID, 'Alice Liddell']]);
      async authenticate(input: { username: string; password: string }) {
        return input.username === USERNAME && input.password === PASSWORD ? { id: USER_ID } : null;
      }
      async claims(input: { userId: string }) {
        return { name: this.names.get(input.userId) };
      }
    }
    const h = harness({ users: new Directory() });
    const cookie = await signInToPage(h);
    const { page } = await openPage(h, cookie);
    expect(page.body).toContain('<strong><bdi>Alice Liddell</bdi></strong>');
  });

  it('a user the claims hook says is gone (disabled, deleted) changes nothing on a session left open, and sees no page', async () => {
    const gone = { now: false };
    const passkeys = new MemoryPasskeys();
    passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: { id: 'cred-alice-1', publicKey: 'pQE', counter: 0, createdAt: 1 } });
    const h = harness({
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        passkeys,
        claims: async () => (gone.now ? null : { name: 'Alice' }),
      },
    });
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { csrf } = await openPage(h, cookie);
    // The host disables the user (a compromised account, say); the browser's session is still open.
    gone.now = true;
    const page = await call(h.sentinel, { path: PAGE, headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('You are not signed in.');
    expect(page.body).not.toContain('csrf_token');
    const removed = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(removed.status).toBe(403);
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(403);
    expect(passkeys.list({ accountId: ACCOUNT, userId: USER_ID }).map((passkey) => passkey.id)).toEqual(['cred-alice-1']);
    const reasons = h.events.flatMap((event) => (event.type === 'account.denied' ? [event.reason] : []));
    expect(reasons).toEqual(['user gone', 'user gone']);
  });

  it("signs someone else in on the browser of a user the host says is gone: its 'Sign in' link does not loop", async () => {
    const gone = new Set<string>();
    const h = harness({
      users: {
        authenticate: async ({ username, password }) =>
          password !== PASSWORD ? null : username === USERNAME ? { id: USER_ID } : username === 'bob' ? { id: 'u-bob' } : null,
        claims: async ({ userId }) => (gone.has(userId) ? null : { name: userId === USER_ID ? 'Alice' : 'Bob' }),
      },
    });
    const alice = await signInToPage(h);
    // The host disables Alice; her session is still open on this (shared) computer.
    gone.add(USER_ID);
    const shown = await call(h.sentinel, { path: PAGE, headers: { cookie: alice } });
    expect(shown.body).toContain('You are not signed in.');
    const link = /<a href="([^"]+)">Sign in<\/a>/.exec(String(shown.body))?.[1]?.replaceAll('&amp;', '&') as string;
    // Following it leads to the login page, not to the same "not signed in" page again.
    const followed = await call(h.sentinel, { path: link, headers: { cookie: alice } });
    expect(followed.status).toBe(303);
    const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(followed.headers.location))?.[1] as string;
    expect(interaction).toBeTruthy();
    const csrf = await openLogin(h.sentinel, interaction);
    const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: 'bob', password: PASSWORD }, undefined, alice);
    expect(done.headers.location).toBe(PAGE);
    const bob = (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
    const page = await call(h.sentinel, { path: PAGE, headers: { cookie: bob } });
    expect(page.body).toContain('<strong><bdi>Bob</bdi></strong>');
    // A live user's page is not left by the link: it shows the page, and starts no sign-in.
    const live = await call(h.sentinel, { path: PAGE, query: 'signin=again', headers: { cookie: bob } });
    expect(live.status).toBe(200);
    expect(live.body).toContain('<strong><bdi>Bob</bdi></strong>');
  });

  it('says a passkey was removed when onEvent throws on passkey.removed: it is gone, and onError hears why', async () => {
    const errors: unknown[] = [];
    const seen: SentinelEvent[] = [];
    const h = harness({
      onEvent: (event) => {
        seen.push(event);
        if (event.type === 'passkey.removed') throw new Error('audit sink down');
      },
      onError: (error) => {
        errors.push(error);
      },
    });
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { csrf } = await openPage(h, cookie);
    const removed = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(removed.status).toBe(303);
    expect(removed.headers.location).toBe(`${PAGE}?done=passkey-removed`);
    expect(ids(h)).toEqual(['cred-alice-2']);
    expect(seen.filter((event) => event.type === 'passkey.removed')).toHaveLength(1);
    expect(errors.map(String)).toEqual(['Error: audit sink down']);
  });

  it('shows no notice for a ?done= that names none, an inherited property name included', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    for (const done of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'nope']) {
      const page = await call(h.sentinel, { path: PAGE, query: new URLSearchParams({ done }), headers: { cookie } });
      expect(page.status, done).toBe(200);
      expect(page.body, done).not.toContain('role="status"');
      expect(page.body, done).not.toContain('role="alert"');
    }
  });

  it("refuses a forged, missing or other session's CSRF token: 403, nothing removed, account.denied", async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const otherCookie = await signInToPage(h);
    const { csrf: otherCsrf } = await openPage(h, otherCookie);
    const forms: Record<string, string>[] = [
      { action: 'remove-passkey', credential_id: 'cred-alice-1' },
      { csrf_token: 'x'.repeat(43), action: 'remove-passkey', credential_id: 'cred-alice-1' },
      { csrf_token: otherCsrf, action: 'remove-passkey', credential_id: 'cred-alice-1' },
    ];
    for (const form of forms) {
      const refused = await post(h, cookie, form);
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('The page is out of date.');
    }
    expect(ids(h)).toEqual(['cred-alice-1', 'cred-alice-2']);
    const denied = h.events.filter((event) => event.type === 'account.denied');
    expect(denied.map((event) => event.type === 'account.denied' && event.reason)).toEqual(Array(3).fill('wrong CSRF token'));
    expect(denied.every((event) => event.outcome === 'failure')).toBe(true);
  });

  it("a post refused for its CSRF token writes nothing, not even the session's idle timeout; a right one extends it", async () => {
    const store = recordingStore(new MemoryStore());
    const h = harness({ store });
    const cookie = await signInToPage(h);
    const { csrf } = await openPage(h, cookie);
    const key = sessionKey(cookie.slice('sentinel_session='.length));
    store.reset();
    // No token (what a sandboxed page on another site can send from an old browser, Origin: null), a forged one.
    for (const form of [{ action: 'end-other-sessions' }, { csrf_token: 'x'.repeat(43), action: 'end-other-sessions' }] as Record<
      string,
      string
    >[]) {
      const refused = await post(h, cookie, form, { origin: 'null' });
      expect(refused.status).toBe(403);
    }
    expect(store.writes).toEqual([]);
    const accepted = await post(h, cookie, { csrf_token: csrf, action: 'end-other-sessions' });
    expect(accepted.status).toBe(303);
    expect(store.writes).toContainEqual({ op: 'swap', key });
  });

  it('refuses a repeated or malformed CSRF token as a wrong one: 403 and account.denied, on the page and the options', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const { csrf } = await openPage(h, cookie);
    const headers = { cookie, ...SAME_ORIGIN };
    const bodies: unknown[] = [
      `csrf_token=${csrf}&csrf_token=${csrf}&action=end-other-sessions`,
      `csrf_token=${csrf}&csrf_token=x&action=end-other-sessions`,
      { csrf_token: [csrf, csrf], action: 'end-other-sessions' },
      { csrf_token: { value: csrf }, action: 'end-other-sessions' },
    ];
    for (const body of bodies) {
      for (const path of [PAGE, OPTIONS]) {
        const refused = await postForm(h.sentinel, path, body as never, { headers });
        expect(refused.status, `${path} ${JSON.stringify(body)}`).toBe(403);
      }
    }
    const reasons = h.events.flatMap((event) => (event.type === 'account.denied' ? [event.reason] : []));
    expect(reasons).toEqual(Array(bodies.length * 2).fill('wrong CSRF token'));
    expect(h.events.some((event) => event.type === 'session.ended')).toBe(false);
    // A host parser's one-element array is the one token.
    const parsed = await postForm(h.sentinel, PAGE, { csrf_token: [csrf], action: 'end-other-sessions' } as never, { headers });
    expect(parsed.status).toBe(303);
  });

  it('refuses a post from another site before reading it, and one without a session', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const { csrf } = await openPage(h, cookie);
    const form = { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' };
    const crossSite = await post(h, cookie, form, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    const noSession = await post(h, 'sentinel_session=unknown', form);
    expect(noSession.status).toBe(403);
    expect(ids(h)).toEqual(['cred-alice-1', 'cred-alice-2']);
    const reasons = h.events.flatMap((event) => (event.type === 'account.denied' ? [event.reason] : []));
    expect(reasons).toEqual(['posted from another site', 'no live session']);
  });

  it("refuses to remove another user's passkey (400, nothing changed)", async () => {
    const h = harness();
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { csrf } = await openPage(h, cookie);
    const refused = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-mallory' });
    expect(refused.status).toBe(400);
    expect(ids(h, 'u-mallory')).toEqual(['cred-mallory']);
    expect(h.events.some((event) => event.type === 'passkey.removed')).toBe(false);
  });

  it("says so in the page's language when the passkey is not the user's", async () => {
    const h = harness();
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { csrf } = await openPage(h, cookie);
    const form = { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-mallory' };
    const german = await post(h, cookie, form, { ...SAME_ORIGIN, 'accept-language': 'de' });
    expect(german.status).toBe(400);
    expect(german.body).toContain('Dieser Passkey gehört nicht dir, oder er wurde schon entfernt.');
    expect(german.body).not.toContain('lang="en"');
    const english = await post(h, cookie, form);
    expect(english.body).toContain('That passkey is not one of yours, or it was already removed.');
    expect(ids(h, 'u-mallory')).toEqual(['cred-mallory']);
  });

  it('pages a long list of passkeys, 20 to a page, keeping the other lists where they were', async () => {
    const h = harness();
    for (let index = 0; index < 43; index++) {
      const id = `cred-extra-${String(index).padStart(2, '0')}`;
      h.passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: { id, publicKey: 'pQE', counter: 0, createdAt: index } });
    }
    const cookie = await signInToPage(h);
    const shown = (body: unknown) => [...String(body).matchAll(/data-passkey="([^"]+)"/g)].length;
    const first = await call(h.sentinel, { path: PAGE, headers: { cookie } });
    expect(shown(first.body)).toBe(20);
    expect(first.body).toContain('Page 1 of 3');
    expect(first.body).toContain(`href="${PAGE}?passkeys=2#passkeys-heading"`);
    const last = await call(h.sentinel, { path: PAGE, query: 'passkeys=3&sessions=1', headers: { cookie } });
    expect(shown(last.body)).toBe(5);
    expect(last.body).toContain('Page 3 of 3');
    expect(last.body).toContain(`href="${PAGE}?passkeys=2#passkeys-heading"`);
    expect(last.body).not.toContain('rel="next"');
    // Beyond the last page, or not a number: the nearest page there is.
    expect(shown((await call(h.sentinel, { path: PAGE, query: 'passkeys=99', headers: { cookie } })).body)).toBe(5);
    expect(shown((await call(h.sentinel, { path: PAGE, query: 'passkeys=-1', headers: { cookie } })).body)).toBe(20);
  });

  it('offers no removal when the hooks have no remove()', async () => {
    const passkeys = new MemoryPasskeys();
    const hooks = {
      list: passkeys.list.bind(passkeys),
      save: passkeys.save.bind(passkeys),
      updateCounter: passkeys.updateCounter.bind(passkeys),
    };
    passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: { id: 'cred-1', publicKey: 'pQE', counter: 0, createdAt: Date.now() } });
    const h = harness({
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        passkeys: hooks,
      },
    });
    const cookie = await signInToPage(h);
    const { page, csrf } = await openPage(h, cookie);
    expect(page.body).toContain('data-passkey="cred-1"');
    expect(page.body).not.toContain('name="credential_id"');
    const refused = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-1' });
    expect(refused.status).toBe(400);
    expect(passkeys.list({ accountId: ACCOUNT, userId: USER_ID })).toHaveLength(1);
  });

  it("names a new passkey by the user's sign-in name from the claims hook, not the opaque user id", async () => {
    const claimed = (claims: Record<string, unknown>) =>
      harness({
        users: {
          authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
          passkeys: new MemoryPasskeys(),
          claims: async () => ({ sub: USER_ID, ...claims }),
        },
      });
    for (const [claims, name] of [
      [{ preferred_username: 'alice', email: 'alice@example.com' }, 'alice'],
      [{ email: 'alice@example.com' }, 'alice@example.com'],
      [{ preferred_username: '  ' }, USER_ID],
    ] as const) {
      const h = claimed(claims);
      const cookie = await signInToPage(h);
      const { csrf } = await openPage(h, cookie);
      const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
      expect(options.status).toBe(200);
      expect((JSON.parse(String(options.body)) as { user: { name: string } }).user.name).toBe(name);
    }
  });

  it('leaves out of the creation options the transports a host store answers as null (the browser refuses null)', async () => {
    const h = harness();
    for (const id of ids(h)) h.passkeys.remove({ accountId: ACCOUNT, userId: USER_ID, credentialId: id });
    const legacy = { id: 'cred-alice-old', publicKey: 'pQECAyYgASFYIA', counter: 0, transports: null, createdAt: 1 };
    h.passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: legacy as unknown as StoredPasskey });
    const cookie = await asPasskeySignIn(h, await signInToPage(h));
    const { csrf } = await openPage(h, cookie);
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(200);
    const json = JSON.parse(String(options.body)) as { excludeCredentials: Record<string, unknown>[] };
    expect(json.excludeCredentials).toEqual([{ id: 'cred-alice-old', type: 'public-key' }]);
  });

  it('answers creation options only to the signed-in page, and saves nothing for a bad attestation', async () => {
    const h = harness();
    // Alice's passkeys are someone else's here: she has none, so her password is the strongest sign-in she has.
    for (const id of ids(h)) h.passkeys.remove({ accountId: ACCOUNT, userId: USER_ID, credentialId: id });
    const cookie = await signInToPage(h);
    const { csrf } = await openPage(h, cookie);
    const forged = await postForm(h.sentinel, OPTIONS, 'csrf_token=nope', { headers: { cookie, ...SAME_ORIGIN } });
    expect(forged.status).toBe(403);
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(200);
    const json = JSON.parse(String(options.body)) as { challenge: string; excludeCredentials: { id: string }[] };
    expect(json.excludeCredentials).toEqual([]);
    const bad = await post(h, cookie, { csrf_token: csrf, action: 'add-passkey', attestation: '{"type":"public-key"}' });
    expect(bad.headers.location).toBe(`${PAGE}?done=passkey-not-added`);
    expect(ids(h)).toHaveLength(0);
    // The challenge was spent by the failed attempt: a second answer meets none.
    const again = await post(h, cookie, { csrf_token: csrf, action: 'add-passkey', attestation: '' });
    expect(again.headers.location).toBe(`${PAGE}?done=passkey-not-added`);
    expect(h.events.some((event) => event.type === 'passkey.added')).toBe(false);
  });

  it('adds no passkey on a sign-in weaker than the user has: it links to a sign-in at that level instead', async () => {
    for (const [label, user, level] of [
      ['a passkey', {}, 'urn:sentinel:acr:phishing-resistant'],
      ['a TOTP secret', { totpSecret: async () => 'JBSWY3DPEHPK3PXP' }, 'urn:sentinel:acr:mfa'],
    ] as const) {
      const h = harness();
      if (label === 'a TOTP secret') {
        for (const id of ids(h)) h.passkeys.remove({ accountId: ACCOUNT, userId: USER_ID, credentialId: id });
      }
      const sentinel = makeSentinel({
        store: new MemoryStore(),
        users: {
          authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
          passkeys: h.passkeys,
          ...user,
        },
        account: { enabled: true },
      });
      const weak = { ...h, sentinel };
      const cookie = await signInToPage(weak);
      const { page, csrf } = await openPage(weak, cookie);
      expect(page.body, label).toContain(`href="${PAGE}?step_up=passkey"`);
      expect(page.body, label).not.toContain('id="passkey-button"');
      const options = await postForm(sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
      expect(options.status, label).toBe(403);
      const added = await post(weak, cookie, { csrf_token: csrf, action: 'add-passkey', attestation: '{"type":"public-key"}' });
      expect(added.headers.location, label).toBe(`${PAGE}?done=passkey-not-added`);
      // The link starts a sign-in whose interaction asks for the level.
      const stepUp = await call(sentinel, { path: PAGE, query: 'step_up=passkey', headers: { cookie } });
      expect(stepUp.status, label).toBe(303);
      const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(stepUp.headers.location))?.[1] as string;
      const stored = JSON.parse((await contextOf(sentinel).store.get(`interaction:${interaction}`)) as string) as {
        request: { acr?: string };
      };
      expect(stored.request.acr, label).toBe(level);
    }
  });

  it('a step-up sign-in that cannot reach the level comes back to the page with unmet_authentication_requirements', async () => {
    // Alice's level is a passkey's (she has two): Bob's password, on her step-up's login page, reaches nothing. And
    // with no passkey but an 80-bit TOTP secret (counted for the level, unusable for the step) her own password
    // reaches nothing either. Both once answered the 400 page of an app gone from the app store ("no longer accepts
    // sign-ins"), for a sign-in no app is behind.
    for (const [label, user, username] of [
      ["another user on Alice's step-up", {}, 'bob'],
      ['a TOTP secret the step cannot use', { totpSecret: async () => 'JBSWY3DPEHPK3PXP' }, USERNAME],
    ] as const) {
      const h = harness();
      if (username === USERNAME) {
        for (const id of ids(h)) h.passkeys.remove({ accountId: ACCOUNT, userId: USER_ID, credentialId: id });
      }
      const sentinel = makeSentinel({
        store: new MemoryStore(),
        users: {
          authenticate: async ({ username: typed, password }) =>
            password !== PASSWORD ? null : typed === USERNAME ? { id: USER_ID } : typed === 'bob' ? { id: 'u-bob' } : null,
          passkeys: h.passkeys,
          ...user,
        },
        account: { enabled: true },
        onEvent: (event) => h.events.push(event),
      });
      const cookie = await signInToPage({ ...h, sentinel });
      const stepUp = await call(sentinel, { path: PAGE, query: 'step_up=passkey', headers: { cookie } });
      const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(stepUp.headers.location))?.[1] as string;
      const csrf = await openLogin(sentinel, interaction);
      const done = await postLogin(sentinel, interaction, { csrf_token: csrf, username, password: PASSWORD });
      expect(done.status, label).toBe(303);
      const back = new URL(String(done.headers.location));
      expect(back.pathname, label).toBe(PAGE);
      expect(back.searchParams.get('error'), label).toBe('unmet_authentication_requirements');
      expect(
        setCookies(done).filter((line) => line.startsWith('sentinel_session=')),
        label,
      ).toEqual([]);
      expect(h.events.at(-1), label).toMatchObject({ type: 'authorize.denied', error: 'unmet_authentication_requirements' });
      // The browser's session is as it was: the page still opens with it.
      expect((await call(sentinel, { path: PAGE, headers: { cookie } })).status, label).toBe(200);
    }
  });

  it('refuses an unknown action', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const { csrf } = await openPage(h, cookie);
    const refused = await post(h, cookie, { csrf_token: csrf, action: 'drop-tables' });
    expect(refused.status).toBe(400);
  });

  it('refuses to add or remove a passkey on a sign-in older than account.maxSignInAge, audited, and signs in again', async () => {
    const h = harness();
    const cookie = await asPasskeySignIn(h, await signInToPage(h)); // as strong as any sign-in Alice has, but it ages
    advanceClock(600); // the default bound itself is too old, as max_age's is
    const { page, csrf } = await openPage(h, cookie);
    expect(page.body).not.toContain('value="remove-passkey"');
    expect(page.body).not.toContain('id="passkey-button"');
    expect(page.body).toContain(`href="${PAGE}?step_up=passkey"`);
    expect(page.body).toContain('Sign in again to add or remove a passkey');
    const removed = await post(h, cookie, { csrf_token: csrf, action: 'remove-passkey', credential_id: 'cred-alice-1' });
    expect(removed.status).toBe(403);
    expect(removed.body).toContain('Sign in again to add or remove a passkey');
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(403);
    const added = await post(h, cookie, { csrf_token: csrf, action: 'add-passkey', attestation: '{"type":"public-key"}' });
    expect(added.headers.location).toBe(`${PAGE}?done=passkey-not-added`);
    expect(ids(h)).toEqual(['cred-alice-1', 'cred-alice-2']);
    const denied = h.events.flatMap((event) => (event.type === 'account.denied' ? [event.reason] : []));
    expect(denied).toEqual(Array(3).fill('sign-in older than account.maxSignInAge, for a passkey change'));
    // Ending sessions stays open to it: it takes access away, and is how a user ends an intruder's session.
    const others = await post(h, cookie, { csrf_token: csrf, action: 'end-other-sessions' });
    expect(others.headers.location).toBe(`${PAGE}?done=others-ended`);
    // The link asks for a new sign-in (prompt=login, what a host's own login page is told) at the user's level.
    const stepUp = await call(h.sentinel, { path: PAGE, query: 'step_up=passkey', headers: { cookie } });
    const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(stepUp.headers.location))?.[1] as string;
    const stored = JSON.parse((await contextOf(h.sentinel).store.get(`interaction:${interaction}`)) as string) as {
      request: { acr?: string; prompt?: string[] };
    };
    expect(stored.request).toMatchObject({ acr: 'urn:sentinel:acr:phishing-resistant', prompt: ['login'] });
  });

  it('a new sign-in after account.maxSignInAge adds a passkey again, and the window is an option', async () => {
    const h = harness({ account: { enabled: true, maxSignInAge: 120 } });
    // Without passkeys (nor a TOTP secret) the password is Alice's strongest sign-in: only its age counts.
    for (const id of ids(h)) h.passkeys.remove({ accountId: ACCOUNT, userId: USER_ID, credentialId: id });
    // Frozen, so the age is exactly what the test says: the real clock could carry 119 s over a second boundary.
    const clock = frozenClock();
    const old = await signInToPage(h);
    clock.at(119);
    expect((await openPage(h, old)).page.body).toContain('id="passkey-button"');
    clock.at(120);
    const { page, csrf } = await openPage(h, old);
    expect(page.body).toContain('Sign in again to add or remove a passkey');
    expect((await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie: old, ...SAME_ORIGIN } })).status).toBe(403);
    const stepUp = await call(h.sentinel, { path: PAGE, query: 'step_up=passkey', headers: { cookie: old } });
    const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(stepUp.headers.location))?.[1] as string;
    const login = await openLogin(h.sentinel, interaction);
    const done = await postLogin(h.sentinel, interaction, { csrf_token: login, username: USERNAME, password: PASSWORD });
    expect(done.headers.location).toBe(PAGE);
    const fresh = (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
    const again = await openPage(h, fresh);
    expect(again.page.body).toContain('id="passkey-button"');
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${again.csrf}`, { headers: { cookie: fresh, ...SAME_ORIGIN } });
    expect(options.status).toBe(200);
    // Bounded: no window so short that nothing can be done, nor so long that it means any sign-in.
    for (const maxSignInAge of [0, 59, 3601, 1.5]) {
      expect(() => makeSentinel({ account: { enabled: true, maxSignInAge } }), String(maxSignInAge)).toThrow(/maxSignInAge/);
    }
  });
});
