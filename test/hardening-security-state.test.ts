/**
 * Security state that nobody unauthenticated can fill (issue 30 item 3). A public client is identified by its
 * client_id alone and any caller can sign DPoP proofs with a key of its own, so the `jti` markers of those proofs
 * must not be a way to fill MemoryStore's non-evicting area: before this, 60 such requests against a small budget
 * made every sign-in answer 500 (SecurityStateFullError), because throttle counters and TOTP markers shared it.
 */
import { generateSecret } from 'otplib';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelOptions } from '../src/index.js';
import { makeSentinel } from './helpers/fixtures.js';
import { flood, legitimateSignIn, totpUsers } from './helpers/security-state-flow.js';

/** Room for about 55 markers of 298 bytes: the "small budget" of the issue. */
const SMALL_BUDGET = 16 * 1024;

/** Pushes one address may make per proof window here: well inside the small budget. */
const PUSHES_PER_ADDRESS = 20;

function harness(overrides: Partial<SentinelOptions> = {}) {
  const secret = generateSecret();
  const errors: unknown[] = [];
  const store = new MemoryStore({ securityMaxBytes: SMALL_BUDGET });
  const sentinel = makeSentinel({
    store,
    users: totpUsers(secret),
    onError: (error) => errors.push(error),
    dpop: { pushProofsPerAddress: PUSHES_PER_ADDRESS },
    ...overrides,
  } as Partial<SentinelOptions>);
  return { sentinel, secret, errors, store };
}

describe('a flood of public-client requests with self-made DPoP proofs', () => {
  it('from one address: no 5xx, and a sign-in with PAR, TOTP and a DPoP code exchange still works', async () => {
    const h = harness();
    const statuses = await flood(h.sentinel, 400, () => '198.51.100.66');
    // 200 token requests with made-up codes: invalid_grant, no marker. 200 valid pushes: 20 accepted, then 429.
    expect(Object.fromEntries(statuses)).toEqual({ 400: 200, 201: PUSHES_PER_ADDRESS, 429: 200 - PUSHES_PER_ADDRESS });
    expect(h.errors).toEqual([]);
    await legitimateSignIn(h.sentinel, h.secret, { ip: '203.0.113.7', push: true });
    expect(h.errors).toEqual([]);
  });

  it('from many addresses: pushes may be refused with 429, never 500; sign-in, TOTP and DPoP exchanges go on', async () => {
    const h = harness();
    const statuses = await flood(h.sentinel, 400, (index) => `198.51.${Math.floor(index / 200)}.${index % 200}`);
    // The token requests write nothing (400); the pushes fill their own area and the rest get 429.
    expect(statuses.get(400)).toBe(200);
    expect((statuses.get(201) ?? 0) + (statuses.get(429) ?? 0)).toBe(200);
    expect(statuses.get(429)).toBeGreaterThan(100);
    // The per-address push counters (throttle-par:) fill their own area first: the host hears of it once per window,
    // as of any full throttle area, and nothing else is reported.
    expect(h.errors).toHaveLength(1);
    expect(h.errors[0]).toMatchObject({ name: 'SecurityStateFullError', prefix: 'throttle-par' });
    await legitimateSignIn(h.sentinel, h.secret, { ip: '203.0.113.7', push: false });
    expect(h.errors).toHaveLength(1);
  });
});
