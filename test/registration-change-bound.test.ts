/**
 * The bound on changes a registered client makes to its own registration (RFC 7592 updates and new secrets): each is
 * a lasting write (on PostgreSQL an append-only change-log row and a notification) and an audit event, asked for with
 * the client's registration access token, so one client could otherwise grow the registry's history and the audit
 * log without end. `CHANGES_PER_CLIENT` an hour per client, then `429 temporarily_unavailable` with `Retry-After`, a
 * `registration.throttled` event, and nothing written; an update refused for its content costs nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { contextOf } from '../src/http/context.js';
import { CHANGES_PER_CLIENT } from '../src/registration/registration-bound.js';
import { movableClock } from './helpers/clock.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, type Registered, registerClient } from './helpers/registration-client.js';

const REDIRECT = 'https://app.example.com/cb';

function harness() {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({
    registration: { initialAccessToken: INITIAL_ACCESS_TOKEN },
    onEvent: (event) => events.push(event),
  });
  return { sentinel, events };
}

function put(sentinel: ReturnType<typeof harness>['sentinel'], info: Registered, name: string) {
  return manageClient(sentinel, 'PUT', info, { body: { client_id: info.client_id, redirect_uris: [REDIRECT], client_name: name } });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('changes to a registration, per client', () => {
  it('at most CHANGES_PER_CLIENT an hour, updates and new secrets together; then 429, an event, nothing written', async () => {
    const { sentinel, events } = harness();
    const info = await registerClient(sentinel, { redirect_uris: [REDIRECT] });
    const other = await registerClient(sentinel, { redirect_uris: [REDIRECT] });
    for (let index = 0; index < CHANGES_PER_CLIENT; index += 1) {
      const response =
        index % 10 === 0 ? await manageClient(sentinel, 'POST', info, { suffix: '/secret' }) : await put(sentinel, info, `Name ${index}`);
      expect(response.status, response.body).toBe(200);
    }
    const app = await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id);
    events.length = 0;

    const refused = await put(sentinel, info, 'One too many');
    expect(refused.status, refused.body).toBe(429);
    expect(refused.headers['retry-after']).toBe('3600');
    expect(jsonOf(refused).error).toBe('temporarily_unavailable');
    const rotation = await manageClient(sentinel, 'POST', info, { suffix: '/secret' });
    expect(rotation.status).toBe(429);
    expect(jsonOf(rotation)).not.toHaveProperty('client_secret');
    // Nothing written: the same app, no app.* event.
    expect(await contextOf(sentinel).apps.findApp(ACCOUNT, info.client_id)).toEqual(app);
    expect(events.map((event) => event.type)).toEqual(['registration.throttled', 'registration.throttled']);
    expect(events[0]).toMatchObject({ accountId: ACCOUNT, clientId: info.client_id, scope: 'registrations', outcome: 'failure' });

    // Reading and deleting are no changes to bound; another client keeps its own share.
    expect((await manageClient(sentinel, 'GET', info)).status).toBe(200);
    expect((await put(sentinel, other, 'Other')).status).toBe(200);
    expect((await manageClient(sentinel, 'DELETE', info)).status).toBe(204);
  });

  it('does not count an update refused for its content', async () => {
    const { sentinel } = harness();
    const info = await registerClient(sentinel, { redirect_uris: [REDIRECT] });
    for (let index = 0; index < CHANGES_PER_CLIENT; index += 1) {
      const body =
        index % 2 === 0
          ? { client_id: info.client_id, redirect_uris: ['http://app.example.com/cb'] }
          : { client_id: info.client_id, redirect_uris: [REDIRECT], client_secret: 'not-the-secret' };
      expect((await manageClient(sentinel, 'PUT', info, { body })).status).toBe(400);
    }
    expect((await put(sentinel, info, 'Renamed')).status).toBe(200);
  });

  it('gives the client its share again once the hour has passed', async () => {
    const clock = movableClock();
    try {
      const { sentinel } = harness();
      const info = await registerClient(sentinel, { redirect_uris: [REDIRECT] });
      for (let index = 0; index < CHANGES_PER_CLIENT; index += 1) expect((await put(sentinel, info, `Name ${index}`)).status).toBe(200);
      expect((await put(sentinel, info, 'Late')).status).toBe(429);
      await clock.advance(3_601_000);
      expect((await put(sentinel, info, 'Next hour')).status).toBe(200);
    } finally {
      clock.restore();
    }
  });
});
