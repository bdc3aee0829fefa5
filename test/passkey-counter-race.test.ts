/**
 * The passkey signature counter (WebAuthn §6.1.1) is written by compare-and-set: after an assertion verifies, the
 * counter moves from the value that was read to the assertion's, or the sign-in is refused as a replayed counter.
 *
 * The windows are made deterministic, not left to luck: the user store's `list` holds every assertion of a round
 * until all of them have read the stored counter, and `updateCounter` can be held until another assertion's write is
 * done. On MemoryStore, and on two instances sharing a real Redis (the challenges live there; the passkeys are the
 * host's, one store behind both instances as a user database would be).
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
import { authorizeQuery, call, csrfOf, jsonOf, LOGIN_PATH, postForm, setCookies } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME, PASSKEY_ORIGIN, PASSKEY_RP_ID } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { assert, newCredential, type SoftwareCredential } from './helpers/software-authenticator.js';

type CounterInput = Parameters<PasskeyHooks['updateCounter']>[0];

/**
 * MemoryPasskeys with the two windows of a race held open: `gate(n)` makes the next `n` lists wait for each other
 * (each has read the counter before any goes on), and `writeOrder` makes the counter writes happen in that order of
 * new counters.
 */
class HeldPasskeys implements PasskeyHooks {
  readonly inner = new MemoryPasskeys();
  writeOrder: number[] = [];
  #gate = 0;
  #waiting: (() => void)[] = [];
  #writes: (() => void)[] = [];

  gate(count: number): void {
    this.#gate = count;
  }

  async list(input: { accountId: string; userId: string }): Promise<readonly StoredPasskey[]> {
    const read = this.inner.list(input);
    if (this.#gate > 0) {
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
        if (this.#waiting.length === this.#gate) {
          this.#gate = 0;
          for (const release of this.#waiting.splice(0)) release();
        }
      });
    }
    return read;
  }

  save(input: { accountId: string; userId: string; passkey: StoredPasskey }): void {
    this.inner.save(input);
  }

  async updateCounter(input: CounterInput): Promise<boolean> {
    while (this.writeOrder.length > 0 && this.writeOrder[0] !== input.counter) {
      await new Promise<void>((resolve) => this.#writes.push(resolve));
    }
    try {
      return this.inner.updateCounter(input);
    } finally {
      if (this.writeOrder[0] === input.counter) this.writeOrder.shift();
      for (const wake of this.#writes.splice(0)) wake();
    }
  }

  counter(): number | undefined {
    return this.inner.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter;
  }
}

interface World {
  sentinels: [Sentinel, Sentinel];
  passkeys: HeldPasskeys;
  credential: SoftwareCredential;
  events: SentinelEvent[];
  errors: unknown[];
}

function world(stores: [Store, Store], hooks?: (passkeys: HeldPasskeys) => PasskeyHooks): World {
  const passkeys = new HeldPasskeys();
  const credential = newCredential();
  passkeys.save({
    accountId: ACCOUNT,
    userId: USER_ID,
    passkey: { id: credential.id, publicKey: credential.publicKey, counter: 0, createdAt: Date.now() },
  });
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const make = (store: Store) =>
    makeSentinel({
      store,
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        passkeys: hooks === undefined ? passkeys : hooks(passkeys),
      },
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
    });
  const first = make(stores[0]);
  return { sentinels: [first, stores[0] === stores[1] ? first : make(stores[1])], passkeys, credential, events, errors };
}

/** A fresh interaction on `sentinel`, its login CSRF token and a sign-in challenge for it. */
async function begin(sentinel: Sentinel): Promise<{ interaction: string; csrf: string; challenge: string }> {
  const started = await call(sentinel, { path: `/sentinel/api/account/${ACCOUNT}/authorize`, query: authorizeQuery() });
  expect(started.status).toBe(302);
  const interaction = new URL(String(started.headers.location), PASSKEY_ORIGIN).searchParams.get('interaction') ?? '';
  const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
  const csrf = csrfOf(page.body);
  const options = await postForm(sentinel, `${LOGIN_PATH}/passkey/options`, new URLSearchParams({ csrf_token: csrf }).toString(), {
    query: new URLSearchParams({ interaction }),
    headers: { accept: 'application/json' },
  });
  expect(options.status).toBe(200);
  return { interaction, csrf, challenge: String(jsonOf(options).challenge) };
}

/** An assertion with `counter` on its own interaction of `sentinel`, ready to post. */
async function prepared(w: World, sentinel: Sentinel, counter: number): Promise<() => Promise<SentinelResponse>> {
  const { interaction, csrf, challenge } = await begin(sentinel);
  const assertion = assert(w.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID, counter });
  return () =>
    postForm(sentinel, `${LOGIN_PATH}/passkey`, new URLSearchParams({ csrf_token: csrf, assertion }).toString(), {
      query: new URLSearchParams({ interaction }),
    });
}

function signedIn(response: SentinelResponse): boolean {
  return response.status === 303 && new URL(String(response.headers.location)).searchParams.has('code');
}

function expectRefused(response: SentinelResponse): void {
  expect(response.status).toBe(400);
  expect(response.headers.location).toBeUndefined();
  expect(setCookies(response)).toEqual([]);
  expect(response.body).toContain('That passkey could not be used.');
}

function successes(w: World): number {
  return w.events.filter((event) => event.type === 'login.succeeded').length;
}

function cases(name: string, stores: () => [Store, Store]): void {
  describe(`${name}: the passkey counter moves by compare-and-set`, () => {
    it('two concurrent assertions replaying one counter value (a cloned authenticator): exactly one signs in', async () => {
      const w = world(stores());
      const [a, b] = w.sentinels;
      const posts = [await prepared(w, a, 5), await prepared(w, b, 5)];
      w.passkeys.gate(2);
      const responses = await Promise.all(posts.map((post) => post()));
      expect(responses.filter(signedIn)).toHaveLength(1);
      const refused = responses.find((response) => !signedIn(response));
      expectRefused(refused as SentinelResponse);
      expect(successes(w)).toBe(1);
      expect(w.events.filter((event) => event.type === 'session.created')).toHaveLength(1);
      expect(w.passkeys.counter()).toBe(5);
      expect(w.errors).toEqual([]);
    });

    it('a slower write never moves the counter back: the assertion that lost the race is refused', async () => {
      const w = world(stores());
      const [a, b] = w.sentinels;
      const ahead = await prepared(w, a, 10);
      const behind = await prepared(w, b, 5);
      // Both read 0 and verify (10 > 0, 5 > 0); 10 is written first, then 5 would land on top of it.
      w.passkeys.gate(2);
      w.passkeys.writeOrder = [10, 5];
      const [first, second] = await Promise.all([ahead(), behind()]);
      expect(signedIn(first)).toBe(true);
      expectRefused(second);
      expect(w.passkeys.counter()).toBe(10);
      expect(successes(w)).toBe(1);
      expect(w.errors).toEqual([]);
    });

    it('an authenticator that always reports 0 still signs in, one after another and concurrently', async () => {
      const w = world(stores());
      const [a, b] = w.sentinels;
      expect(signedIn(await (await prepared(w, a, 0))()), 'first sign-in').toBe(true);
      expect(signedIn(await (await prepared(w, b, 0))()), 'second sign-in').toBe(true);
      const posts = [await prepared(w, a, 0), await prepared(w, b, 0)];
      w.passkeys.gate(2);
      const responses = await Promise.all(posts.map((post) => post()));
      expect(responses.every(signedIn)).toBe(true);
      expect(w.passkeys.counter()).toBe(0);
      expect(successes(w)).toBe(4);
      expect(w.errors).toEqual([]);
    });

    it('a counter hook that answers neither true nor false fails closed: 500, nothing issued', async () => {
      const w = world(stores(), (passkeys) => ({
        list: (input) => passkeys.list(input),
        save: (input) => passkeys.save(input),
        // A host hook written for a plain write: it answers nothing.
        updateCounter: (async () => undefined) as unknown as PasskeyHooks['updateCounter'],
      }));
      const response = await (await prepared(w, w.sentinels[0], 1))();
      expect(response.status).toBe(500);
      expect(setCookies(response)).toEqual([]);
      expect(successes(w)).toBe(0);
      expect(w.errors).toHaveLength(1);
    });
  });
}

describe('MemoryPasskeys.updateCounter', () => {
  const saved = (): MemoryPasskeys => {
    const passkeys = new MemoryPasskeys();
    passkeys.save({ accountId: ACCOUNT, userId: USER_ID, passkey: { id: 'cred-1', publicKey: 'pQE', counter: 4, createdAt: 0 } });
    return passkeys;
  };
  const counterOf = (passkeys: MemoryPasskeys) => passkeys.list({ accountId: ACCOUNT, userId: USER_ID })[0]?.counter;

  it('writes only over the counter that was read, and says whether it did', () => {
    const passkeys = saved();
    expect(passkeys.updateCounter({ accountId: ACCOUNT, userId: USER_ID, credentialId: 'cred-1', expectedCounter: 4, counter: 9 })).toBe(
      true,
    );
    expect(counterOf(passkeys)).toBe(9);
    // A second write read 4 too: the counter is no longer 4, so nothing changes.
    expect(passkeys.updateCounter({ accountId: ACCOUNT, userId: USER_ID, credentialId: 'cred-1', expectedCounter: 4, counter: 6 })).toBe(
      false,
    );
    expect(counterOf(passkeys)).toBe(9);
  });

  it('answers false for a credential, user or account it does not hold', () => {
    const passkeys = saved();
    for (const input of [
      { accountId: ACCOUNT, userId: USER_ID, credentialId: 'cred-2' },
      { accountId: ACCOUNT, userId: 'u-other', credentialId: 'cred-1' },
      { accountId: 'other-account', userId: USER_ID, credentialId: 'cred-1' },
    ]) {
      expect(passkeys.updateCounter({ ...input, expectedCounter: 4, counter: 5 })).toBe(false);
    }
    expect(counterOf(passkeys)).toBe(4);
  });
});

cases('MemoryStore', () => {
  const store = new MemoryStore();
  return [store, store];
});

await describeOnSharedRedis('passkey-counter-race', 'RedisStore (two instances on one Redis)', (newStore) =>
  cases('RedisStore', () => [newStore(), newStore()]),
);
