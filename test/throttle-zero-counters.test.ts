/**
 * Successes leave no throttle counters behind. A throttle that gives a success's slot back (registration tokens and
 * password sign-ins here; passkey sign-ins and second factors likewise, through `Store.decrement`) used to leave the
 * counter at `0` until its window ended, in `throttle:`, the area MemoryStore never evicts and RedisStore keeps under
 * `noeviction`. Each success from a new IPv6 /64 added one (and one per new /48: the /48's slot is given back too), so
 * one valid credential of an attacker's own, used from many /64s, filled the area and every sign-in was then refused
 * with 429. A counter brought to zero is now deleted, on MemoryStore and on a real Redis.
 */
import { describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { addressBucket, networkBucket } from '../src/http/client-ip.js';
import { registrationThrottleKey, registrationThrottleNetworkKey } from '../src/registration/token-throttle.js';
import { MemoryStore } from '../src/stores/memory.js';
import type { Store } from '../src/stores/store.js';
import { openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';
import { describeOnSharedRedis } from './helpers/redis-suite.js';
import { INITIAL_ACCESS_TOKEN, manageClient, registerClient } from './helpers/registration-client.js';

/** Twelve /64s: four in each of three /48s. */
const ADDRESSES = Array.from({ length: 12 }, (_, index) => `2001:db8:${Math.floor(index / 4) + 10}:${index % 4}::7`);

/** Reads the app's configuration once from each address with its right registration access token. */
async function readFromEveryAddress(store: Store): Promise<Sentinel> {
  const sentinel = makeSentinel({ store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
  const info = await registerClient(sentinel);
  for (const ip of ADDRESSES) {
    const response = await manageClient(sentinel, 'GET', info, { ip });
    expect(response.status, response.body).toBe(200);
  }
  return sentinel;
}

/** Signs the same user in once from each address with the right password. */
async function signInFromEveryAddress(store: Store): Promise<void> {
  const sentinel = makeSentinel({ store });
  for (const ip of ADDRESSES) {
    const { interaction } = await startInteraction(sentinel);
    const csrf = await openLogin(sentinel, interaction);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }, ip);
    expect(response.status, response.body).toBe(303);
  }
}

describe('successful password sign-ins on MemoryStore', () => {
  it('leave no address or /48 counter behind', async () => {
    const store = new MemoryStore();
    await signInFromEveryAddress(store);
    for (const ip of ADDRESSES) {
      await expect(store.get(`throttle:ip:${addressBucket(ip)}`)).resolves.toBeNull();
      await expect(store.get(`throttle:net:${networkBucket(ip)}`)).resolves.toBeNull();
    }
  });
});

describe('successful registration-token reads on MemoryStore', () => {
  it('leave no counter of any /64 or /48 behind, and store nothing new', async () => {
    const store = new MemoryStore();
    const sentinel = makeSentinel({ store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const info = await registerClient(sentinel);
    const before = store.size;
    for (const ip of ADDRESSES) {
      const response = await manageClient(sentinel, 'GET', info, { ip });
      expect(response.status, response.body).toBe(200);
    }
    for (const ip of ADDRESSES) {
      await expect(store.get(registrationThrottleKey(ip))).resolves.toBeNull();
      await expect(store.get(registrationThrottleNetworkKey(ip) ?? '')).resolves.toBeNull();
    }
    expect(store.size).toBe(before);
  });

  it('still count a wrong token: its counter stays', async () => {
    const store = new MemoryStore();
    await readFromEveryAddress(store);
    const sentinel = makeSentinel({ store, registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const info = await registerClient(sentinel);
    const ip = ADDRESSES[0] as string;
    expect((await manageClient(sentinel, 'GET', info, { ip, token: 'not-the-registration-access-token' })).status).toBe(401);
    await expect(store.get(registrationThrottleKey(ip))).resolves.toBe('1');
    await expect(store.get(registrationThrottleNetworkKey(ip) ?? '')).resolves.toBe('1');
  });
});

await describeOnSharedRedis('throttle-zero-counters', 'successful registration-token reads on RedisStore', (newStore, block) => {
  it('leave no throttle key of any /64 or /48 behind', async () => {
    await readFromEveryAddress(newStore());
    const { client, prefix } = block();
    expect(await client.keys(`${prefix}throttle:*`)).toEqual([]);
  });

  it('successful password sign-ins leave no throttle key behind either (address, /48 or username)', async () => {
    await signInFromEveryAddress(newStore());
    const { client, prefix } = block();
    // Only the deployment's one key for username digests (identifier-digest.ts) stays: it is not a counter. (The
    // registration the block's first case made counts, by design, under `throttle-registered:`: registrations made,
    // not failures, are what that bound counts; registration/registration-bound.ts. Likewise the sign-ins started,
    // under `throttle-interaction:`: authorize/state/interaction-bound.ts.)
    const counted = [`${prefix}throttle-registered:`, `${prefix}throttle-interaction:`];
    const left = (await client.keys(`${prefix}throttle*`)).filter((key) => !counted.some((area) => key.startsWith(area)));
    expect(left).toEqual([`${prefix}throttle:digest-key`]);
  });
});
