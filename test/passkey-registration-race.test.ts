/**
 * Two registrations of one credential id at the same moment (WebAuthn Level 2 §7.1 step 26): the check that no user
 * of the account has the id and the save that follows must act as one step, or both registrations pass the check
 * before either saves. The same user's second save then replaces the first one's key (and resets its counter), and
 * a user store that appends keeps two rows for one credential.
 *
 * The window is held open deterministically: `findCredentialOwner` waits until two registrations have reached it
 * (or 300 ms passed, when only one ever does), so without a claim around check and save both always get there. On
 * the account page (two sessions of one user) and on the offer after a password sign-in (two interactions); on
 * MemoryStore, and on two instances sharing a real Redis (each registration posted to its own instance).
 */
import { describe, expect, it } from 'vitest';
import {
  MemoryPasskeys,
  MemoryStore,
  type PasskeyHooks,
  type Sentinel,
  type SentinelEvent,
  type SentinelResponse,
  type StoredPasskey,
  type Store,
} from '../src/index.js';
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
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { attest, newCredential, type SoftwareCredential } from './helpers/software-authenticator.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const OPTIONS = `${ACCOUNT_PATH}/account/passkeys/options`;
const OFFER = `${LOGIN_PATH}/passkey/register`;
const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };

/** MemoryPasskeys whose owner lookup lets two registrations meet there before either goes on to save. */
class MeetingPasskeys implements PasskeyHooks {
  readonly #inner = new MemoryPasskeys();
  #waiting: (() => void)[] = [];
  /** Makes the next `save` throw, as a user database that is down would. */
  failNextSave = false;

  list(input: { accountId: string; userId: string }): readonly StoredPasskey[] {
    return this.#inner.list(input);
  }

  save(input: { accountId: string; userId: string; passkey: StoredPasskey }): void {
    if (this.failNextSave) {
      this.failNextSave = false;
      throw new Error('the user database is down');
    }
    this.#inner.save(input);
  }

  async findCredentialOwner(input: { accountId: string; credentialId: string }): Promise<string | null> {
    const owner = this.#inner.findCredentialOwner(input);
    await new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      if (this.#waiting.length === 2) for (const release of this.#waiting.splice(0)) release();
      else setTimeout(resolve, 300);
    });
    return owner;
  }

  updateCounter(input: Parameters<PasskeyHooks['updateCounter']>[0]): boolean {
    return this.#inner.updateCounter(input);
  }
}

/** Two instances over `stores` (one when both are the same store), sharing the host's passkeys as a database. */
function harness(stores: [Store, Store], offerRegistration = false) {
  const passkeys = new MeetingPasskeys();
  const events: SentinelEvent[] = [];
  const make = (store: Store) =>
    makeSentinel({
      store,
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        passkeys,
      },
      account: { enabled: true },
      passkeys: { offerRegistration },
      onEvent: (event) => events.push(event),
    });
  const first = make(stores[0]);
  const sentinels: [Sentinel, Sentinel] = [first, stores[0] === stores[1] ? first : make(stores[1])];
  return { sentinels, passkeys, events };
}

type Harness = ReturnType<typeof harness>;

const listed = (h: Harness): readonly StoredPasskey[] => h.passkeys.list({ accountId: ACCOUNT, userId: USER_ID });

/** Two credentials with one id and keys of their own: what a forger (or a faulty authenticator) makes. */
function twoWithOneId(): [SoftwareCredential, SoftwareCredential] {
  const first = newCredential();
  return [first, { ...newCredential(), id: first.id }];
}

async function signInToPage(sentinel: Sentinel): Promise<string> {
  const start = await call(sentinel, { path: PAGE });
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  const csrf = await openLogin(sentinel, interaction);
  const done = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(done.headers.location).toBe(PAGE);
  return (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
}

/** A signed-in account page, ready to post the attestation of `credential` for its own challenge. */
async function accountPagePost(sentinel: Sentinel, credential: SoftwareCredential): Promise<() => Promise<SentinelResponse>> {
  const cookie = await signInToPage(sentinel);
  const page = await call(sentinel, { path: PAGE, headers: { cookie } });
  const csrf = csrfOf(page.body);
  const options = await postForm(sentinel, OPTIONS, `csrf_token=${csrf}`, { headers: { cookie, ...SAME_ORIGIN } });
  expect(options.status).toBe(200);
  const { challenge } = JSON.parse(String(options.body)) as { challenge: string };
  const attestation = attest(credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
  const form = new URLSearchParams({ csrf_token: csrf, action: 'add-passkey', attestation }).toString();
  return () => postForm(sentinel, PAGE, form, { headers: { cookie, ...SAME_ORIGIN } });
}

/** A password sign-in parked at the passkey offer, ready to post the attestation of `credential`. */
async function offerPost(sentinel: Sentinel, credential: SoftwareCredential): Promise<() => Promise<SentinelResponse>> {
  const { interaction } = await startInteraction(sentinel);
  const loginCsrf = await openLogin(sentinel, interaction);
  const passed = await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
  expect(String(passed.headers.location)).toBe(`${OFFER}?interaction=${interaction}`);
  const cookie = stepCookie(passed);
  const query = new URLSearchParams({ interaction });
  const offer = await call(sentinel, { path: OFFER, query, headers: { cookie } });
  const csrf = csrfOf(offer.body);
  const options = await postForm(sentinel, `${OFFER}/options`, `csrf_token=${csrf}`, { query, headers: { cookie } });
  expect(options.status).toBe(200);
  const { challenge } = JSON.parse(String(options.body)) as { challenge: string };
  const attestation = attest(credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID });
  const form = new URLSearchParams({ csrf_token: csrf, attestation }).toString();
  return () => postForm(sentinel, OFFER, form, { query, headers: { cookie } });
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: two registrations of one credential id at once`, () => {
    it('on the account page: one is added, the other is told it is registered, and the stored key is the winner', async () => {
      const h = harness(stores());
      const [first, second] = twoWithOneId();
      const posts = [await accountPagePost(h.sentinels[0], first), await accountPagePost(h.sentinels[1], second)];
      const answers = await Promise.all(posts.map((post) => post()));
      const outcomes = answers.map((answer) => String(answer.headers.location));
      expect([...outcomes].sort()).toEqual([`${PAGE}?done=passkey-added`, `${PAGE}?done=passkey-already-registered`]);
      const winner = outcomes[0] === `${PAGE}?done=passkey-added` ? first : second;
      expect(listed(h).map((passkey) => [passkey.id, passkey.publicKey])).toEqual([[winner.id, winner.publicKey]]);
      expect(h.events.filter((event) => event.type === 'passkey.added')).toHaveLength(1);
    });

    it('on the offer after a password sign-in: one signs in with its passkey added, the other stays at the offer', async () => {
      const h = harness(stores(), true);
      const [first, second] = twoWithOneId();
      const posts = [await offerPost(h.sentinels[0], first), await offerPost(h.sentinels[1], second)];
      const answers = await Promise.all(posts.map((post) => post()));
      expect(answers.map((answer) => answer.status).sort()).toEqual([303, 400]);
      const refused = answers.find((answer) => answer.status === 400);
      expect(refused?.body).toContain('already registered');
      const winner = answers[0]?.status === 303 ? first : second;
      expect(listed(h).map((passkey) => [passkey.id, passkey.publicKey])).toEqual([[winner.id, winner.publicKey]]);
    });

    it('a save that failed leaves nothing behind: the same credential id is added by the next try', async () => {
      const h = harness(stores());
      const credential = newCredential();
      h.passkeys.failNextSave = true;
      const failed = await (await accountPagePost(h.sentinels[0], credential))();
      expect(failed.status).toBe(500);
      expect(listed(h)).toEqual([]);
      const retried = await (await accountPagePost(h.sentinels[1], credential))();
      expect(String(retried.headers.location)).toBe(`${PAGE}?done=passkey-added`);
      expect(listed(h).map((passkey) => passkey.id)).toEqual([credential.id]);
    });
  });
}

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('passkey-registration-race', 'RedisStore (two instances on one Redis)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
