/**
 * The per-address throttle of passkey sign-in (`passkeys.maxFailuresPerIp`): attempts that do not sign in are
 * counted per client address before the host's `users.passkeys.list` is asked, past the limit the answer is 429 with
 * `Retry-After` in the sign-in's language and asks nothing, a passkey that signs in gives its slot back, the count
 * holds across instances sharing the Store, and a Store that cannot count fails the attempt closed.
 */
import { describe, expect, it } from 'vitest';
import { MemoryPasskeys, MemoryStore, type SentinelEvent, type SentinelOptions, type SentinelResponse, type Store } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call, csrfOf, jsonOf, LOGIN_PATH, postForm, setCookies } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, USER_ID, PASSKEY_ORIGIN, PASSKEY_RP_ID } from './helpers/fixtures.js';
import { assert, newCredential, type SoftwareCredential } from './helpers/software-authenticator.js';

const ATTACKER = '198.51.100.9';
const NEIGHBOUR = '203.0.113.50';

interface World {
  instances: ReturnType<typeof makeSentinel>[];
  credential: SoftwareCredential;
  listCalls: () => number;
  events: SentinelEvent[];
  errors: unknown[];
}

function world(options: { store?: Store; instances?: number; limit?: number; passkeys?: SentinelOptions['passkeys'] } = {}): World {
  const store = options.store ?? new MemoryStore();
  const passkeys = new MemoryPasskeys();
  const credential = newCredential();
  passkeys.save({
    accountId: ACCOUNT,
    userId: USER_ID,
    passkey: { id: credential.id, publicKey: credential.publicKey, counter: 0, createdAt: Date.now() },
  });
  let calls = 0;
  const list = passkeys.list.bind(passkeys);
  passkeys.list = (input) => {
    calls += 1;
    return list(input);
  };
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const passkeyOptions: Partial<SentinelOptions> =
    options.passkeys !== undefined
      ? { passkeys: options.passkeys }
      : options.limit === undefined
        ? {}
        : { passkeys: { maxFailuresPerIp: options.limit } };
  const instances = Array.from({ length: options.instances ?? 1 }, () =>
    makeSentinel({
      store,
      users: { authenticate: async () => null, passkeys },
      onEvent: (event) => {
        events.push(event);
      },
      onError: (error) => errors.push(error),
      ...passkeyOptions,
    }),
  );
  return { instances, credential, listCalls: () => calls, events, errors };
}

type Sentinel = World['instances'][number];

/** A fresh sign-in on `sentinel`: its interaction, the login form's token and a sign-in challenge. */
async function begin(sentinel: Sentinel, query = authorizeQuery()): Promise<{ interaction: string; csrf: string; challenge: string }> {
  const started = await call(sentinel, { path: AUTHORIZE_PATH, query });
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

function post(
  sentinel: Sentinel,
  started: { interaction: string; csrf: string },
  assertion: string,
  ip: string,
): Promise<SentinelResponse> {
  return postForm(sentinel, `${LOGIN_PATH}/passkey`, new URLSearchParams({ csrf_token: started.csrf, assertion }).toString(), {
    query: new URLSearchParams({ interaction: started.interaction }),
    ip,
  });
}

/** An assertion signed by the credential under another user's handle: the host is asked, the signature checked. */
function wrongUser(w: World, challenge: string): string {
  return assert(w.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: 'u-someone-else' });
}

function right(w: World, challenge: string): string {
  return assert(w.credential, { challenge, origin: PASSKEY_ORIGIN, rpId: PASSKEY_RP_ID, userHandle: USER_ID });
}

function expectThrottled(response: SentinelResponse): void {
  expect(response.status).toBe(429);
  expect(response.headers['retry-after']).toBe('900');
  expect(response.headers.location).toBeUndefined();
  expect(setCookies(response)).toEqual([]);
}

describe('passkey sign-in throttle', () => {
  it('refuses an address past passkeys.maxFailuresPerIp with 429, asking the host nothing and spending no challenge', async () => {
    const w = world({ limit: 3 });
    const [sentinel] = w.instances as [Sentinel];
    for (let i = 0; i < 3; i += 1) {
      const started = await begin(sentinel);
      expect((await post(sentinel, started, wrongUser(w, started.challenge), ATTACKER)).status).toBe(400);
    }
    expect(w.listCalls()).toBe(3);
    const started = await begin(sentinel);
    const refused = await post(sentinel, started, wrongUser(w, started.challenge), ATTACKER);
    expectThrottled(refused);
    expect(refused.body).toContain('Too many failed sign-in attempts.');
    expect(w.listCalls(), 'a throttled attempt asks users.passkeys.list nothing').toBe(3);
    expect(w.events.filter((event) => event.type === 'login.throttled')).toEqual([
      expect.objectContaining({ type: 'login.throttled', accountId: ACCOUNT, scope: 'ip' }),
    ]);
    // Another address is not held back, and the throttled post left the interaction's challenge for it.
    const signedIn = await post(sentinel, started, right(w, started.challenge), NEIGHBOUR);
    expect(signedIn.status).toBe(303);
    expect(new URL(String(signedIn.headers.location)).searchParams.get('code')).toBeTruthy();
  });

  it('answers the 429 in the language of the sign-in', async () => {
    const w = world({ limit: 1 });
    const [sentinel] = w.instances as [Sentinel];
    const first = await begin(sentinel);
    expect((await post(sentinel, first, wrongUser(w, first.challenge), ATTACKER)).status).toBe(400);
    const german = await begin(sentinel, authorizeQuery({ ui_locales: 'de' }));
    const refused = await post(sentinel, german, wrongUser(w, german.challenge), ATTACKER);
    expectThrottled(refused);
    expect(refused.body).toContain('lang="de"');
    expect(refused.body).toContain('Zu viele fehlgeschlagene Anmeldeversuche.');
  });

  it('a passkey that signs in gives its slot back: sign-ins alone never reach the limit', async () => {
    const w = world({ limit: 2 });
    const [sentinel] = w.instances as [Sentinel];
    for (let i = 0; i < 6; i += 1) {
      const started = await begin(sentinel);
      expect((await post(sentinel, started, right(w, started.challenge), ATTACKER)).status).toBe(303);
    }
  });

  it('the count holds across instances sharing the Store', async () => {
    const w = world({ limit: 4, instances: 2 });
    const [a, b] = w.instances as [Sentinel, Sentinel];
    for (const sentinel of [a, b, a, b]) {
      const started = await begin(sentinel);
      expect((await post(sentinel, started, wrongUser(w, started.challenge), ATTACKER)).status).toBe(400);
    }
    for (const sentinel of [a, b]) {
      const started = await begin(sentinel);
      expectThrottled(await post(sentinel, started, wrongUser(w, started.challenge), ATTACKER));
    }
    expect(w.listCalls()).toBe(4);
  });

  it('defaults to 100 attempts per address', async () => {
    const store = new MemoryStore();
    const w = world({ store });
    const [sentinel] = w.instances as [Sentinel];
    // 99 attempts already counted for the address in this window: the 100th is checked, the 101st refused.
    for (let i = 0; i < 99; i += 1) await store.increment(`throttle:passkey:ip:${ATTACKER}`, 900_000);
    const hundredth = await begin(sentinel);
    expect((await post(sentinel, hundredth, wrongUser(w, hundredth.challenge), ATTACKER)).status).toBe(400);
    const next = await begin(sentinel);
    expectThrottled(await post(sentinel, next, wrongUser(w, next.challenge), ATTACKER));
  });

  it('fails closed when the Store cannot count: 500, onError, the host asked nothing, nothing issued', async () => {
    for (const fault of ['throws', 'no number'] as const) {
      const inner = new MemoryStore();
      // The inner store's own methods, bound to it, but for the passkey throttle's counter.
      const store = new Proxy(inner, {
        get(target, name) {
          if (name === 'increment') {
            return async (key: string, ttlMs: number) => {
              if (!key.startsWith('throttle:passkey:')) return target.increment(key, ttlMs);
              if (fault === 'throws') throw new Error('store unreachable');
              return undefined;
            };
          }
          const value = Reflect.get(target, name, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }) as Store;
      const w = world({ store });
      const [sentinel] = w.instances as [Sentinel];
      const started = await begin(sentinel);
      const response = await post(sentinel, started, right(w, started.challenge), ATTACKER);
      expect(response.status, fault).toBe(500);
      expect(setCookies(response)).toEqual([]);
      expect(response.headers.location).toBeUndefined();
      expect(w.listCalls(), fault).toBe(0);
      expect(w.errors, fault).toHaveLength(1);
    }
  });
});

describe('passkey sign-in throttle per IPv6 /48 (passkeys.maxFailuresPerNetwork)', () => {
  it('bounds the /64s of one /48 at ten times maxFailuresPerIp, creating no counter past it; another /48 goes on', async () => {
    const store = new MemoryStore();
    const w = world({ store, limit: 1 });
    const [sentinel] = w.instances as [Sentinel];
    const statuses: number[] = [];
    for (let i = 0; i < 14; i += 1) {
      const started = await begin(sentinel);
      statuses.push((await post(sentinel, started, wrongUser(w, started.challenge), `2001:db8:5:${i.toString(16)}::1`)).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(400), ...Array<number>(4).fill(429)]);
    expect(w.listCalls()).toBe(10);
    // The counters of the /64s the network refused were never created (they would fill the login throttle's area).
    expect(await store.get('throttle:passkey:ip:2001:db8:5:9')).toBe('1');
    expect(await store.get('throttle:passkey:ip:2001:db8:5:a')).toBeNull();
    expect(await store.get('throttle:passkey:net:2001:db8:5')).toBe('10');
    const other = await begin(sentinel);
    expect((await post(sentinel, other, wrongUser(w, other.challenge), '2001:db8:6::1')).status).toBe(400);
    const ipv4 = await begin(sentinel);
    expect((await post(sentinel, ipv4, right(w, ipv4.challenge), NEIGHBOUR)).status).toBe(303);
  });

  it('is its own option, and a passkey that signs in gives the network its slot back too', async () => {
    const store = new MemoryStore();
    const w = world({ store, passkeys: { maxFailuresPerIp: 5, maxFailuresPerNetwork: 2 } });
    const [sentinel] = w.instances as [Sentinel];
    for (let i = 0; i < 4; i += 1) {
      const started = await begin(sentinel);
      expect((await post(sentinel, started, right(w, started.challenge), `2001:db8:5:${i}::1`)).status).toBe(303);
    }
    // Each sign-in gave the network its slot back, and the counter it brought to zero is gone rather than kept at 0.
    expect(await store.get('throttle:passkey:net:2001:db8:5')).toBeNull();
    for (let i = 0; i < 2; i += 1) {
      const started = await begin(sentinel);
      expect((await post(sentinel, started, wrongUser(w, started.challenge), `2001:db8:5:${10 + i}::1`)).status).toBe(400);
    }
    const started = await begin(sentinel);
    expectThrottled(await post(sentinel, started, wrongUser(w, started.challenge), '2001:db8:5:20::1'));
  });
});
