/**
 * The TOTP step after a right password (RFC 6238): right, wrong and replayed codes, its own CSRF token, the
 * throttle under a parallel brute force, recovery codes, and failing hooks. Driven through `sentinel.handle()`.
 */
import { generate, generateSecret, ScureBase32Plugin } from 'otplib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SentinelResponse, SentinelOptions } from '../src/index.js';
import { MemoryPasskeys, MemoryStore } from '../src/index.js';
import {
  call,
  csrfOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { digest } from '../src/lib/random-secrets.js';
import { advanceClock } from './helpers/clock.js';
import { restartableStore } from './helpers/restartable-store.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const RECOVERY_CODE = 'rcv-7f3a-91bd';

interface Harness {
  sentinel: ReturnType<typeof makeSentinel>;
  secret: string;
  secretCalls: () => number;
  errors: unknown[];
}

function harness(overrides: Partial<SentinelOptions> = {}, passkeys = new MemoryPasskeys()): Harness {
  const secret = generateSecret();
  let calls = 0;
  const unusedRecovery = new Set([RECOVERY_CODE]);
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) =>
        username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null,
      totpSecret: async ({ userId }) => {
        calls += 1;
        return userId === USER_ID ? secret : null;
      },
      recover: async ({ userId, code }) => userId === USER_ID && unusedRecovery.delete(code),
      // Passkeys only when the test enables the offer.
      ...(overrides.passkeys === undefined ? {} : { passkeys }),
    },
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { sentinel, secret, secretCalls: () => calls, errors };
}

/** Password step of a fresh interaction: returns the interaction and the TOTP step's CSRF token. */
async function passPassword(h: Harness): Promise<Step & { csrf: string; loginCsrf: string }> {
  const { interaction } = await startInteraction(h.sentinel);
  const loginCsrf = await openLogin(h.sentinel, interaction);
  const response = await postLogin(h.sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
  expect(response.status).toBe(303);
  expect(String(response.headers.location)).toBe(`${TOTP_PATH}?interaction=${interaction}`);
  expect(
    setCookies(response).filter((line) => line.startsWith('sentinel_session=')),
    'no session before the second factor',
  ).toEqual([]);
  const cookie = stepCookie(response);
  const page = await call(h.sentinel, { path: TOTP_PATH, query: new URLSearchParams({ interaction }), headers: { cookie } });
  expect(page.status).toBe(200);
  expect(page.body).toContain('autocomplete="one-time-code"');
  const csrf = csrfOf(page.body);
  expect(csrf).not.toBe(loginCsrf);
  return { interaction, cookie, csrf, loginCsrf };
}

/** A sign-in parked at a step, as the browser that passed the password holds it. */
interface Step {
  interaction: string;
  cookie: string;
}

function postCode(h: Harness, step: Step, form: Record<string, string>, ip?: string): Promise<SentinelResponse> {
  return postForm(h.sentinel, TOTP_PATH, new URLSearchParams(form).toString(), {
    query: new URLSearchParams({ interaction: step.interaction }),
    headers: { cookie: step.cookie },
    ip,
  });
}

function expectSignedIn(response: SentinelResponse): void {
  expect(response.status).toBe(303);
  expect(new URL(String(response.headers.location)).searchParams.get('code')).toBeTruthy();
  expect(setCookies(response).some((line) => line.startsWith('sentinel_session='))).toBe(true);
}

function expectNothingIssued(response: SentinelResponse): void {
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(response.status).toBeLessThan(500);
  expect(response.headers.location).toBeUndefined();
  // Nothing set: a gone sign-in may only remove its step cookie (`name=; …`).
  expect(setCookies(response).filter((line) => !/^[^=]+=;/.test(line))).toEqual([]);
}

/** A MemoryStore whose next write of a session fails once `failNext()` is called (the store down at that write). */
function failingSessionWrite(): { store: MemoryStore; failNext(): void } {
  let failing = false;
  class FlakyStore extends MemoryStore {
    override async set(key: string, value: string, ttlMs: number): Promise<void> {
      if (failing && key.startsWith('session:')) {
        failing = false;
        throw new Error('session write failed');
      }
      return super.set(key, value, ttlMs);
    }
  }
  return {
    store: new FlakyStore(),
    failNext() {
      failing = true;
    },
  };
}

describe('TOTP second factor', () => {
  it('a right code completes the sign-in; the interaction is single-use', async () => {
    const h = harness();
    const step = await passPassword(h);
    const code = await generate({ secret: h.secret });
    expectSignedIn(await postCode(h, step, { csrf_token: step.csrf, code }));
    expectNothingIssued(await postCode(h, step, { csrf_token: step.csrf, code }));
  });

  it('takes a code as authenticator apps show it, in two groups of three: the field does not cut it to "123 45"', async () => {
    const h = harness();
    const step = await passPassword(h);
    const page = await call(h.sentinel, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: step.interaction }),
      headers: { cookie: step.cookie },
    });
    const field = /<input id="code"[^>]*>/.exec(String(page.body))?.[0] ?? '';
    // A browser cuts a pasted "123 456" to the field's maxlength: what it keeps must still be the whole code.
    const kept = Number(/maxlength="(\d+)"/.exec(field)?.[1] ?? Number.POSITIVE_INFINITY);
    expect(kept).toBeGreaterThanOrEqual('123 456'.length);
    const code = await generate({ secret: h.secret });
    expectSignedIn(await postCode(h, step, { csrf_token: step.csrf, code: `${code.slice(0, 3)} ${code.slice(3)}` }));
  });

  it('a wrong code is refused with the step again, and nothing is issued', async () => {
    const h = harness();
    const step = await passPassword(h);
    const { csrf } = step;
    const right = await generate({ secret: h.secret });
    const wrong = right === '123456' ? '654321' : '123456';
    const response = await postCode(h, step, { csrf_token: csrf, code: wrong });
    expectNothingIssued(response);
    expect(response.status).toBe(400);
    expect(response.body).toContain('That code is not correct. Try again.');
    // Four failures in all: one under the default limit of five, so the right code still gets its try.
    for (const malformed of ['12345', 'abcdef', '１２３４５６']) {
      expectNothingIssued(await postCode(h, step, { csrf_token: csrf, code: malformed }));
    }
    expectSignedIn(await postCode(h, step, { csrf_token: csrf, code: right }));
  });

  it('a code used before the store restarted empty is refused after it; a code of a later step passes', async () => {
    const store = restartableStore();
    const h = harness({ store });
    const code = await generate({ secret: h.secret });
    const first = await passPassword(h);
    expectSignedIn(await postCode(h, first, { csrf_token: first.csrf, code }));
    store.restart();
    const second = await passPassword(h);
    const replayed = await postCode(h, second, { csrf_token: second.csrf, code });
    expectNothingIssued(replayed);
    expect(replayed.body).toContain('That code is not correct. Try again.');
    advanceClock(120);
    const later = await passPassword(h);
    expectSignedIn(await postCode(h, later, { csrf_token: later.csrf, code: await generate({ secret: h.secret }) }));
  });

  it('a code already used is refused in another sign-in within its window', async () => {
    const h = harness();
    const code = await generate({ secret: h.secret });
    const first = await passPassword(h);
    expectSignedIn(await postCode(h, first, { csrf_token: first.csrf, code }));
    const second = await passPassword(h);
    const replayed = await postCode(h, second, { csrf_token: second.csrf, code });
    expectNothingIssued(replayed);
    expect(replayed.body).toContain('That code is not correct. Try again.');
  });

  it('two concurrent posts of one right code complete once', async () => {
    const h = harness();
    const code = await generate({ secret: h.secret });
    const a = await passPassword(h);
    const b = await passPassword(h);
    const results = await Promise.all([postCode(h, a, { csrf_token: a.csrf, code }), postCode(h, b, { csrf_token: b.csrf, code })]);
    expect(results.filter((response) => response.status === 303)).toHaveLength(1);
  });

  it('has its own CSRF token: the password form token, none, or a wrong one is refused', async () => {
    const h = harness();
    const step = await passPassword(h);
    const { interaction, loginCsrf } = step;
    const code = await generate({ secret: h.secret });
    const forms: Record<string, string>[] = [{ csrf_token: loginCsrf, code }, { code }, { csrf_token: 'x'.repeat(43), code }];
    for (const form of forms) {
      const response = await postCode(h, step, form);
      expectNothingIssued(response);
      expect(response.status).toBe(403);
    }
    const crossSite = await postForm(h.sentinel, TOTP_PATH, new URLSearchParams({ code }).toString(), {
      query: new URLSearchParams({ interaction }),
      headers: { 'sec-fetch-site': 'cross-site', cookie: step.cookie },
    });
    expect(crossSite.status).toBe(403);
  });

  it("refuses the step of one account's sign-in posted at another account's step path, and the step stays usable", async () => {
    const h = harness();
    const step = await passPassword(h);
    const code = await generate({ secret: h.secret });
    const otherPath = TOTP_PATH.replace(`/account/${ACCOUNT}/`, `/account/${OTHER_ACCOUNT}/`);
    expect(otherPath).not.toBe(TOTP_PATH);
    const elsewhere = await postForm(h.sentinel, otherPath, new URLSearchParams({ csrf_token: step.csrf, code }).toString(), {
      query: new URLSearchParams({ interaction: step.interaction }),
      headers: { cookie: step.cookie },
    });
    expectNothingIssued(elsewhere);
    expect(elsewhere.status).toBe(400);
    expectSignedIn(await postCode(h, step, { csrf_token: step.csrf, code }));
  });

  it('refuses a right code with its right CSRF token when the browser labels the post cross-site', async () => {
    const h = harness();
    const step = await passPassword(h);
    const code = await generate({ secret: h.secret });
    const crossSite = await postForm(h.sentinel, TOTP_PATH, new URLSearchParams({ csrf_token: step.csrf, code }).toString(), {
      query: new URLSearchParams({ interaction: step.interaction }),
      headers: { 'sec-fetch-site': 'cross-site', cookie: step.cookie },
    });
    expectNothingIssued(crossSite);
    expect(crossSite.status).toBe(403);
  });

  it('there is no TOTP step without a right password first', async () => {
    const h = harness();
    const { interaction } = await startInteraction(h.sentinel);
    const loginCsrf = await openLogin(h.sentinel, interaction);
    expectNothingIssued(await call(h.sentinel, { path: TOTP_PATH, query: new URLSearchParams({ interaction }) }));
    const code = await generate({ secret: h.secret });
    expectNothingIssued(await postCode(h, { interaction, cookie: '' }, { csrf_token: loginCsrf, code }));
  });

  it('holds the throttle against a parallel brute force: at most maxFailures codes are checked, then 429', async () => {
    const h = harness({ throttle: { maxFailures: 5, maxFailuresPerIp: 1000, windowSeconds: 900 } });
    const step = await passPassword(h);
    const { csrf } = step;
    const right = await generate({ secret: h.secret });
    const guesses = Array.from({ length: 60 }, (_, index) => String(100000 + index * 7919).slice(0, 6)).filter((guess) => guess !== right);
    const responses = await Promise.all(guesses.map((code) => postCode(h, step, { csrf_token: csrf, code })));
    for (const response of responses) expectNothingIssued(response);
    expect(h.secretCalls()).toBeLessThanOrEqual(5);
    expect(responses.filter((response) => response.status === 429).length).toBeGreaterThanOrEqual(guesses.length - 5);
    const afterwards = await postCode(h, step, { csrf_token: csrf, code: right });
    expect(afterwards.status).toBe(429);
    expect(afterwards.headers['retry-after']).toBe('900');
  });

  it('a username typed at the password form cannot charge a user’s second-factor counter', async () => {
    const h = harness({ throttle: { maxFailures: 5, maxFailuresPerIp: 1000, windowSeconds: 900 } });
    // The user id is no secret (every relying party gets it as `sub`); the password form's counter key once took
    // any text, so this name landed on the key of the user's TOTP counter and five failures locked the step.
    const spelledLikeTheCounter = `\u0000second-factor\u0000${USER_ID}`;
    for (let attempt = 0; attempt < 6; attempt++) {
      const { interaction } = await startInteraction(h.sentinel);
      const csrf = await openLogin(h.sentinel, interaction);
      const response = await postLogin(
        h.sentinel,
        interaction,
        { csrf_token: csrf, username: spelledLikeTheCounter, password: 'x' },
        '198.51.100.9',
      );
      expect(response.status).toBe(attempt < 5 ? 200 : 429);
    }
    const step = await passPassword(h);
    expectSignedIn(await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) }));
  });

  it('after the code, a user without a passkey is offered one (when enabled), and "Not now" signs in', async () => {
    const h = harness({ passkeys: { offerRegistration: true } });
    const step = await passPassword(h);
    const { interaction, csrf } = step;
    const code = await generate({ secret: h.secret });
    const response = await postCode(h, step, { csrf_token: csrf, code });
    expect(response.status).toBe(303);
    expect(String(response.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${interaction}`);
    // Each step is tied afresh: the offer answers only to the value this response gave.
    const cookie = stepCookie(response);
    expect(cookie, 'a fresh tie for the offer').not.toBe(step.cookie);
    const offer = await call(h.sentinel, {
      path: `${LOGIN_PATH}/passkey/register`,
      query: new URLSearchParams({ interaction }),
      headers: { cookie },
    });
    expect(offer.status).toBe(200);
    const offerCsrf = csrfOf(offer.body);
    expect(offerCsrf).not.toBe(csrf);
    const skip = (token: string) =>
      postForm(h.sentinel, `${LOGIN_PATH}/passkey/register`, new URLSearchParams({ csrf_token: token, skip: '1' }).toString(), {
        query: new URLSearchParams({ interaction }),
        headers: { cookie },
      });
    expect((await skip(csrf)).status).toBe(403);
    expectSignedIn(await skip(offerCsrf));
  });

  it('a store failing as "Not now" ends the sign-in is a 500, and the same answer posted again signs in', async () => {
    const sessions = failingSessionWrite();
    const h = harness({ store: sessions.store, passkeys: { offerRegistration: true } });
    const step = await passPassword(h);
    const answered = await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) });
    expect(String(answered.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${step.interaction}`);
    const cookie = stepCookie(answered);
    const query = new URLSearchParams({ interaction: step.interaction });
    const offer = await call(h.sentinel, { path: `${LOGIN_PATH}/passkey/register`, query, headers: { cookie } });
    const skip = () =>
      postForm(
        h.sentinel,
        `${LOGIN_PATH}/passkey/register`,
        new URLSearchParams({ csrf_token: csrfOf(offer.body), skip: '1' }).toString(),
        {
          query,
          headers: { cookie },
        },
      );
    sessions.failNext();
    expect((await skip()).status).toBe(500);
    expectSignedIn(await skip());
  });

  it('a hook failing after a right code (the passkey offer asks the list) is a 500 that leaves the step for the next code', async () => {
    let failures = 1;
    class FlakyPasskeys extends MemoryPasskeys {
      override list(input: { accountId: string; userId: string }) {
        if (failures-- > 0) throw new Error('passkey table unavailable');
        return super.list(input);
      }
    }
    const h = harness({ passkeys: { offerRegistration: true } }, new FlakyPasskeys());
    const step = await passPassword(h);
    const failed = await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) });
    expect(failed.status).toBe(500);
    expect(setCookies(failed)).toEqual([]);
    expect(h.errors).toHaveLength(1);
    // The first code is spent (RFC 6238 §5.2); the authenticator's next one answers the same step, still in place.
    const next = await generate({ secret: h.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const answered = await postCode(h, step, { csrf_token: step.csrf, code: next });
    expect(answered.status).toBe(303);
    expect(String(answered.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${step.interaction}`);
  });

  // The end of the sign-in failing on the service's side once the step was taken (here the write of the session):
  // the interaction was put back, but the step was not, so the retry met "link expired" and the user typed the
  // password again. Both go back now; the code used stays spent.
  it.each([['a right code'], ['a recovery code']])(
    'a store failing after %s is a 500 that leaves the step for the next code',
    async (used) => {
      const sessions = failingSessionWrite();
      const h = harness({ store: sessions.store });
      const step = await passPassword(h);
      sessions.failNext();
      const form: Record<string, string> =
        used === 'a right code' ? { code: await generate({ secret: h.secret }) } : { recovery_code: RECOVERY_CODE };
      const failed = await postCode(h, step, { csrf_token: step.csrf, ...form });
      expect(failed.status).toBe(500);
      expect(h.errors).toContainEqual(expect.objectContaining({ message: 'session write failed' }));
      const next = await generate({ secret: h.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
      expectSignedIn(await postCode(h, step, { csrf_token: step.csrf, code: next }));
    },
  );

  it('only the browser that passed the password sees or answers a step: another gets the gone-link answer', async () => {
    const h = harness({ passkeys: { offerRegistration: true } });
    const step = await passPassword(h);
    const { interaction, cookie } = step;
    const query = new URLSearchParams({ interaction });
    // Whoever started the request holds the interaction id; without the tie they read the step's CSRF token here.
    const name = cookie.split('=')[0] as string;
    const strangers = [{}, { cookie: `${name}=${'A'.repeat(43)}` }, { cookie: `${name}=short` }];
    for (const headers of strangers) {
      const page = await call(h.sentinel, { path: TOTP_PATH, query, headers });
      expect(page.status).toBe(400);
      expect(page.body).not.toContain(step.csrf);
      const code = await generate({ secret: h.secret });
      expectNothingIssued(await postCode(h, { interaction, cookie: headers.cookie ?? '' }, { csrf_token: step.csrf, code }));
    }
    const answered = await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) });
    expect(String(answered.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${interaction}`);
    // The passkey offer: its page, its creation options and "Not now" (which signs in) are the tied browser's alone.
    const offerPath = `${LOGIN_PATH}/passkey/register`;
    expect((await call(h.sentinel, { path: offerPath, query })).status).toBe(400);
    expect((await call(h.sentinel, { path: offerPath, query, headers: { cookie } })).status, 'the TOTP step tie is spent').toBe(400);
    const offerCookie = stepCookie(answered);
    const offer = await call(h.sentinel, { path: offerPath, query, headers: { cookie: offerCookie } });
    const offerCsrf = csrfOf(offer.body);
    const options = (headers: Record<string, string>) =>
      postForm(h.sentinel, `${offerPath}/options`, new URLSearchParams({ csrf_token: offerCsrf }).toString(), { query, headers });
    const skip = (headers: Record<string, string>) =>
      postForm(h.sentinel, offerPath, new URLSearchParams({ csrf_token: offerCsrf, skip: '1' }).toString(), { query, headers });
    expectNothingIssued(await options({}));
    expectNothingIssued(await skip({}));
    expect((await options({ cookie: offerCookie })).status).toBe(200);
    expectSignedIn(await skip({ cookie: offerCookie }));
  });

  it('ties the step to a value of its own making, never one the browser already had (a tossed cookie)', async () => {
    const h = harness({ passkeys: { offerRegistration: true } });
    const { interaction } = await startInteraction(h.sentinel);
    const query = new URLSearchParams({ interaction });
    // Whoever started the request, able to plant cookies for the service's host (a sibling host of the site, or a
    // network attacker on a plain-http one), sets a value of their own under every name a step cookie has.
    const planted = 'P'.repeat(43);
    const tossed = [`sentinel_session_step=${planted}`, `sentinel_session_step_${digest(interaction).slice(0, 16)}=${planted}`].join('; ');
    const loginCsrf = await openLogin(h.sentinel, interaction);
    const passed = await postLogin(
      h.sentinel,
      interaction,
      { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD },
      undefined,
      tossed,
    );
    expect(passed.status).toBe(303);
    const cookie = stepCookie(passed);
    expect(cookie).not.toContain(planted);
    // The planter, from their own browser: the gone-link answer, no CSRF token, no step.
    const theirs = await call(h.sentinel, { path: TOTP_PATH, query, headers: { cookie: tossed } });
    expect(theirs.status).toBe(400);
    // The person who passed the password answers it.
    const page = await call(h.sentinel, { path: TOTP_PATH, query, headers: { cookie } });
    expect(page.status).toBe(200);
    const step = { interaction, cookie };
    const answered = await postCode(h, step, { csrf_token: csrfOf(page.body), code: await generate({ secret: h.secret }) });
    expect(String(answered.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${interaction}`);
  });

  it('a password alone is not offered a passkey when the user has a TOTP secret: the passkey would skip the step', async () => {
    // The step-up-only set-up: the user store asks for no second factor at sign-in, but the user has a TOTP secret.
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        totpSecret: async () => generateSecret(),
        passkeys: new MemoryPasskeys(),
      },
      passkeys: { offerRegistration: true },
    });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    expectSignedIn(await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }));
  });

  it('a step stored by an instance whose clock runs ahead refuses the code as used, not with a 500', async () => {
    const store = new MemoryStore();
    const h = harness({ store });
    // The newest accepted step, as an instance two minutes ahead writes it after accepting a code of its own window.
    const ahead = Math.floor(Date.now() / 30_000) + 5;
    // Kept per secret (totp.ts): the digest of the key the secret decodes to.
    const key = Buffer.from(new ScureBase32Plugin().decode(h.secret)).toString('base64url');
    await store.set(`totp-last:${digest(`totp-secret\u0000${key}`)}`, String(ahead), 60_000);
    const step = await passPassword(h);
    const response = await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) });
    expectNothingIssued(response);
    expect(response.status).toBe(400);
    expect(response.body).toContain('That code is not correct. Try again.');
    expect(h.errors).toEqual([]);
  });

  it('a recovery code signs in once', async () => {
    const h = harness();
    const first = await passPassword(h);
    const page = await call(h.sentinel, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: first.interaction }),
      headers: { cookie: first.cookie },
    });
    expect(page.body).toContain('name="recovery_code"');
    expectSignedIn(await postCode(h, first, { csrf_token: first.csrf, recovery_code: RECOVERY_CODE }));
    const second = await passPassword(h);
    expectNothingIssued(await postCode(h, second, { csrf_token: second.csrf, recovery_code: RECOVERY_CODE }));
  });

  it('fails closed when the store answers a throttle count that is no number: 500, no code checked', async () => {
    // A custom Store's bug: `increment` resolving to undefined compared `undefined > maxFailures`, which is false, so
    // every guess was let through uncounted.
    class UncountingStore extends MemoryStore {
      override async increment(key: string, ttlMs: number): Promise<number> {
        return key.startsWith('throttle:second-factor:') ? (undefined as unknown as number) : super.increment(key, ttlMs);
      }
    }
    const h = harness({ store: new UncountingStore() });
    const step = await passPassword(h);
    const response = await postCode(h, step, { csrf_token: step.csrf, code: '000000' });
    expect(response.status).toBe(500);
    expect(setCookies(response)).toEqual([]);
    expect(h.secretCalls(), 'the code is never checked').toBe(0);
    expect(String(h.errors[0])).toContain('store.increment answered undefined');
  });

  it('answers a right code 500 with onError when the store counts its single use with no number', async () => {
    // The code's single use is counted by the same increment: an answer that is no count was read as a replay, so
    // every right code got the wrong-code page and the operator heard of nothing.
    class UncountingStore extends MemoryStore {
      override async increment(key: string, ttlMs: number): Promise<number> {
        return key.startsWith('totp-used:') ? (undefined as unknown as number) : super.increment(key, ttlMs);
      }
    }
    const h = harness({ store: new UncountingStore() });
    const step = await passPassword(h);
    const response = await postCode(h, step, { csrf_token: step.csrf, code: await generate({ secret: h.secret }) });
    expect(response.status).toBe(500);
    expect(setCookies(response)).toEqual([]);
    expect(String(h.errors[0])).toContain('store.increment answered undefined');
  });

  it('an unknown second factor or a failing secret hook is a 500 server_error that issues nothing', async () => {
    const unknown = harness({
      users: { authenticate: async () => ({ id: USER_ID, secondFactor: 'sms' as 'totp' }), totpSecret: async () => 'JBSWY3DPEHPK3PXP' },
    });
    const { interaction } = await startInteraction(unknown.sentinel);
    const loginCsrf = await openLogin(unknown.sentinel, interaction);
    const refused = await postLogin(unknown.sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
    expect(refused.status).toBe(500);
    expect(setCookies(refused)).toEqual([]);
    expect(unknown.errors).toHaveLength(1);

    const failing = harness();
    const broken = makeSentinel({
      store: new MemoryStore(),
      users: {
        authenticate: async () => ({ id: USER_ID, secondFactor: 'totp' }),
        totpSecret: async () => {
          throw new Error('user database down');
        },
      },
      onError: (error) => failing.errors.push(error),
    });
    const started = await startInteraction(broken);
    const csrf = await openLogin(broken, started.interaction);
    const cookie = stepCookie(await postLogin(broken, started.interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }));
    const page = await call(broken, {
      path: TOTP_PATH,
      query: new URLSearchParams({ interaction: started.interaction }),
      headers: { cookie },
    });
    const response = await postForm(broken, TOTP_PATH, new URLSearchParams({ csrf_token: csrfOf(page.body), code: '123456' }).toString(), {
      query: new URLSearchParams({ interaction: started.interaction }),
      headers: { cookie },
    });
    expect(response.status).toBe(500);
    expect(setCookies(response)).toEqual([]);
    expect(failing.errors).toHaveLength(1);
  });
});
