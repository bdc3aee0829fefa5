/**
 * A console sign-in's pending record counts on the interaction bound (`interactionsPerAddress` per `interactionTtl`),
 * whose window is what makes the bound a bound on live records: one address never holds more of them than the limit.
 * So the record lives no longer than that window; kept its fixed ten minutes under a shorter `interactionTtl`, one
 * address held ten times the limit of them (it is of no use longer anyway: the sign-in's interaction is gone by then).
 */
import { describe, expect, it } from 'vitest';
import { createConsole } from '../src/console/index.js';
import { MemoryStore, type SentinelResponse } from '../src/index.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

/** Starts one console sign-in; the lifetimes its record and cookie were given. */
async function startSignIn(interactionTtl?: number): Promise<{ recordMs: number | undefined; cookie: string }> {
  let recordMs: number | undefined;
  const store = new (class extends MemoryStore {
    override async set(key: string, value: string, ttlMs: number): Promise<void> {
      if (key.startsWith('console-sign-in:')) recordMs = ttlMs;
      return super.set(key, value, ttlMs);
    }
  })();
  const sentinel = makeSentinel({ store, ...(interactionTtl === undefined ? {} : { interactionTtl }) });
  const operatorConsole = createConsole(sentinel, { authorize: () => 'admin' });
  const response = (await operatorConsole.handle({
    method: 'GET',
    path: '/console/sign-in',
    query: new URLSearchParams({ account: ACCOUNT }),
    headers: {},
  })) as SentinelResponse;
  expect(response.status).toBe(303);
  const setCookie = response.headers?.['set-cookie'];
  return { recordMs, cookie: String(Array.isArray(setCookie) ? setCookie.join('\n') : setCookie) };
}

describe('console: a pending sign-in lives no longer than the interaction bound counts it', () => {
  it('lives interactionTtl when that is shorter than ten minutes', async () => {
    const { recordMs, cookie } = await startSignIn(60);
    expect(recordMs).toBe(60_000);
    expect(cookie).toMatch(/Max-Age=60(;|$)/);
  });

  it('keeps its ten minutes under the default interactionTtl and a longer one', async () => {
    for (const ttl of [undefined, 1800]) {
      const { recordMs, cookie } = await startSignIn(ttl);
      expect(recordMs).toBe(600_000);
      expect(cookie).toMatch(/Max-Age=600(;|$)/);
    }
  });
});
