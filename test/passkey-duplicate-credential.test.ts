/**
 * A passkey whose credential id is already registered is refused (WebAuthn Level 2 §7.1 step 26), on both ways in:
 * the account page and the offer after a password sign-in, built in-process by the software authenticator. The same
 * user re-registering an authenticator would replace its stored key and reset its signature counter; another user's
 * id would give two users one credential id, which a host that keys passkeys by id cannot tell apart. And a
 * credential id longer than 1023 bytes is refused too, as is a passkey beyond `passkeys.maxPerUser`.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelEvent, type StoredPasskey } from '../src/index.js';
import { passkeyAmr } from '../src/assurance/levels.js';
import { encodeSessionRecord, parseSessionRecord, sessionKey } from '../src/authorize/state/session.js';
import { contextOf } from '../src/http/context.js';
import {
  ACCOUNT_PATH,
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
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME, PASSKEY_ORIGIN, PASSKEY_RP_ID } from './helpers/fixtures.js';
import { attest, newCredential, type SoftwareCredential } from './helpers/software-authenticator.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const OPTIONS = `${ACCOUNT_PATH}/account/passkeys/options`;
const OFFER = `${LOGIN_PATH}/passkey/register`;
const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };
const MALLORY = 'u-mallory';

function harness(offerRegistration = false, maxPerUser?: number) {
  const passkeys = new MemoryPasskeys();
  const mallorys = newCredential();
  const stored: StoredPasskey = { id: mallorys.id, publicKey: mallorys.publicKey, counter: 7, createdAt: Date.now() };
  passkeys.save({ accountId: ACCOUNT, userId: MALLORY, passkey: stored });
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      passkeys,
    },
    account: { enabled: true },
    passkeys: { offerRegistration, ...(maxPerUser === undefined ? {} : { maxPerUser }) },
    onEvent: (event) => events.push(event),
  });
  return { sentinel, passkeys, mallorys, stored, events };
}

type Harness = ReturnType<typeof harness>;

const listed = (h: Harness, userId = USER_ID) => h.passkeys.list({ accountId: ACCOUNT, userId });

/** A credential with `id` but a key of its own: what an authenticator (or a forger) makes when it reuses an id. */
function sameId(id: string): SoftwareCredential {
  return { ...newCredential(), id };
}

async function signInToPage(h: Harness): Promise<string> {
  const start = await call(h.sentinel, { path: PAGE });
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  const csrf = await openLogin(h.sentinel, interaction);
  const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(done.headers.location).toBe(PAGE);
  return (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
}

/** The page's CSRF token and a fresh creation challenge for the signed-in user. */
async function creationChallenge(h: Harness, cookie: string): Promise<{ csrf: string; challenge: string }> {
  const page = await call(h.sentinel, { path: PAGE, headers: { cookie } });
  const csrf = csrfOf(page.body);
  const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
  expect(options.status).toBe(200);
  return { csrf, challenge: (JSON.parse(String(options.body)) as { challenge: string }).challenge };
}

async function addOnPage(h: Harness, cookie: string, credential: SoftwareCredential): Promise<string> {
  const { csrf, challenge } = await creationChallenge(h, cookie);
  const attestation = attest(credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
  const form = new URLSearchParams({ csrf_token: csrf, action: 'add-passkey', attestation }).toString();
  const answer = await postForm(h.sentinel, PAGE, form, { headers: { cookie, ...SAME_ORIGIN } });
  expect(answer.status).toBe(303);
  return String(answer.headers.location);
}

/** Makes the cookie's session one a passkey signed in: strong enough to change the passkeys of a user who has one. */
async function asPasskeySignIn(h: Harness, cookie: string): Promise<void> {
  const store = contextOf(h.sentinel).store;
  const key = sessionKey(cookie.slice('sentinel_session='.length));
  const record = parseSessionRecord(await store.get(key));
  if (record === null) throw new Error('no session to strengthen');
  await store.set(key, encodeSessionRecord({ ...record, amr: passkeyAmr('singleDevice') }), 60_000);
}

describe('a credential id already registered', () => {
  it('is added when new: the software attestation is one the service accepts', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const credential = newCredential();
    expect(await addOnPage(h, cookie, credential)).toBe(`${PAGE}?done=passkey-added`);
    expect(listed(h).map((passkey) => passkey.id)).toEqual([credential.id]);
  });

  it("is refused on the account page when another user holds it; both users' passkeys stay as they were", async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    expect(await addOnPage(h, cookie, sameId(h.mallorys.id))).toBe(`${PAGE}?done=passkey-already-registered`);
    expect(listed(h)).toEqual([]);
    expect(listed(h, MALLORY)).toEqual([h.stored]);
    expect(h.events.some((event) => event.type === 'passkey.added')).toBe(false);
    const page = await call(h.sentinel, {
      path: PAGE,
      query: new URLSearchParams({ done: 'passkey-already-registered' }),
      headers: { cookie },
    });
    expect(page.body).toContain('already registered');
  });

  it('is refused on the account page when the same user registers it again: its key and counter stay', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const credential = newCredential();
    expect(await addOnPage(h, cookie, credential)).toBe(`${PAGE}?done=passkey-added`);
    const [first] = listed(h);
    await asPasskeySignIn(h, cookie);
    expect(await addOnPage(h, cookie, sameId(credential.id))).toBe(`${PAGE}?done=passkey-already-registered`);
    expect(listed(h)).toEqual([first]);
  });

  it('is refused by the offer after a password sign-in, which stays open for another passkey or "Not now"', async () => {
    const h = harness(true);
    const { interaction } = await startInteraction(h.sentinel);
    const loginCsrf = await openLogin(h.sentinel, interaction);
    const passed = await postLogin(h.sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
    expect(String(passed.headers.location)).toBe(`${OFFER}?interaction=${interaction}`);
    const cookie = stepCookie(passed);
    const query = new URLSearchParams({ interaction });
    const offer = await call(h.sentinel, { path: OFFER, query, headers: { cookie } });
    const csrf = csrfOf(offer.body);
    const options = await postForm(h.sentinel, `${OFFER}/options`, `csrf_token=${csrf}`, { query, headers: { cookie } });
    expect(options.status).toBe(200);
    const { challenge } = JSON.parse(String(options.body)) as { challenge: string };
    const attestation = attest(sameId(h.mallorys.id), { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
    const refused = await postForm(h.sentinel, OFFER, new URLSearchParams({ csrf_token: csrf, attestation }).toString(), {
      query,
      headers: { cookie },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('already registered');
    expect(listed(h)).toEqual([]);
    expect(listed(h, MALLORY)).toEqual([h.stored]);
  });
});

describe('a credential id over 1023 bytes', () => {
  // WebAuthn Level 3 §7.1 (the credentialId check): an id longer than that should fail the ceremony; the host
  // would store it and every sign-in of the user would carry it.
  it('is refused and nothing saved; one of 1023 bytes is added', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const long = { ...newCredential(), id: Buffer.alloc(1024, 7).toString('base64url') };
    expect(await addOnPage(h, cookie, long)).toBe(`${PAGE}?done=passkey-not-added`);
    expect(listed(h)).toEqual([]);
    const longest = { ...newCredential(), id: Buffer.alloc(1023, 7).toString('base64url') };
    expect(await addOnPage(h, cookie, longest)).toBe(`${PAGE}?done=passkey-added`);
    expect(listed(h).map((passkey) => passkey.id)).toEqual([longest.id]);
  });
});

describe('a passkey beyond passkeys.maxPerUser', () => {
  // Unbounded, one signed-in user (or a script with a software authenticator) could add rows to the host's store
  // without end, and passkeys past the 200 the account page reads could be neither seen nor removed there.
  it('is refused before the ceremony and at the save; the page says to remove one instead of offering Add', async () => {
    const h = harness(false, 2);
    const cookie = await signInToPage(h);
    expect(await addOnPage(h, cookie, newCredential())).toBe(`${PAGE}?done=passkey-added`);
    await asPasskeySignIn(h, cookie);
    // A ceremony started at one passkey; a second one is added elsewhere meanwhile (another tab, the host).
    const { csrf, challenge } = await creationChallenge(h, cookie);
    const elsewhere = newCredential();
    h.passkeys.save({
      accountId: ACCOUNT,
      userId: USER_ID,
      passkey: { id: elsewhere.id, publicKey: elsewhere.publicKey, counter: 0, createdAt: Date.now() },
    });
    const attestation = attest(newCredential(), { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
    const form = new URLSearchParams({ csrf_token: csrf, action: 'add-passkey', attestation }).toString();
    const refused = await postForm(h.sentinel, PAGE, form, { headers: { cookie, ...SAME_ORIGIN } });
    expect(refused.headers.location).toBe(`${PAGE}?done=passkey-limit`);
    expect(listed(h)).toHaveLength(2);
    expect(h.events.filter((event) => event.type === 'passkey.added')).toHaveLength(1);
    const notice = await call(h.sentinel, { path: PAGE, query: new URLSearchParams({ done: 'passkey-limit' }), headers: { cookie } });
    expect(notice.body).toContain('role="alert">You have the most passkeys you can have. Remove one to add another.');
    // At the limit: no Add button, and no options, so no authenticator makes a credential the save would refuse.
    expect(notice.body).toContain('id="passkey-limit"');
    expect(notice.body).not.toContain('id="passkey-button"');
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(400);
    expect(String(options.body)).toContain('Remove one to add another');
  });

  it('is 20 unless set', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    expect(await addOnPage(h, cookie, newCredential())).toBe(`${PAGE}?done=passkey-added`);
    await asPasskeySignIn(h, cookie);
    for (let index = 1; index < 20; index++) {
      const other = newCredential();
      h.passkeys.save({
        accountId: ACCOUNT,
        userId: USER_ID,
        passkey: { id: other.id, publicKey: other.publicKey, counter: 0, createdAt: index },
      });
    }
    const page = await call(h.sentinel, { path: PAGE, headers: { cookie } });
    const options = await postForm(h.sentinel, OPTIONS, `csrf_token=${csrfOf(page.body)}`, { headers: { cookie, ...SAME_ORIGIN } });
    expect(options.status).toBe(400);
  });
});
