/**
 * Typed usernames' throttle counters live under a prefix of their own (`throttle-user:`), so MemoryStore gives them
 * a security area of their own. Anyone can create such a counter by typing a name before any password is checked:
 * when they shared `throttle:` with the address, second-factor, device-code and registration counters, failed
 * logins of made-up names from enough IPv6 /64s filled it, and then every sign-in answered 500 for the window.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel } from '../src/index.js';
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
    // Failing closed: the user store was never asked, and the address got its slot back as for any username refusal.
    expect(authenticate).not.toHaveBeenCalled();
    await expect(store.get('throttle:ip:198.51.100.200')).resolves.toBe('0');
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

  it('a user whose counter was kept before the flood still signs in', async () => {
    const { sentinel } = harness();
    expect((await attempt(sentinel, USERNAME, PASSWORD, '198.51.100.7')).status).toBe(303);
    await flood(sentinel);
    expect((await attempt(sentinel, USERNAME, PASSWORD, '198.51.100.8')).status).toBe(303);
  });

  it('a securityPrefixes list naming throttle keeps the usernames\u2019 counters as security state', async () => {
    const store = new MemoryStore({ max: 1, securityPrefixes: ['throttle'] });
    for (let index = 0; index < 5; index += 1) await store.increment('throttle-user:alice', 60_000);
    for (let index = 0; index < 100; index += 1) await store.increment(`throttle-user:other-${index}`, 60_000);
    await expect(store.get('throttle-user:alice')).resolves.toBe('5');
  });
});
