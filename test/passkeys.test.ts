/**
 * Passkey sign-in without a browser (WebAuthn §7.2, through a software authenticator): a right assertion signs
 * in; another account's passkey, another user's handle, a replayed assertion, a wrong origin or RP id, a counter
 * that went back, and a malformed post are refused with the login page and issue nothing.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelResponse, type SentinelOptions, type StoredPasskey } from '../src/index.js';
import {
  authorizeQuery,
  call,
  csrfOf,
  jsonOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  setCookies,
  startInteraction,
} from './helpers/direct-flow.js';
import {
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  PASSWORD,
  USER_ID,
  USERNAME,
  ACCOUNT,
  PASSKEY_ORIGIN,
  PASSKEY_RP_ID,
} from './helpers/fixtures.js';
import { assert, newCredential, type SoftwareCredential } from './helpers/software-authenticator.js';

const OTHER_USER = 'u-mallory';

interface Harness {
  sentinel: ReturnType<typeof makeSentinel>;
  passkeys: MemoryPasskeys;
  credential: SoftwareCredential;
  errors: unknown[];
}

function harness(overrides: Partial<SentinelOptions> = {}): Harness {
  const passkeys = new MemoryPasskeys();
  const credential = newCredential();
  passkeys.save({
    accountId: ACCOUNT,
    userId: USER_ID,
    passkey: { id: credential.id, publicKey: credential.publicKey, counter: 0, createdAt: Date.now() },
  });
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      passkeys,
    },
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { sentinel, passkeys, credential, errors };
}

function loginPath(accountId: string): string {
  return LOGIN_PATH.replace(ACCOUNT, accountId);
}

/** A fresh interaction in the account, its login CSRF token, and a sign-in challenge for it. */
async function begin(
  h: Harness,
  accountId = ACCOUNT,
  rpId = PASSKEY_RP_ID,
): Promise<{ interaction: string; csrf: string; challenge: string }> {
  const query =
    accountId === ACCOUNT ? authorizeQuery() : authorizeQuery({ client_id: OTHER_CLIENT_ID, redirect_uri: 'https://other.example.com/cb' });
  const started = await call(h.sentinel, { path: `/sentinel/api/account/${accountId}/authorize`, query });
  expect(started.status).toBe(302);
  const interaction = new URL(String(started.headers.location), PASSKEY_ORIGIN).searchParams.get('interaction') ?? '';
  const page = await call(h.sentinel, { path: loginPath(accountId), query: new URLSearchParams({ interaction }) });
  expect(page.body).toContain('id="passkey-form"');
  const csrf = csrfOf(page.body);
  const options = await postForm(
    h.sentinel,
    `${loginPath(accountId)}/passkey/options`,
    new URLSearchParams({ csrf_token: csrf }).toString(),
    {
      query: new URLSearchParams({ interaction }),
      headers: { accept: 'application/json' },
    },
  );
  expect(options.status).toBe(200);
  const body = jsonOf(options);
  expect(body.rpId).toBe(rpId);
  expect(body.allowCredentials ?? []).toEqual([]);
  return { interaction, csrf, challenge: String(body.challenge) };
}

function postAssertion(h: Harness, accountId: string, interaction: string, csrf: string, assertion: string): Promise<SentinelResponse> {
  return postForm(h.sentinel, `${loginPath(accountId)}/passkey`, new URLSearchParams({ csrf_token: csrf, assertion }).toString(), {
    query: new URLSearchParams({ interaction }),
  });
}

function expectRefused(response: SentinelResponse): void {
  expect(response.status).toBe(400);
  expect(response.headers.location).toBeUndefined();
  expect(setCookies(response)).toEqual([]);
  expect(response.body).toContain('That passkey could not be used.');
}

describe('passkey sign-in (software authenticator)', () => {
  it('a right assertion signs in and records the counter', async () => {
    const h = harness();
    const { interaction, csrf, challenge } = await begin(h);
    const response = await postAssertion(
      h,
      ACCOUNT,
      interaction,
      csrf,
      assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
    );
    expect(response.status).toBe(303);
    expect(new URL(String(response.headers.location)).searchParams.get('code')).toBeTruthy();
    expect(setCookies(response).some((line) => line.startsWith('sentinel_session='))).toBe(true);
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter).toBe(1);
  });

  it("refuses a passkey of the same user id in another account (it is that account's user, not this one's)", async () => {
    const h = harness();
    const { interaction, csrf, challenge } = await begin(h, OTHER_ACCOUNT);
    expectRefused(
      await postAssertion(
        h,
        OTHER_ACCOUNT,
        interaction,
        csrf,
        assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
      ),
    );
  });

  it("refuses an assertion that names another user's handle", async () => {
    const h = harness();
    const mallory = newCredential();
    h.passkeys.save({
      accountId: ACCOUNT,
      userId: OTHER_USER,
      passkey: { id: mallory.id, publicKey: mallory.publicKey, counter: 0, createdAt: Date.now() },
    });
    const { interaction, csrf, challenge } = await begin(h);
    // Mallory's own key, claiming to be Alice: Alice's list has no such credential.
    expectRefused(
      await postAssertion(
        h,
        ACCOUNT,
        interaction,
        csrf,
        assert(mallory, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
      ),
    );
  });

  it('refuses a replayed assertion, in the same interaction and in a new one', async () => {
    const h = harness();
    const first = await begin(h);
    const assertion = assert(h.credential, {
      challenge: first.challenge,
      origin: PASSKEY_ORIGIN,
      rpId: PASSKEY_RP_ID,
      userHandle: USER_ID,
    });
    // A wrong CSRF token first: refused before the challenge is touched.
    expect((await postAssertion(h, ACCOUNT, first.interaction, 'x'.repeat(43), assertion)).status).toBe(403);
    expect((await postAssertion(h, ACCOUNT, first.interaction, first.csrf, assertion)).status).toBe(303);
    const second = await begin(h);
    expectRefused(await postAssertion(h, ACCOUNT, second.interaction, second.csrf, assertion));
    const third = await begin(h);
    await postAssertion(h, ACCOUNT, third.interaction, third.csrf, 'not json');
    // The challenge of the third interaction was used up by the malformed post: a right assertion now finds none.
    expectRefused(
      await postAssertion(
        h,
        ACCOUNT,
        third.interaction,
        third.csrf,
        assert(h.credential, { challenge: third.challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
      ),
    );
  });

  it('refuses a wrong origin, a wrong RP id, a wrong challenge and a counter that went back', async () => {
    const h = harness();
    const cases: Partial<Parameters<typeof assert>[1]>[] = [
      { origin: 'https://evil.example' },
      { origin: 'http://localhost:8080' },
      { rpId: 'evil.example' },
      { challenge: Buffer.alloc(32, 7).toString('base64url') },
    ];
    for (const wrong of cases) {
      const { interaction, csrf, challenge } = await begin(h);
      expectRefused(
        await postAssertion(
          h,
          ACCOUNT,
          interaction,
          csrf,
          assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, ...wrong }),
        ),
      );
    }
    const ok = await begin(h);
    expect(
      (
        await postAssertion(
          h,
          ACCOUNT,
          ok.interaction,
          ok.csrf,
          assert(h.credential, { challenge: ok.challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, counter: 10 }),
        )
      ).status,
    ).toBe(303);
    const cloned = await begin(h);
    expectRefused(
      await postAssertion(
        h,
        ACCOUNT,
        cloned.interaction,
        cloned.csrf,
        assert(h.credential, { challenge: cloned.challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, counter: 3 }),
      ),
    );
  });

  it('refuses an assertion made in a frame of another origin (WebAuthn Level 3 §7.2 step 13), moving nothing', async () => {
    // The service's pages are never framed, so a browser saying so is a page that framed ours against its will. A
    // `crossOrigin: true` without `topOrigin` (browsers that predate the field) passed the library's own check.
    const h = harness();
    const frames = [{ crossOrigin: true }, { crossOrigin: true, topOrigin: 'https://evil.example' }, { topOrigin: PASSKEY_ORIGIN }];
    for (const frame of frames) {
      const { interaction, csrf, challenge } = await begin(h);
      const assertion = assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, frame });
      expectRefused(await postAssertion(h, ACCOUNT, interaction, csrf, assertion));
      expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter, JSON.stringify(frame)).toBe(0);
    }
    const { interaction, csrf, challenge } = await begin(h);
    const framedNot = assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID });
    expect((await postAssertion(h, ACCOUNT, interaction, csrf, framedNot)).status).toBe(303);
  });

  it('refuses an assertion whose backup-eligible flag is not the one the passkey was registered with, moving nothing', async () => {
    for (const registered of [false, true]) {
      const events: { type: string; reason?: string; amr?: string[] }[] = [];
      const h = harness({ onEvent: (event) => events.push(event as (typeof events)[number]) });
      const { id, publicKey } = h.credential;
      h.passkeys.save({
        accountId: ACCOUNT,
        userId: USER_ID,
        passkey: { id, publicKey, counter: 0, backupEligible: registered, createdAt: 1 },
      });
      // The other kind of credential: a synced key passing for a device-bound one (`hwk`), or the reverse.
      const swapped = await begin(h);
      const input = {
        challenge: swapped.challenge,
        origin: PASSKEY_ORIGIN,
        rpId: PASSKEY_RP_ID,
        userHandle: USER_ID,
        backupEligible: !registered,
      };
      expectRefused(await postAssertion(h, ACCOUNT, swapped.interaction, swapped.csrf, assert(h.credential, input)));
      expect(events.find((event) => event.type === 'login.failed')?.reason).toBe('passkey backup eligibility changed');
      expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter, 'a refused assertion moves no counter').toBe(0);
      // The flag it was registered with signs in, and `amr` says which kind of key it is.
      const same = await begin(h);
      const right = {
        challenge: same.challenge,
        origin: PASSKEY_ORIGIN,
        rpId: PASSKEY_RP_ID,
        userHandle: USER_ID,
        backupEligible: registered,
      };
      expect((await postAssertion(h, ACCOUNT, same.interaction, same.csrf, assert(h.credential, right))).status).toBe(303);
      expect(events.find((event) => event.type === 'login.succeeded')?.amr).toEqual([registered ? 'swk' : 'hwk', 'user', 'mfa']);
    }
  });

  it('signs in with a passkey whose host store answers null for the fields it never had (a nullable column)', async () => {
    const h = harness();
    const { id, publicKey } = h.credential;
    // A row stored before `backupEligible` existed, whose browser reported no transports: `null`, not `undefined`.
    const legacy = { id, publicKey, counter: 0, backupEligible: null, transports: null, createdAt: 1 };
    h.passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: legacy as unknown as StoredPasskey });
    const { interaction, csrf, challenge } = await begin(h);
    const input = { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, backupEligible: true };
    expect((await postAssertion(h, ACCOUNT, interaction, csrf, assert(h.credential, input))).status).toBe(303);
  });

  it("fails with 500 server_error, not the user's refusal, for a backupEligible that is no boolean", async () => {
    const h = harness();
    const { id, publicKey } = h.credential;
    const broken = { id, publicKey, counter: 0, backupEligible: 1, createdAt: 1 };
    h.passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: broken as unknown as StoredPasskey });
    const { interaction, csrf, challenge } = await begin(h);
    const input = { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, backupEligible: true };
    const response = await postAssertion(h, ACCOUNT, interaction, csrf, assert(h.credential, input));
    expect(response.status).toBe(500);
    expect(String(h.errors[0])).toContain('backupEligible');
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter).toBe(0);
  });

  it('honours a configured RP id and origins instead of the issuer', async () => {
    const h = harness({ passkeys: { rpId: 'example.com', origins: ['https://id.example.com'] } });
    const before = await begin(h, ACCOUNT, 'example.com');
    expectRefused(
      await postAssertion(
        h,
        ACCOUNT,
        before.interaction,
        before.csrf,
        assert(h.credential, { challenge: before.challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
      ),
    );
    const after = await begin(h, ACCOUNT, 'example.com');
    const assertion = assert(h.credential, {
      challenge: after.challenge,
      origin: 'https://id.example.com',
      rpId: 'example.com',
      userHandle: USER_ID,
    });
    expect((await postAssertion(h, ACCOUNT, after.interaction, after.csrf, assertion)).status).toBe(303);
  });

  it('takes a configured origin as the browser writes it: lower-case host, no default port', async () => {
    // The browser serializes the page's origin (RFC 6454 §6.2) and the verifier compares it exactly.
    const h = harness({ passkeys: { rpId: 'example.com', origins: ['https://ID.Example.com:443'] } });
    const { interaction, csrf, challenge } = await begin(h, ACCOUNT, 'example.com');
    const assertion = assert(h.credential, { challenge, origin: 'https://id.example.com', rpId: 'example.com', userHandle: USER_ID });
    expect((await postAssertion(h, ACCOUNT, interaction, csrf, assertion)).status).toBe(303);
  });

  it('refuses malformed posts with the login page, and a failing hook with 500 server_error', async () => {
    const h = harness();
    for (const assertion of [
      '',
      '{}',
      '[]',
      '{"type":"public-key","id":"a","rawId":"b"}',
      JSON.stringify({ type: 'public-key', id: '!!', rawId: '!!', response: {} }),
    ]) {
      const { interaction, csrf } = await begin(h);
      expectRefused(await postAssertion(h, ACCOUNT, interaction, csrf, assertion));
    }
    const failing = harness();
    failing.passkeys.list = () => {
      throw new Error('passkey table unavailable');
    };
    const { interaction, csrf, challenge } = await begin(failing);
    const response = await postAssertion(
      failing,
      ACCOUNT,
      interaction,
      csrf,
      assert(failing.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID }),
    );
    expect(response.status).toBe(500);
    expect(setCookies(response)).toEqual([]);
    expect(failing.errors).toHaveLength(1);
  });

  it('asks users.claims whether the user is still there: gone is refused, a failing hook is 500, neither signs in', async () => {
    const asked: unknown[] = [];
    let answer: 'gone' | 'here' | 'throws' | 'number' = 'gone';
    const events: { type: string; reason?: string }[] = [];
    const h = harness({ onEvent: (event) => events.push(event as (typeof events)[number]) });
    // Alice was disabled by the host: authenticate refuses her password, and claims says she is gone.
    const users = {
      authenticate: async () => null,
      passkeys: h.passkeys,
      claims: async (input: unknown) => {
        asked.push(input);
        if (answer === 'throws') throw new Error('user table unavailable');
        if (answer === 'number') return 42 as never;
        return answer === 'gone' ? null : { name: 'Alice' };
      },
    };
    const errors: unknown[] = [];
    const disabled: Harness = {
      ...h,
      errors,
      sentinel: makeSentinel({
        store: new MemoryStore(),
        users,
        onError: (error) => errors.push(error),
        onEvent: (event) => events.push(event as (typeof events)[number]),
      }),
    };
    const post = async (): Promise<SentinelResponse> => {
      const { interaction, csrf, challenge } = await begin(disabled);
      return postAssertion(
        disabled,
        ACCOUNT,
        interaction,
        csrf,
        assert(h.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, counter: asked.length + 1 }),
      );
    };
    expectRefused(await post());
    expect(asked).toEqual([{ accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'] }]);
    expect(events.filter((event) => event.type === 'login.failed').map((event) => event.reason)).toEqual(['passkey user gone']);
    expect(events.some((event) => event.type === 'session.created')).toBe(false);
    expect(h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter, 'a refused sign-in moves no counter').toBe(0);
    // Fails closed: a hook that throws, or answers neither claims nor null, is a 500 that signs nobody in.
    for (const failing of ['throws', 'number'] as const) {
      answer = failing;
      const response = await post();
      expect(response.status, failing).toBe(500);
      expect(setCookies(response)).toEqual([]);
      expect(response.headers.location).toBeUndefined();
    }
    expect(errors).toHaveLength(2);
    expect(events.some((event) => event.type === 'session.created')).toBe(false);
    // The same user, still there, signs in with the same passkey.
    answer = 'here';
    const allowed = await post();
    expect(allowed.status).toBe(303);
    expect(new URL(String(allowed.headers.location)).searchParams.get('code')).toBeTruthy();
  });

  it('without users.passkeys the page has no passkey part and the endpoints answer 404', async () => {
    const sentinel = makeSentinel({ store: new MemoryStore() });
    const { interaction } = await startInteraction(sentinel);
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    expect(page.body).not.toContain('id="passkey"');
    expect(page.body).not.toContain('<script');
    expect(String(page.headers['content-security-policy'])).not.toContain('script-src');
    const csrf = await openLogin(sentinel, interaction);
    const response = await postForm(sentinel, `${LOGIN_PATH}/passkey/options`, new URLSearchParams({ csrf_token: csrf }).toString(), {
      query: new URLSearchParams({ interaction }),
    });
    expect(response.status).toBe(404);
  });
});
