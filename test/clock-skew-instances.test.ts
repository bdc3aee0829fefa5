/**
 * Two instances over one store whose clocks differ (by less than `clockTolerance`, 5 s by default): what one writes by
 * its clock, the other reads by its own. The store keeps real time (its TTLs move with `performance.now()`, as
 * Redis' do with Redis' clock); each instance's `Date.now()` runs ahead or behind by its skew while it answers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { contextOf } from '../src/http/context.js';
import { revokeDelegatedToken } from '../src/token/delegated-revocations.js';
import { createSentinel, MemoryStore, type Sentinel, type SentinelOptions, type Store } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { deviceApps, personDecides, poll, requestCodes } from './helpers/device-drive.js';
import { BOT, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_PATH } from './helpers/exchange.js';
import { appTokenPath, baseOptions, makeSentinel } from './helpers/fixtures.js';
import { ASSERTION_TYPE, clientAssertion, clientKey, KEYED_CLIENT_ID, keyedOptions } from './helpers/key-bound.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Real time passing (`pass`), and an instance's clock skew while it answers (`as`). */
function skewedClocks() {
  const realNow = Date.now.bind(Date);
  const realPerf = performance.now.bind(performance);
  let passed = 0;
  let skew = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + passed + skew);
  vi.spyOn(performance, 'now').mockImplementation(() => realPerf() + passed);
  return {
    pass(ms: number): void {
      passed += ms;
    },
    async as<T>(skewMs: number, run: () => Promise<T>): Promise<T> {
      skew = skewMs;
      try {
        return await run();
      } finally {
        skew = 0;
      }
    },
  };
}

/** Two instances of one deployment over `store`. */
function twoInstances(store: Store, options: Partial<SentinelOptions>): [Sentinel, Sentinel] {
  return [createSentinel(baseOptions({ store, ...options })), createSentinel(baseOptions({ store, ...options }))];
}

describe('instances whose clocks differ', () => {
  // The previous poll's time was noted by the instance that answered it: read by one whose clock runs behind, a
  // device polling at its interval was "too soon", heard slow_down, and its interval grew at every such poll.
  it('a device polling at its interval hears authorization_pending from an instance whose clock runs behind', async () => {
    const clocks = skewedClocks();
    const [ahead, behind] = twoInstances(new MemoryStore(), { apps: deviceApps() });
    const codes = await requestCodes(ahead);
    const errorOf = async (sentinel: Sentinel, skewMs: number) =>
      jsonOf(await clocks.as(skewMs, () => poll(sentinel, codes.device_code))).error;
    expect(await errorOf(ahead, 0)).toBe('authorization_pending');
    for (let round = 0; round < 3; round += 1) {
      clocks.pass(codes.interval * 1000 + 100);
      expect(await errorOf(behind, -800), `round ${round}, behind`).toBe('authorization_pending');
      clocks.pass(codes.interval * 1000 + 100);
      expect(await errorOf(ahead, 0), `round ${round}, ahead`).toBe('authorization_pending');
    }
    // Still slowed down when it polls too soon, on either.
    expect(await errorOf(behind, -800)).toBe('slow_down');
    expect((await personDecides(ahead, codes.user_code, 'approve')).status).toBe(200);
    clocks.pass(20_000);
    expect((await clocks.as(-800, () => poll(behind, codes.device_code))).status).toBe(200);
  });

  // The marker of a spent brand JWT was counted out by the spending instance's clock; one whose clock runs behind
  // still accepts the JWT until its own exp + clockTolerance, after the marker was gone.
  it('a brand JWT spent on an instance ahead is refused as a replay on one behind until it expires there', async () => {
    const clocks = skewedClocks();
    const key = await brandKey();
    const [ahead, behind] = twoInstances(new MemoryStore(), exchangeOptions(key));
    await Promise.all([ahead.ready(), behind.ready()]);
    const assertion = await brandJWT(key);
    const exchange = (sentinel: Sentinel, skewMs: number) =>
      clocks.as(skewMs, () =>
        postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...BOT }).toString()),
      );
    expect((await exchange(ahead, 4000)).status).toBe(200);
    // 63 s on: past the JWT's exp (60 s) by less than the tolerance on the instance behind.
    clocks.pass(63_000);
    const replayed = await exchange(behind, 0);
    expect(replayed.status, replayed.body).toBe(400);
    expect(jsonOf(replayed).error_description).toMatch(/already been used/);
  });

  it('a client assertion spent on an instance ahead is refused as a replay on one behind until it expires there', async () => {
    const clocks = skewedClocks();
    const key = await clientKey();
    const store = new MemoryStore();
    const [ahead, behind] = [createSentinel(keyedOptions(key, {}, { store })), createSentinel(keyedOptions(key, {}, { store }))];
    await Promise.all([ahead.ready(), behind.ready()]);
    const assertion = await clientAssertion(key);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: KEYED_CLIENT_ID,
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: assertion,
    }).toString();
    const tokenOn = (sentinel: Sentinel, skewMs: number) => clocks.as(skewMs, () => postForm(sentinel, appTokenPath(), form));
    expect((await tokenOn(ahead, 4000)).status).toBe(200);
    clocks.pass(63_000);
    const replayed = await tokenOn(behind, 0);
    expect(replayed.status, replayed.body).toBe(401);
    expect(jsonOf(replayed).error_description).toMatch(/already been used/);
  });

  // Revoked on an instance ahead, a delegated token is still accepted by one behind until that one's exp + tolerance:
  // the marker must outlive it there. Counted out by the revoking clock alone, it was gone first (or, with that clock
  // more than the tolerance ahead, never written).
  it('a delegated token revoked on an instance ahead stays revoked until it could pass nowhere', async () => {
    const store = new MemoryStore();
    const set = vi.spyOn(store, 'set');
    const context = contextOf(makeSentinel({ store }));
    const now = Math.floor(Date.now() / 1000);
    const tolerance = context.config.clockTolerance;
    vi.spyOn(Date, 'now').mockReturnValue((now + tolerance) * 1000);
    await revokeDelegatedToken(context, { iss: 'http://localhost/sentinel/api/account/1', jti: 'j-1', exp: now + 10 });
    const written = set.mock.calls.find(([key]) => key.startsWith('revoked-jti:'));
    // Seen from a clock `tolerance` behind (now), it must last until exp + tolerance there, and the second after.
    expect(written?.[2]).toBeGreaterThanOrEqual((10 + tolerance + 1) * 1000);
  });
});
