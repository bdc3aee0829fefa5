/**
 * The login throttle under concurrency, over real HTTP through `sentinel.handle()` (the throttle is the core's;
 * that every framework hands it the client address is `test/trust-proxy.test.ts`'s concern): bursts of simultaneous guesses (20 on
 * one username, 80 over 80 usernames from one address) never reach the user store more often than the limits allow,
 * on MemoryStore and on a RedisStore shared by two instances, with a slow (scrypt on the thread pool) and an
 * instant authenticator. The right password sent while the slots are taken is refused with 429, not signed in.
 *
 * The Redis half is skipped (with the reason printed) when no Redis answers at REDIS_URL, unless
 * SENTINEL_REQUIRE_REDIS=1 makes that a failure.
 */
import { randomBytes, scrypt } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateJWK, type JWK, type Sentinel, type SentinelOptions, type Store } from '../src/index.js';
import { MemoryStore } from '../src/stores/memory.js';
import { RedisStore } from '../src/stores/redis.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from './helpers/fixtures.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { Host, MountedHost } from './helpers/host.js';
import { openLogin, postLogin as postLoginDirect, recordingStore, startInteraction } from './helpers/direct-flow.js';
import { deleteByPrefix, REDIS_URL, requireAvailable, sharedRedis } from './helpers/redis.js';

const redis = await sharedRedis('login-throttle-concurrency');
/** The throttle is the core's, so one host: `sentinel.handle()` with no framework around it. */
const THROTTLE_HOSTS: Host[] = [HANDLE_HOST];
const LIMITS = { maxFailures: 5, maxFailuresPerIp: 50, windowSeconds: 900 };
const ACCOUNT_PATH = `/sentinel/api/account/${ACCOUNT}`;

type Authenticate = NonNullable<SentinelOptions['users']>['authenticate'];

/** scrypt on the thread pool: the password check yields, as a real one does, so unsynchronised checks interleave. */
function slowHash(password: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, 'throttle-test-salt', 32, { N: 4096, r: 8, p: 1 }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** An authenticator that counts its calls; `gate` (when given) holds every wrong-password call until released. */
function countingUsers(kind: 'slow' | 'instant', gate?: Promise<void>): { authenticate: Authenticate; calls: () => number } {
  let calls = 0;
  const authenticate: Authenticate = async ({ username, password }) => {
    calls += 1;
    if (kind === 'slow') await slowHash(password);
    const right = username === USERNAME && password === PASSWORD;
    if (!right && gate !== undefined) await gate;
    return right ? { id: USER_ID } : null;
  };
  return { authenticate, calls: () => calls };
}

/** Two running hosts of one framework over two sentinels sharing `store` (MemoryStore: one sentinel twice). */
interface Pair {
  urls: [string, string];
  close(): Promise<void>;
}

async function mountPair(host: Host, options: Partial<SentinelOptions>, shared: boolean): Promise<Pair> {
  const first = makeSentinel(options);
  const second: Sentinel = shared ? makeSentinel(options) : first;
  const mounted: MountedHost[] = [await host.mount(first), await host.mount(second)];
  return {
    urls: [mounted[0]!.url, mounted[1]!.url],
    close: async () => {
      for (const one of mounted) await one.close();
    },
  };
}

/** An interaction opened at `base`: the login URL path and the form's CSRF token. */
async function openInteraction(base: string): Promise<{ loginURL: string; csrf: string }> {
  const query = new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, state: 'st' });
  const authorize = await fetch(`${base}${ACCOUNT_PATH}/authorize?${query}`, { redirect: 'manual' });
  expect(authorize.status).toBe(302);
  const location = authorize.headers.get('location') ?? '';
  const page = await fetch(`${base}${location}`);
  expect(page.status).toBe(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1];
  expect(csrf).toBeTruthy();
  return { loginURL: `${base}${location}`, csrf: csrf as string };
}

async function postLogin(target: { loginURL: string; csrf: string }, username: string, password: string): Promise<number> {
  const response = await fetch(target.loginURL, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf_token: target.csrf, username, password }).toString(),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Opens one interaction per attempt (alternating instances), then fires every attempt at once. */
async function burst(pair: Pair, attempts: Array<{ username: string; password: string }>): Promise<number[]> {
  const targets: Array<{ loginURL: string; csrf: string }> = [];
  for (let index = 0; index < attempts.length; index += 1) targets.push(await openInteraction(pair.urls[index % 2] as string));
  return Promise.all(attempts.map((attempt, index) => postLogin(targets[index]!, attempt.username, attempt.password)));
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

interface StoreKind {
  name: string;
  skip: boolean;
  /** A fresh store; `shared` says whether two sentinels over it stand for two instances. */
  make(): { store: Store; shared: boolean };
}

let client: Redis | undefined;
const prefixes: string[] = [];

const STORES: StoreKind[] = [
  { name: 'MemoryStore', skip: false, make: () => ({ store: new MemoryStore(), shared: false }) },
  {
    name: 'RedisStore (two instances)',
    skip: redis.skip,
    make: () => {
      const prefix = `sentinel-throttle-test:${randomBytes(8).toString('hex')}:`;
      prefixes.push(prefix);
      return { store: new RedisStore(client as Redis, { prefix }), shared: true };
    },
  },
];

beforeAll(async () => {
  if (redis.skip) return;
  requireAvailable(redis);
  client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  if (client === undefined) return;
  for (const prefix of prefixes) await deleteByPrefix(client, prefix);
  client.disconnect();
});

for (const storeKind of STORES) {
  describe.skipIf(storeKind.skip)(`concurrent login attempts on ${storeKind.name}`, () => {
    for (const [hostIndex, host] of THROTTLE_HOSTS.entries()) {
      for (const kind of ['slow', 'instant'] as const) {
        it(`${host.name}, ${kind} authenticator: 20 guesses for one username reach it at most maxFailures times`, async () => {
          const { store, shared } = storeKind.make();
          const users = countingUsers(kind);
          const pair = await mountPair(host, { store, throttle: LIMITS, users }, shared);
          try {
            const attempts = Array.from({ length: 19 }, (_, index) => ({ username: USERNAME, password: `wrong-${index}` }));
            attempts.push({ username: USERNAME, password: PASSWORD });
            const statuses = await burst(pair, attempts);
            const counts = tally(statuses);
            // Wrong guesses that reached the user store (200, the form again) never exceed the limit; the right
            // password, if it won a slot, signed in (303) and gave its slot back; everything else got 429.
            expect(counts[200] ?? 0).toBeLessThanOrEqual(LIMITS.maxFailures);
            expect(counts[303] ?? 0).toBeLessThanOrEqual(1);
            expect(users.calls()).toBeLessThanOrEqual(LIMITS.maxFailures + (counts[303] ?? 0));
            expect((counts[200] ?? 0) + (counts[303] ?? 0)).toBe(users.calls());
            expect(counts[429]).toBe(attempts.length - users.calls());
          } finally {
            await pair.close();
          }
        });

        it(`${host.name}, ${kind} authenticator: 80 guesses over 80 usernames from one address reach it at most maxFailuresPerIp times`, async () => {
          const { store, shared } = storeKind.make();
          const users = countingUsers(kind);
          const pair = await mountPair(host, { store, throttle: LIMITS, users }, shared);
          try {
            const attempts = Array.from({ length: 80 }, (_, index) => ({ username: `user-${index}`, password: 'guess' }));
            const statuses = await burst(pair, attempts);
            const counts = tally(statuses);
            expect(users.calls()).toBeLessThanOrEqual(LIMITS.maxFailuresPerIp);
            expect(counts[200]).toBe(users.calls());
            expect(counts[429]).toBe(80 - users.calls());
          } finally {
            await pair.close();
          }
        });
      }

      if (hostIndex === 0) {
        it('a successful sign-in gives its slot back (address and username), so only failures are charged', async () => {
          const { store, shared } = storeKind.make();
          const users = countingUsers('instant');
          const pair = await mountPair(host, { store, throttle: { ...LIMITS, maxFailuresPerIp: 3 }, users }, shared);
          try {
            const statuses: number[] = [];
            for (let index = 0; index < 6; index += 1) {
              statuses.push(await postLogin(await openInteraction(pair.urls[index % 2] as string), USERNAME, PASSWORD));
            }
            // Six sign-ins: over both the per-address (3) and the per-username (5) limit, had successes been charged.
            expect(statuses).toEqual([303, 303, 303, 303, 303, 303]);
            // Failures still count: three wrong guesses from the address lock it.
            for (let index = 0; index < 3; index += 1) {
              expect(await postLogin(await openInteraction(pair.urls[0]), `someone-${index}`, 'guess')).toBe(200);
            }
            expect(await postLogin(await openInteraction(pair.urls[1]), USERNAME, PASSWORD)).toBe(429);
          } finally {
            await pair.close();
          }
        });
      }

      it(`${host.name}: the right password sent while the other guesses hold every slot gets 429, not a session`, async () => {
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const { store, shared } = storeKind.make();
        const users = countingUsers('slow', gate);
        const pair = await mountPair(host, { store, throttle: LIMITS, users }, shared);
        try {
          const targets: Array<{ loginURL: string; csrf: string }> = [];
          for (let index = 0; index < 21; index += 1) targets.push(await openInteraction(pair.urls[index % 2] as string));
          const wrong = targets.slice(0, 20).map((target, index) => postLogin(target, USERNAME, `wrong-${index}`));
          // Wait until the in-flight wrong guesses have taken the slots they can get (or all 20 reached the store).
          const deadline = Date.now() + 10_000;
          while (users.calls() < LIMITS.maxFailures && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
          await new Promise((resolve) => setTimeout(resolve, 100));
          const right = await postLogin(targets[20]!, USERNAME, PASSWORD);
          release();
          const statuses = await Promise.all(wrong);
          expect(right).toBe(429);
          expect(users.calls()).toBeLessThanOrEqual(LIMITS.maxFailures);
          expect(statuses.filter((status) => status === 429)).toHaveLength(20 - LIMITS.maxFailures);
        } finally {
          release();
          await pair.close();
        }
      });
    }
  });
}

for (const storeKind of STORES) {
  it.skipIf(storeKind.skip)(
    `${storeKind.name}: an attempt refused by its address's count is not charged, so a success in flight reopens the address`,
    async () => {
      // An office behind one address: its last free slot is taken by a sign-in whose password check is slow, and
      // another attempt from the office arrives meanwhile. That attempt is refused on a read of the count; were it
      // charged, the slot the sign-in gives back on success would go to it, and the office would stay locked.
      const ip = '198.51.100.77';
      const limits = { ...LIMITS, maxFailuresPerIp: 3 };
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered: () => void = () => {};
      const checking = new Promise<void>((resolve) => {
        entered = resolve;
      });
      let held = false;
      const authenticate: Authenticate = async ({ username, password }) => {
        if (username !== USERNAME || password !== PASSWORD) return null;
        if (!held) {
          held = true;
          entered();
          await gate;
        }
        return { id: USER_ID };
      };
      const { store } = storeKind.make();
      const sentinel = makeSentinel({ store, throttle: limits, users: { authenticate } });
      const attempt = async (username: string, password: string): Promise<number> => {
        const { interaction } = await startInteraction(sentinel, undefined, ip);
        const csrf = await openLogin(sentinel, interaction);
        return (await postLoginDirect(sentinel, interaction, { csrf_token: csrf, username, password }, ip)).status;
      };
      const counter = `throttle:ip:${ip}`;
      try {
        expect(await attempt('someone-0', 'guess')).toBe(200);
        expect(await attempt('someone-1', 'guess')).toBe(200);
        const slow = attempt(USERNAME, PASSWORD);
        await checking;
        expect(await store.get(counter)).toBe('3');
        expect(await attempt('someone-2', 'guess')).toBe(429);
        expect(await store.get(counter)).toBe('3');
        release();
        expect(await slow).toBe(303);
        expect(await store.get(counter)).toBe('2');
        expect(await attempt(USERNAME, PASSWORD)).toBe(303);
      } finally {
        release();
      }
    },
  );
}

describe('instances whose keys differ share one username counter', () => {
  /** A sign-in attempt at `sentinel` from its own address, so only the username counter can refuse it. */
  async function attempt(sentinel: Sentinel, password: string, ip: string): Promise<number> {
    const { interaction } = await startInteraction(sentinel, undefined, ip);
    const csrf = await openLogin(sentinel, interaction);
    return (await postLoginDirect(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password }, ip)).status;
  }

  for (const storeKind of STORES) {
    it.skipIf(storeKind.skip)(
      `${storeKind.name}: guesses spread over instances with keys [k1], [k1, k2], [k2] (a rotation) reach it maxFailures times`,
      async () => {
        const { store } = storeKind.make();
        const users = countingUsers('instant');
        const [k1, k2] = [generatePrivateJWK('ES256'), generatePrivateJWK('ES256')];
        const instance = (keys: JWK[]) => makeSentinel({ keys, store, throttle: LIMITS, users });
        const instances = [instance([k1]), instance([k1, k2]), instance([k2])];
        const statuses: number[] = [];
        for (let index = 0; index < 2 * LIMITS.maxFailures; index += 1) {
          statuses.push(await attempt(instances[index % 3] as Sentinel, `guess-${index}`, `198.51.100.${index + 1}`));
        }
        expect(users.calls()).toBe(LIMITS.maxFailures);
        expect(statuses.slice(LIMITS.maxFailures)).toEqual(Array(LIMITS.maxFailures).fill(429));
      },
    );
  }

  it('a store that cannot give the digest key fails the sign-in closed: 500, the user store never asked', async () => {
    const users = countingUsers('instant');
    const errors: unknown[] = [];
    const memory = new MemoryStore();
    let broken = false;
    // Only the digest key's read fails (docs/ARCHITECTURE.md, Stored records): the counters themselves still answer.
    const store: Store = {
      ...recordingStore(memory),
      get: (key) => (broken && key === 'throttle:digest-key' ? Promise.reject(new Error('store down')) : memory.get(key)),
    };
    const sentinel = makeSentinel({ store, throttle: LIMITS, users, onError: (error) => errors.push(error) });
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    broken = true;
    const response = await postLoginDirect(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: 'guess' });
    expect(response.status).toBe(500);
    expect(String(response.body)).toContain('server_error');
    expect(users.calls()).toBe(0);
    expect(errors).toEqual([expect.objectContaining({ message: 'store down' })]);
    // Once the store answers again, so does the throttle: the key is read then, not cached from the failure.
    broken = false;
    expect(await attempt(sentinel, 'guess', '198.51.100.200')).toBe(200);
    expect(users.calls()).toBe(1);
  });
});

describe('a custom Store without decrement', () => {
  it('a success clears the username counter instead, so signing in never uses up the budget', async () => {
    const store = recordingStore(new MemoryStore());
    expect('decrement' in store).toBe(false);
    const sentinel = makeSentinel({ store, throttle: LIMITS });
    const attempt = async (password: string): Promise<number> => {
      const { interaction } = await startInteraction(sentinel);
      const csrf = await openLogin(sentinel, interaction);
      return (await postLoginDirect(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password })).status;
    };
    for (let index = 0; index < LIMITS.maxFailures - 1; index += 1) expect(await attempt(`wrong-${index}`)).toBe(200);
    expect(await attempt(PASSWORD)).toBe(303);
    for (let index = 0; index < LIMITS.maxFailures; index += 1) expect(await attempt(`again-${index}`)).toBe(200);
    expect(await attempt(PASSWORD)).toBe(429);
  });
});
