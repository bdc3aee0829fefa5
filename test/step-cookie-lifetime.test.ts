/**
 * The lifetime of the step cookies (`sentinel_session_step_…`, one per interaction parked at a step): a sign-in that
 * ends (signed in, cancelled, found gone) removes its own, and a browser never holds more than MAX_STEP_COOKIES of
 * them, however many sign-ins it leaves at a step, so they never crowd out the session cookie. The browser is a
 * small cookie jar that applies every `Set-Cookie` as RFC 6265 §5.3 does and sends them oldest first (§5.4).
 */
import { generate, generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import type { SentinelResponse } from '../src/index.js';
import { MemoryPasskeys, MemoryStore } from '../src/index.js';
import { call, csrfOf, LOGIN_PATH, openLogin, postForm, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const STEP = /^sentinel_session_step_/;
/** step-cookie.ts MAX_STEP_COOKIES: sign-ins a browser may keep parked at a step at once. */
const MAX_STEP_COOKIES = 8;

/** A browser's cookies of the service's path, in the order it made them (a replaced cookie keeps its place). */
class Jar {
  readonly cookies = new Map<string, string>();

  take(response: SentinelResponse): void {
    for (const line of setCookies(response)) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const gone = attributes.some((a) => /^max-age=0$/i.test(a) || /^expires=.*1970/i.test(a));
      if (gone || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  steps(): string[] {
    return [...this.cookies.keys()].filter((name) => STEP.test(name));
  }
}

function world(passkeys = false) {
  const secret = generateSecret();
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) =>
        username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null,
      totpSecret: async () => secret,
      ...(passkeys ? { passkeys: new MemoryPasskeys() } : {}),
    },
    ...(passkeys ? { passkeys: { offerRegistration: true } } : {}),
  });
  return { sentinel, secret, jar: new Jar() };
}

type World = ReturnType<typeof world>;

/** A sign-in of the jar's browser parked at the TOTP step: its interaction and the step page's CSRF token. */
async function parkAtTotp(w: World): Promise<{ interaction: string; loginCsrf: string; csrf: string }> {
  const { interaction } = await startInteraction(w.sentinel);
  const loginCsrf = await openLogin(w.sentinel, interaction);
  const passed = await postLogin(
    w.sentinel,
    interaction,
    { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD },
    undefined,
    w.jar.header(),
  );
  expect(passed.status).toBe(303);
  w.jar.take(passed);
  const page = await call(w.sentinel, {
    path: TOTP_PATH,
    query: new URLSearchParams({ interaction }),
    headers: { cookie: w.jar.header() },
  });
  expect(page.status, 'the newest step opens in this browser').toBe(200);
  return { interaction, loginCsrf, csrf: csrfOf(page.body) };
}

async function answerTotp(w: World, step: { interaction: string; csrf: string }): Promise<SentinelResponse> {
  const code = await generate({ secret: w.secret });
  const response = await postForm(w.sentinel, TOTP_PATH, new URLSearchParams({ csrf_token: step.csrf, code }).toString(), {
    query: new URLSearchParams({ interaction: step.interaction }),
    headers: { cookie: w.jar.header() },
  });
  w.jar.take(response);
  return response;
}

describe('step cookies end with their sign-in', () => {
  it('a sign-in that passes its step removes its step cookie and keeps the session cookie', async () => {
    const w = world();
    const step = await parkAtTotp(w);
    expect(w.jar.steps()).toHaveLength(1);
    const done = await answerTotp(w, step);
    expect(done.status).toBe(303);
    expect(new URL(String(done.headers.location)).searchParams.get('code')).toBeTruthy();
    expect(w.jar.steps(), 'the step cookie went with the sign-in').toEqual([]);
    expect(w.jar.cookies.has('sentinel_session')).toBe(true);
  });

  it('"Not now" on the passkey offer removes the step cookie', async () => {
    const w = world(true);
    const step = await parkAtTotp(w);
    const offered = await answerTotp(w, step);
    expect(String(offered.headers.location)).toContain('/passkey/register');
    expect(w.jar.steps(), 'the offer is tied afresh, under the same name').toHaveLength(1);
    const query = new URLSearchParams({ interaction: step.interaction });
    const offer = await call(w.sentinel, { path: `${LOGIN_PATH}/passkey/register`, query, headers: { cookie: w.jar.header() } });
    expect(offer.status).toBe(200);
    const skip = await postForm(
      w.sentinel,
      `${LOGIN_PATH}/passkey/register`,
      new URLSearchParams({ csrf_token: csrfOf(offer.body), skip: '1' }).toString(),
      { query, headers: { cookie: w.jar.header() } },
    );
    expect(skip.status).toBe(303);
    w.jar.take(skip);
    expect(w.jar.steps()).toEqual([]);
    expect(w.jar.cookies.has('sentinel_session')).toBe(true);
  });

  it('Cancel on the login page of a sign-in parked at its step removes the step cookie', async () => {
    const w = world();
    const step = await parkAtTotp(w);
    const cancelled = await postLogin(w.sentinel, step.interaction, { csrf_token: step.loginCsrf, cancel: '1' }, undefined, w.jar.header());
    expect(cancelled.status).toBe(303);
    expect(new URL(String(cancelled.headers.location)).searchParams.get('error')).toBe('access_denied');
    w.jar.take(cancelled);
    expect(w.jar.steps()).toEqual([]);
  });

  it('the step page of a sign-in that is gone answers the gone-link page and removes the step cookie', async () => {
    const w = world();
    const step = await parkAtTotp(w);
    // Another tab of the same browser cancelled it: this tab's step page is reloaded afterwards.
    const cancelled = await postLogin(w.sentinel, step.interaction, { csrf_token: step.loginCsrf, cancel: '1' }, undefined, w.jar.header());
    expect(cancelled.status).toBe(303);
    const stale = w.jar.header();
    const page = await call(w.sentinel, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: step.interaction }),
      headers: { cookie: stale },
    });
    expect(page.status).toBe(400);
    expect(page.body).toContain('invalid or has expired');
    const removed = setCookies(page);
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatch(/^sentinel_session_step_[^=]+=;.*Expires=Thu, 01 Jan 1970/);
    expect(stale).toContain((removed[0] as string).split('=')[0]);
  });

  it('a step still open is not removed by a stale page of another: only a gone interaction removes its cookie', async () => {
    const w = world(true);
    const step = await parkAtTotp(w);
    await answerTotp(w, step);
    // The TOTP page again (Back) while the passkey offer is open: gone-link answer, but the offer's tie stays.
    const back = await call(w.sentinel, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: step.interaction }),
      headers: { cookie: w.jar.header() },
    });
    expect(back.status).toBe(400);
    expect(setCookies(back)).toEqual([]);
  });
});

describe('step cookies are bounded', () => {
  it(`a browser leaving many sign-ins at a step holds at most ${MAX_STEP_COOKIES} step cookies; the newest still work`, async () => {
    const w = world();
    w.jar.cookies.set('sentinel_session', 'S'.repeat(43));
    const steps = [];
    for (let round = 0; round < MAX_STEP_COOKIES + 4; round += 1) {
      steps.push(await parkAtTotp(w));
      expect(w.jar.steps().length).toBeLessThanOrEqual(MAX_STEP_COOKIES);
    }
    expect(w.jar.steps()).toHaveLength(MAX_STEP_COOKIES);
    expect(w.jar.cookies.get('sentinel_session'), 'the session cookie is never touched').toBe('S'.repeat(43));
    // The oldest sign-ins lost their tie (gone-link page); the newest MAX_STEP_COOKIES still answer their step.
    const oldest = steps[0] as { interaction: string };
    const lost = await call(w.sentinel, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: oldest.interaction }),
      headers: { cookie: w.jar.header() },
    });
    expect(lost.status).toBe(400);
    const kept = steps[steps.length - MAX_STEP_COOKIES] as { interaction: string; csrf: string };
    const done = await answerTotp(w, kept);
    expect(done.status).toBe(303);
    expect(new URL(String(done.headers.location)).searchParams.get('code')).toBeTruthy();
    expect(w.jar.steps()).toHaveLength(MAX_STEP_COOKIES - 1);
  });

  it('cookies named like step cookies but not of their shape neither count nor fail the sign-in', async () => {
    const w = world();
    // The Cookie header is the client's: names the serializer refuses (a space, a byte outside ASCII) among them.
    const junk = ['x y', 'é', 'short', `${'a'.repeat(16)} `, 'a'.repeat(17)].flatMap((tail) =>
      Array.from({ length: MAX_STEP_COOKIES }, (_, i) => `sentinel_session_step_${tail}${i}=1`),
    );
    for (const name of junk) w.jar.cookies.set(name.slice(0, name.indexOf('=')), '1');
    const { interaction } = await startInteraction(w.sentinel);
    const loginCsrf = await openLogin(w.sentinel, interaction);
    const credentials = { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD };
    const passed = await postLogin(w.sentinel, interaction, credentials, undefined, w.jar.header());
    expect(passed.status, 'the right password goes on to the step').toBe(303);
    const lines = setCookies(passed);
    expect(lines, 'only the new tie: no removal of a cookie the service never made').toHaveLength(1);
    expect(lines[0]).toMatch(/^sentinel_session_step_[A-Za-z0-9_-]{16}=/);
  });
});
