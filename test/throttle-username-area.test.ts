/**
 * Typed usernames' throttle counters live under a prefix of their own (`throttle-user:`), so MemoryStore gives them
 * a security area of their own. Anyone can create such a counter by typing a name before any password is checked:
 * when they shared `throttle:` with the address, second-factor, device-code and registration counters, failed
 * logins of made-up names from enough IPv6 /64s filled it, and then every sign-in answered 500 for the window.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError, MemoryStore, type Sentinel } from '../src/index.js';
import { networkBucket } from '../src/http/client-ip.js';
import { SecurityStateFullError } from '../src/stores/security-state.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { registrationThrottleKey } from '../src/registration/token-throttle.js';
import { openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { baseOptions, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';

const WINDOW_SECONDS = 900;
/** Room for about twenty username counters (a digest key of 43 characters, a one-digit count). */
const BUDGET = entryBytes(`throttle-user:${'a'.repeat(43)}`, '1') * 20;

async function attempt(sentinel: Sentinel, username: string, password: string, ip: string) {
  const { interaction } = await startInteraction(sentinel);
  const csrf = await openLogin(sentinel, interaction);
  return postLogin(sentinel, interaction, { csrf_token: csrf, username, password }, ip);
}

function harness() {
  const store = new MemoryStore({ securityMaxBytes: BUDGET });
  const errors: unknown[] = [];
  const authenticate = vi.fn(baseOptions().users!.authenticate);
  const sentinel = makeSentinel({
    store,
    users: { authenticate },
    throttle: { maxFailures: 5, maxFailuresPerIp: 50, windowSeconds: WINDOW_SECONDS },
    onError: (error) => errors.push(error),
  });
  return { store, errors, authenticate, sentinel };
}

/** Failed logins of made-up names, ten from each of ten /64s, until the usernames' area is full. */
async function flood(sentinel: Sentinel): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  for (let net = 0; net < 10; net += 1) {
    for (let name = 0; name < 10; name += 1) {
      const response = await attempt(sentinel, `nobody-${net}-${name}`, 'wrong', `2001:db8:0:${net.toString(16)}::1`);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }
  return statuses;
}

describe("typed usernames' counters have a security area of their own", () => {
  it('a flood of made-up names fills only that area: refused as throttled (429), never 500', async () => {
    const { sentinel } = harness();
    const statuses = await flood(sentinel);
    expect(statuses[500]).toBeUndefined();
    // The names that found room got the login page back (wrong credentials); the rest were refused as throttled.
    expect(statuses[200]).toBeGreaterThan(0);
    expect(statuses[429]).toBeGreaterThan(0);
  });

  it('a right password with no counter yet is refused with 429 and Retry-After, uncounted nowhere, reported once', async () => {
    const { store, errors, authenticate, sentinel } = harness();
    await flood(sentinel);
    authenticate.mockClear();
    const refused = await attempt(sentinel, USERNAME, PASSWORD, '198.51.100.200');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(WINDOW_SECONDS));
    expect(refused.headers.location).toBeUndefined();
    // Failing closed: the user store was never asked, and the address got its slot back as for any username refusal
    // (its counter, back at zero, deleted).
    expect(authenticate).not.toHaveBeenCalled();
    await expect(store.get('throttle:ip:198.51.100.200')).resolves.toBeNull();
    // Every refusal of the flood and this one: one report for the window, naming the area.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SecurityStateFullError);
    expect((errors[0] as SecurityStateFullError).prefix).toBe('throttle-user');
  });

  it('the address, second-factor, device-code and registration counters keep their room', async () => {
    const { store, sentinel } = harness();
    await flood(sentinel);
    await expect(store.increment('throttle:ip:203.0.113.9', 60_000)).resolves.toBe(1);
    await expect(store.increment(`throttle:second-factor:${'s'.repeat(43)}`, 60_000)).resolves.toBe(1);
    await expect(store.increment(`throttle:device-code:${'d'.repeat(43)}`, 60_000)).resolves.toBe(1);
    await expect(store.increment(registrationThrottleKey('203.0.113.9'), 60_000)).resolves.toBe(1);
  });

  it('a sign-in holds no room in the area: the flood fits as many names after sign-ins from 30 /64s as without', async () => {
    // A success's counter, given its slot back, is deleted at zero: kept at 0, each one held room until its window
    // ended (and a user's kept counter let that user in while the area was full, for the rest of that window only).
    const fresh = harness();
    const alone = await flood(fresh.sentinel);
    const { sentinel } = harness();
    for (let net = 0; net < 30; net += 1) {
      expect((await attempt(sentinel, USERNAME, PASSWORD, `2001:db8:9:${net.toString(16)}::1`)).status).toBe(303);
    }
    expect(await flood(sentinel)).toEqual(alone);
  });

  it('a securityPrefixes list naming throttle keeps the usernames\u2019 counters as security state', async () => {
    const store = new MemoryStore({ max: 1, securityPrefixes: ['throttle'] });
    for (let index = 0; index < 5; index += 1) await store.increment('throttle-user:alice', 60_000);
    for (let index = 0; index < 100; index += 1) await store.increment(`throttle-user:other-${index}`, 60_000);
    await expect(store.get('throttle-user:alice')).resolves.toBe('5');
  });
});

describe('new usernames per IPv6 /48 (throttle.maxFailuresPerNetwork)', () => {
  function networkHarness() {
    const authenticate = vi.fn(baseOptions().users!.authenticate);
    const sentinel = makeSentinel({
      users: { authenticate },
      throttle: { maxFailures: 5, maxFailuresPerIp: 50, maxFailuresPerNetwork: 20, windowSeconds: WINDOW_SECONDS },
    });
    return { sentinel, authenticate };
  }

  it('counts failures across the /64s of one /48: past the bound 429, another /48 and IPv4 unaffected', async () => {
    const { sentinel, authenticate } = networkHarness();
    const statuses: number[] = [];
    for (let net = 0; net < 25; net += 1) {
      statuses.push((await attempt(sentinel, `nobody-${net}`, 'wrong', `2001:db8:5:${net.toString(16)}::1`)).status);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(200));
    const refused = await attempt(sentinel, USERNAME, PASSWORD, '2001:db8:5:ff::1');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe(String(WINDOW_SECONDS));
    expect(statuses.slice(20)).toEqual(Array(5).fill(429));
    // The user store heard only the 20 attempts within the bound.
    expect(authenticate).toHaveBeenCalledTimes(20);
    expect((await attempt(sentinel, 'nobody-else', 'wrong', '2001:db8:6::1')).status).toBe(200);
    for (let host = 0; host < 25; host += 1) {
      expect((await attempt(sentinel, `v4-${host}`, 'wrong', `198.51.100.${host}`)).status).toBe(200);
    }
  });

  it('a success gives the network its slot back, as it does the address', async () => {
    const { sentinel } = networkHarness();
    for (let net = 0; net < 19; net += 1) await attempt(sentinel, `nobody-${net}`, 'wrong', `2001:db8:7:${net.toString(16)}::1`);
    for (let round = 0; round < 3; round += 1) {
      expect((await attempt(sentinel, USERNAME, PASSWORD, '2001:db8:7:aa::1')).status).toBe(303);
    }
    expect((await attempt(sentinel, 'nobody-last', 'wrong', '2001:db8:7:bb::1')).status).toBe(200);
    expect((await attempt(sentinel, 'nobody-over', 'wrong', '2001:db8:7:cc::1')).status).toBe(429);
  });

  it('is an option with a default of 500, refused when not a positive integer; the bucket is the /48', () => {
    expect(() => makeSentinel({ throttle: { maxFailuresPerNetwork: 0 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ throttle: { maxFailuresPerNetwork: 2.5 } })).toThrow(ConfigurationError);
    expect(() => makeSentinel({ throttle: { maxFailuresPerNetwork: 1000 } })).not.toThrow();
    expect(networkBucket('2001:DB8:0001:2::7')).toBe('2001:db8:1');
    expect(networkBucket('2001:db8::1')).toBe('2001:db8:0');
    expect(networkBucket('203.0.113.7')).toBeNull();
  });
});
