/**
 * A sign-in whose final take of the interaction (or of its waiting step) reached the store, but whose answer was lost
 * (a Redis timeout after Redis ran it): the request is a 500 like any store failure, and the same form sent again
 * signs the user in, as the browser-flow guide promises. The take used to be outside what is put back after a 500,
 * so the retry met "link expired" and the user started again at the application.
 */
import { describe, expect, it } from 'vitest';
import { generate, generateSecret } from 'otplib';
import { MemoryPasskeys, MemoryStore, type SwapEntry } from '../src/index.js';
import {
  csrfOf,
  LOGIN_PATH,
  call,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

/** A MemoryStore whose next take of an interaction, or swap that deletes a waiting step, applies and then rejects. */
function losingReplies(): { store: MemoryStore; loseNext(): void } {
  let losing = false;
  const lost = (): Error => {
    losing = false;
    return new Error('reply lost');
  };
  class LosingStore extends MemoryStore {
    override async take(key: string): Promise<string | null> {
      const taken = await super.take(key);
      if (losing && key.startsWith('interaction:')) throw lost();
      return taken;
    }
    override async swap(entries: readonly SwapEntry[]): Promise<boolean> {
      const swapped = await super.swap(entries);
      if (losing && entries.some((entry) => entry.key.startsWith('pending-sign-in:') && entry.value === null)) throw lost();
      return swapped;
    }
  }
  return {
    store: new LosingStore(),
    loseNext() {
      losing = true;
    },
  };
}

function expectSignedIn(response: { status: number; headers: Record<string, unknown> }): void {
  expect(response.status).toBe(303);
  expect(new URL(String(response.headers.location)).searchParams.get('code')).toBeTruthy();
}

describe('a sign-in whose last take landed but whose answer was lost', () => {
  it('at the password form: 500, and the same form sent again signs in', async () => {
    const { store, loseNext } = losingReplies();
    const sentinel = makeSentinel({ store, onError: () => undefined });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    loseNext();
    const form = { csrf_token: csrf, username: USERNAME, password: PASSWORD };
    expect((await postLogin(sentinel, interaction, form)).status).toBe(500);
    expectSignedIn(await postLogin(sentinel, interaction, form));
  });

  it('at the passkey offer\'s "Not now": 500, and the same answer sent again signs in', async () => {
    const { store, loseNext } = losingReplies();
    const secret = generateSecret();
    const sentinel = makeSentinel({
      store,
      onError: () => undefined,
      passkeys: { offerRegistration: true },
      users: {
        authenticate: async ({ username, password }) =>
          username === USERNAME && password === PASSWORD ? { id: USER_ID, secondFactor: 'totp' } : null,
        totpSecret: async () => secret,
        passkeys: new MemoryPasskeys(),
      },
    });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const passed = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const query = new URLSearchParams({ interaction });
    const totpCookie = stepCookie(passed);
    const totpPage = await call(sentinel, { path: `${LOGIN_PATH}/totp`, query, headers: { cookie: totpCookie } });
    const answered = await postForm(
      sentinel,
      `${LOGIN_PATH}/totp`,
      new URLSearchParams({ csrf_token: csrfOf(totpPage.body), code: await generate({ secret }) }).toString(),
      { query, headers: { cookie: totpCookie } },
    );
    expect(String(answered.headers.location)).toBe(`${LOGIN_PATH}/passkey/register?interaction=${interaction}`);
    const cookie = stepCookie(answered);
    const offer = await call(sentinel, { path: `${LOGIN_PATH}/passkey/register`, query, headers: { cookie } });
    const skip = () =>
      postForm(sentinel, `${LOGIN_PATH}/passkey/register`, new URLSearchParams({ csrf_token: csrfOf(offer.body), skip: '1' }).toString(), {
        query,
        headers: { cookie },
      });
    loseNext();
    expect((await skip()).status).toBe(500);
    const retried = await skip();
    expectSignedIn(retried);
    expect(setCookies(retried).some((line) => line.startsWith('sentinel_session='))).toBe(true);
  });
});
