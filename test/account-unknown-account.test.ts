/**
 * Forged posts to the account page of an account that does not exist: 404 with no `account.denied` event. Anyone can
 * send them, naming any number of made-up accounts, and every event is a row of the audit log (append-only in
 * PostgreSQL, kept for its retention) or a slot of the in-memory buffer: an event per forged post would let a flood
 * grow the log without bound and push the real accounts' events out of the buffer. No one can read them either: an
 * operator reads only their own account's events.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelEvent } from '../src/index.js';
import { ACCOUNT_PATH, call, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

function harness() {
  const events: SentinelEvent[] = [];
  const errors: unknown[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    account: { enabled: true },
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
  });
  return { sentinel, events, errors };
}

const FORGED: Record<string, string>[] = [
  { 'sec-fetch-site': 'cross-site' },
  { origin: 'https://evil.example' },
  { 'sec-fetch-site': 'same-origin' },
  { 'sec-fetch-site': 'same-origin', cookie: 'sentinel_session=forged' },
];

describe('forged posts to the account page of an unknown account', () => {
  it('are 404 and emit no account.denied, on the page and the passkey options', async () => {
    const { sentinel, events, errors } = harness();
    for (let n = 0; n < 20; n += 1) {
      const base = ACCOUNT_PATH.replace(ACCOUNT, `made-up-${n}`);
      for (const headers of FORGED) {
        for (const path of [`${base}/account`, `${base}/account/passkeys/options`]) {
          const response = await postForm(sentinel, path, 'csrf_token=x&action=end-other-sessions', { headers });
          expect(response.status, `${path} ${JSON.stringify(headers)}`).toBe(404);
        }
      }
    }
    expect(events.filter((event) => event.type === 'account.denied')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('still refuses forged posts to a real account with 403 and account.denied', async () => {
    const { sentinel, events } = harness();
    const response = await postForm(sentinel, `${ACCOUNT_PATH}/account`, 'action=end-other-sessions', {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(response.status).toBe(403);
    expect(events.map((event) => event.type)).toContain('account.denied');
  });

  it("an unknown account's page is no page to a GET either", async () => {
    const { sentinel, events } = harness();
    const response = await call(sentinel, { path: `${ACCOUNT_PATH.replace(ACCOUNT, 'made-up')}/account` });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(events.filter((event) => event.type === 'account.denied')).toEqual([]);
  });
});
