/**
 * What `users.authenticate` may answer: `null` (or `undefined`) for wrong credentials, or a user `{ id }`. Anything else
 * is a bug of the host's hook, not a wrong password: the sign-in fails with 500 server_error, the TypeError reaches
 * onError, and nothing is issued or recorded as a failed login. The attempt still counts against the throttle, as a
 * throwing hook's does: a hook that answers `false` for a wrong password must not allow guessing without a limit.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { LOGIN_PATH, call, csrfOf, postLogin, setCookies, startInteraction } from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

describe('the answer of users.authenticate', () => {
  it.each([
    ['true', true],
    ['a bare user id', USER_ID],
    ['a numeric id', { id: 42 }],
    ['an object without id', { name: 'Alice' }],
    ['an empty id', { id: '' }],
    ['an id longer than 256 characters', { id: 'u'.repeat(257) }],
  ])('%s → 500 server_error, onError names the hook, no session, no code, no login.failed', async (_name, answer) => {
    const errors: unknown[] = [];
    const events: SentinelEvent[] = [];
    let broken = true;
    const sentinel = makeSentinel({
      users: {
        authenticate: async ({ username, password }) =>
          username === USERNAME && password === PASSWORD ? (broken ? (answer as never) : { id: USER_ID }) : null,
      },
      onError: (error) => errors.push(error),
      onEvent: (event) => events.push(event),
    });
    const { interaction } = await startInteraction(sentinel);
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    const form = { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD };

    const failed = await postLogin(sentinel, interaction, form);
    expect(failed.status).toBe(500);
    expect(failed.headers.location).toBeUndefined();
    expect(setCookies(failed).some((line) => line.startsWith('sentinel_session='))).toBe(false);
    expect(errors.map(String)).toEqual([expect.stringContaining('users.authenticate() must return null or a user { id }')]);
    expect(events.map((event) => event.type)).not.toContain('login.failed');
    expect(events.map((event) => event.type)).not.toContain('session.created');

    // The hook mended, the same form signs the user in.
    broken = false;
    const retried = await postLogin(sentinel, interaction, form);
    expect(retried.status, retried.body).toBe(303);
    expect(new URL(String(retried.headers.location)).searchParams.get('code')).toBeTruthy();
  });

  it('null and undefined stay wrong credentials: the login page again, login.failed, nothing for onError', async () => {
    for (const answer of [null, undefined]) {
      const errors: unknown[] = [];
      const events: SentinelEvent[] = [];
      const sentinel = makeSentinel({
        users: { authenticate: async () => answer as never },
        onError: (error) => errors.push(error),
        onEvent: (event) => events.push(event),
      });
      const { interaction } = await startInteraction(sentinel);
      const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
      const refused = await postLogin(sentinel, interaction, { csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD });
      expect(refused.status).toBe(200);
      expect(refused.body).toContain('Incorrect username or password.');
      expect(events.map((event) => event.type)).toContain('login.failed');
      expect(errors).toEqual([]);
    }
  });
  it('an answer that is no user still counts against the throttle: a hook answering false cannot be guessed at freely', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      users: {
        authenticate: async ({ username, password }) =>
          username === USERNAME && password === PASSWORD ? { id: USER_ID } : (false as never),
      },
      throttle: { maxFailures: 3 },
      onError: (error) => errors.push(error),
    });
    const { interaction } = await startInteraction(sentinel);
    const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }) });
    const csrf = csrfOf(page.body);
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: `guess-${attempt}` })).status).toBe(
        500,
      );
    }
    // The limit holds: the right password is not even tried now.
    const throttled = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(throttled.status).toBe(429);
    expect(errors).toHaveLength(3);
  });
});
