/**
 * The registration tokens' throttle (RFC 7591 §3 initial access tokens, RFC 7592 §1 registration access tokens) when
 * MemoryStore's `throttle:` area is full: its counter cannot be written (`SecurityStateFullError`). It answered
 * `500` and reported every request; it now refuses as the login throttle does: `429` with `Retry-After`, the token
 * never checked uncounted, and `onError` told once per window.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { MemoryStore } from '../src/stores/memory.js';
import { entryBytes } from '../src/stores/memory-size.js';
import { SecurityStateFullError } from '../src/stores/security-state.js';
import { jsonOf } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

const BODY = { grant_types: ['client_credentials'] };
const WINDOW_SECONDS = 900;
/** Room for about ten address counters in each security area. */
const BUDGET = entryBytes('throttle:ip:192.0.2.100', '1') * 10;

function harness() {
  const store = new MemoryStore({ securityMaxBytes: BUDGET });
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  let checked = 0;
  const sentinel = makeSentinel({
    store,
    throttle: { windowSeconds: WINDOW_SECONDS },
    registration: {
      initialAccessToken: (token) => {
        checked += 1;
        return token === INITIAL_ACCESS_TOKEN;
      },
    },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
  });
  return { store, sentinel, events, errors, checks: () => checked };
}

/** Fills the `throttle:` area with address counters until a new counter is refused. */
async function fillThrottleArea(store: MemoryStore): Promise<void> {
  for (let host = 0; host < 100; host += 1) {
    try {
      await store.increment(`throttle:ip:192.0.2.${host}`, WINDOW_SECONDS * 1000);
    } catch (error) {
      expect(error).toBeInstanceOf(SecurityStateFullError);
      return;
    }
  }
  throw new Error('the throttle: area never filled');
}

function expectThrottled(response: Awaited<ReturnType<typeof postRegistration>>): void {
  expect(response.status, response.body).toBe(429);
  expect(response.headers['retry-after']).toBe(String(WINDOW_SECONDS));
  expect(jsonOf(response).error).toBe('temporarily_unavailable');
}

describe('registration tokens when the throttle: area is full', () => {
  it('a registration with the right initial access token is refused with 429, registers nothing, reported once', async () => {
    const { store, sentinel, events, errors, checks } = harness();
    await fillThrottleArea(store);
    for (const ip of ['198.51.100.40', '198.51.100.41', '198.51.100.40', '2001:db8:40::1']) {
      expectThrottled(await postRegistration(sentinel, BODY, { ip }));
    }
    // Failing closed: the token was never checked without its slot, and no app was made.
    expect(checks()).toBe(0);
    expect(events.some((event) => event.type === 'app.registered')).toBe(false);
    expect(events.filter((event) => event.type === 'registration.throttled')).toHaveLength(4);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SecurityStateFullError);
    expect((errors[0] as SecurityStateFullError).prefix).toBe('throttle');
  });

  it("an app's configuration endpoint refuses its own token with 429 and leaves the app alone, reported once", async () => {
    const { store, sentinel, events, errors } = harness();
    const info = await registerClient(sentinel);
    await fillThrottleArea(store);
    expectThrottled(await manageClient(sentinel, 'GET', info, { ip: '198.51.100.50' }));
    expectThrottled(await manageClient(sentinel, 'DELETE', info, { ip: '198.51.100.51' }));
    expectThrottled(await manageClient(sentinel, 'POST', info, { ip: '198.51.100.52', suffix: '/secret' }));
    expect(events.some((event) => event.type === 'app.deleted')).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SecurityStateFullError);
  });
});
