/**
 * A TOTP code is a function of the secret and the time step alone (RFC 6238 §4), and RFC 6238 §5.2 says the
 * verifier MUST NOT accept the second attempt of the same OTP. A user of several accounts (tenants) of one service
 * often has one authenticator for all of them, so `users.totpSecret` answers the same secret in each: a code seen
 * once, accepted in one account, must then be refused in the others too, or whoever watched it being typed (and
 * knows the password) uses it again within its window elsewhere. The same holds for the newest accepted step: a code
 * older than the newest one the secret answered is refused wherever it is posted; and for the guesses at the secret:
 * `throttle.maxFailures` per window bounds them for the secret, not once per account it is used in.
 */
import { generate, generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { call, csrfOf, postForm, setCookies, stepCookie } from './helpers/direct-flow.js';
import {
  ACCOUNT,
  CLIENT_ID,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  PASSWORD,
  REDIRECT_URI,
  USER_ID,
  USERNAME,
} from './helpers/fixtures.js';

const SECRET = generateSecret();
const TARGETS: Record<string, { clientId: string; redirectUri: string }> = {
  [ACCOUNT]: { clientId: CLIENT_ID, redirectUri: REDIRECT_URI },
  [OTHER_ACCOUNT]: { clientId: OTHER_CLIENT_ID, redirectUri: 'https://other.example.com/cb' },
};

/** The service; `secretOf` is the secret `users.totpSecret` answers in each account (one shared by default). */
function service(secretOf: (accountId: string) => string = () => SECRET, maxFailures?: number): Sentinel {
  return makeSentinel({
    ...(maxFailures === undefined ? {} : { throttle: { maxFailures, maxFailuresPerIp: 1000, windowSeconds: 900 } }),
    store: new MemoryStore(),
    users: {
      // One user, in both accounts, with one authenticator.
      authenticate: async ({ username, password }) =>
        username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null,
      totpSecret: async ({ accountId, userId }) => (userId === USER_ID ? secretOf(accountId) : null),
    },
  });
}

/** Signs in to `accountId` with the password and posts `code` on its TOTP step. */
async function signInWithCode(sentinel: Sentinel, accountId: string, code: string): Promise<SentinelResponse> {
  const base = `/sentinel/api/account/${accountId}`;
  const { clientId, redirectUri } = TARGETS[accountId] as { clientId: string; redirectUri: string };
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st-1' });
  const start = await call(sentinel, { path: `${base}/authorize`, query });
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  expect(interaction).toBeTruthy();
  const at = new URLSearchParams({ interaction });
  const login = await call(sentinel, { path: `${base}/login`, query: at });
  const form = new URLSearchParams({ csrf_token: csrfOf(login.body), username: USERNAME, password: PASSWORD }).toString();
  const passed = await postForm(sentinel, `${base}/login`, form, { query: at });
  expect(String(passed.headers.location)).toBe(`${base}/login/totp?interaction=${interaction}`);
  const cookie = stepCookie(passed);
  const step = await call(sentinel, { path: `${base}/login/totp`, query: at, headers: { cookie } });
  const answer = new URLSearchParams({ csrf_token: csrfOf(step.body), code }).toString();
  return postForm(sentinel, `${base}/login/totp`, answer, { query: at, headers: { cookie } });
}

function signedIn(response: SentinelResponse): boolean {
  return (
    response.status === 303 &&
    new URL(String(response.headers.location)).searchParams.has('code') &&
    setCookies(response).some((line) => line.startsWith('sentinel_session='))
  );
}

describe('a TOTP code of a secret shared by accounts', () => {
  it('accepted in one account is refused in another within its window', async () => {
    const sentinel = service();
    const code = await generate({ secret: SECRET });
    expect(signedIn(await signInWithCode(sentinel, ACCOUNT, code))).toBe(true);
    const again = await signInWithCode(sentinel, OTHER_ACCOUNT, code);
    expect(signedIn(again)).toBe(false);
    expect(again.status).toBe(400);
    expect(again.body).toContain('That code is not correct. Try again.');
  });

  it('older than the newest one the secret answered is refused in another account', async () => {
    const sentinel = service();
    const now = Date.now();
    const older = await generate({ secret: SECRET, epoch: Math.floor(now / 1000) - 30 });
    const newer = await generate({ secret: SECRET, epoch: Math.floor(now / 1000) });
    expect(older).not.toBe(newer);
    expect(signedIn(await signInWithCode(sentinel, ACCOUNT, newer))).toBe(true);
    expect(signedIn(await signInWithCode(sentinel, OTHER_ACCOUNT, older))).toBe(false);
  });

  it('does not hold up another secret: the same step of two secrets is accepted in each account', async () => {
    const other = generateSecret();
    const sentinel = service((accountId) => (accountId === ACCOUNT ? SECRET : other));
    const code = await generate({ secret: SECRET });
    expect(signedIn(await signInWithCode(sentinel, ACCOUNT, code))).toBe(true);
    expect(signedIn(await signInWithCode(sentinel, OTHER_ACCOUNT, await generate({ secret: other })))).toBe(true);
    // And each is still single-use where it was accepted.
    expect(signedIn(await signInWithCode(sentinel, ACCOUNT, code))).toBe(false);
  });

  it('counts its wrong codes in one budget, whichever account they are posted in', async () => {
    const sentinel = service(undefined, 3);
    const wrong = async (accountId: string): Promise<number> => {
      const right = await generate({ secret: SECRET });
      return (await signInWithCode(sentinel, accountId, right === '000000' ? '111111' : '000000')).status;
    };
    for (let attempt = 0; attempt < 3; attempt++) expect(await wrong(ACCOUNT)).toBe(400);
    // The other account's own count of this user is 0, but the secret has had its 3 guesses in this window.
    expect(await wrong(OTHER_ACCOUNT)).toBe(429);
    expect((await signInWithCode(sentinel, OTHER_ACCOUNT, await generate({ secret: SECRET }))).status).toBe(429);
  });

  it("gives a right code's slot back on that budget too, and leaves another secret's alone", async () => {
    const other = generateSecret();
    const sentinel = service((accountId) => (accountId === ACCOUNT ? SECRET : other), 2);
    const wrongCode = async (secret: string) => ((await generate({ secret })) === '000000' ? '111111' : '000000');
    expect((await signInWithCode(sentinel, ACCOUNT, await wrongCode(SECRET))).status).toBe(400);
    expect(signedIn(await signInWithCode(sentinel, ACCOUNT, await generate({ secret: SECRET })))).toBe(true);
    // One wrong code so far on each budget: a second one is still within the limit of 2.
    expect((await signInWithCode(sentinel, ACCOUNT, await wrongCode(SECRET))).status).toBe(400);
    expect((await signInWithCode(sentinel, OTHER_ACCOUNT, await wrongCode(other))).status).toBe(400);
    expect(signedIn(await signInWithCode(sentinel, OTHER_ACCOUNT, await generate({ secret: other })))).toBe(true);
  });
});
