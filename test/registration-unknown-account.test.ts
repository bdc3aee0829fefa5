/**
 * Wrong registration tokens naming an account that does not exist are refused as before (401, then 429 once the
 * address is over its budget) but emit no `registration.throttled`, nor `registration.denied` at the RFC 7592
 * endpoints: past the per-address budget every request was an event, so one address could grow the append-only audit
 * log without bound with events of made-up accounts no operator can read. A real account's refusals are still
 * audited, and so is each wrong initial access token (bounded by the budget; registering creates the account).
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { MemoryStore } from '../src/stores/memory.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, postRegistration } from './helpers/registration-client.js';

const AUDIT = new Set(['registration.denied', 'registration.throttled']);
const WRONG = `Bearer guess-${'x'.repeat(40)}`;

function harness() {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
  });
  return { sentinel, events, errors };
}

async function statuses(sentinel: ReturnType<typeof makeSentinel>, account: (n: number) => string): Promise<number[]> {
  const answers: number[] = [];
  for (let n = 0; n < 60; n += 1) {
    const base = `/sentinel/api/account/${account(n)}/register/${CLIENT_ID}`;
    const path = n % 2 === 0 ? base : `${base}/secret`;
    const method = n % 2 === 0 ? 'GET' : 'POST';
    const response = await call(sentinel, { method, path, headers: { authorization: WRONG }, ip: '198.51.100.9' });
    answers.push(response.status);
  }
  return answers;
}

describe('wrong registration access tokens for an account that does not exist', () => {
  it('are refused as before (401, then 429) with no registration event', async () => {
    const { sentinel, events, errors } = harness();
    const answers = await statuses(sentinel, (n) => `made-up-${n}`);
    expect(answers).toEqual([...Array(50).fill(401), ...Array(10).fill(429)]);
    expect(events.filter((event) => AUDIT.has(event.type))).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('are still audited for a real account, throttling included', async () => {
    const { sentinel, events } = harness();
    const answers = await statuses(sentinel, () => ACCOUNT);
    expect(answers).toEqual([...Array(50).fill(401), ...Array(10).fill(429)]);
    expect(events.filter((event) => event.type === 'registration.denied')).toHaveLength(50);
    expect(events.filter((event) => event.type === 'registration.throttled')).toHaveLength(10);
    expect(events.every((event) => !AUDIT.has(event.type) || event.accountId === ACCOUNT)).toBe(true);
  });
});

describe('wrong initial access tokens past the address budget, naming accounts that do not exist', () => {
  it('are 429 as before but emit no registration.throttled; the wrong tokens within the budget are still audited', async () => {
    const { sentinel, events, errors } = harness();
    const answers: number[] = [];
    for (let n = 0; n < 80; n += 1) {
      const response = await postRegistration(
        sentinel,
        { grant_types: ['client_credentials'] },
        {
          token: `guess-${'y'.repeat(40)}`,
          accountId: `made-up-${n}`,
          ip: '198.51.100.10',
        },
      );
      answers.push(response.status);
    }
    expect(answers).toEqual([...Array(50).fill(401), ...Array(30).fill(429)]);
    // A guess at the service-wide secret is worth recording even before the account exists; it is bounded per address.
    expect(events.filter((event) => event.type === 'registration.denied')).toHaveLength(50);
    expect(events.filter((event) => event.type === 'registration.throttled')).toEqual([]);
    expect(errors).toEqual([]);
  });
});
