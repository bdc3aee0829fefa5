/**
 * The `registration` option at startup: a mistake is a ConfigurationError naming the field, before any request.
 */
import { describe, expect, it } from 'vitest';
import { isConfigurationError } from '../src/index.js';
import { call, jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';
import { ClientAbortedError } from '../src/http/body-failures.js';

function fieldOf(build: () => unknown): string | undefined {
  try {
    build();
  } catch (error) {
    return isConfigurationError(error) ? error.field : 'not a ConfigurationError';
  }
  return undefined;
}

describe('the registration option', () => {
  it('names a short initial access token, a wrong overlap and a store that cannot manage apps', () => {
    expect(fieldOf(() => makeSentinel({ registration: { initialAccessToken: 'short' } }))).toBe('registration.initialAccessToken');
    expect(
      fieldOf(() => makeSentinel({ registration: { initialAccessToken: 'long-enough-initial-token', secretOverlapSeconds: -1 } })),
    ).toBe('registration.secretOverlapSeconds');
    const readOnly = { findApp: () => null, hasAccount: () => false };
    expect(
      fieldOf(() => makeSentinel({ apps: [], appStore: readOnly, registration: { initialAccessToken: 'long-enough-initial-token' } })),
    ).toBe('registration');
  });

  it('works on the default MemoryAppStore, and is a 404 when not enabled', async () => {
    const enabled = makeSentinel({ registration: { initialAccessToken: 'long-enough-initial-token' } });
    const created = await call(enabled, {
      method: 'POST',
      path: `/sentinel/api/account/${ACCOUNT}/register`,
      headers: { authorization: 'Bearer long-enough-initial-token', 'content-type': 'application/json' },
      body: JSON.stringify({ grant_types: ['client_credentials'] }),
    });
    expect(created.status).toBe(201);
    expect(contextOf(enabled).apps.findApp(ACCOUNT, jsonOf(created).client_id as string)).not.toBeNull();
    const disabled = await call(makeSentinel(), {
      method: 'POST',
      path: `/sentinel/api/account/${ACCOUNT}/register`,
      headers: { authorization: 'Bearer long-enough-initial-token', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(disabled.status).toBe(404);
  });

  it("answers a registration body the client cut off or trickled as the client's failure, never a server error", async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({
      registration: { initialAccessToken: 'long-enough-initial-token' },
      onError: (error) => errors.push(error),
    });
    const register = (body: () => Promise<string>) =>
      call(sentinel, {
        method: 'POST',
        path: `/sentinel/api/account/${ACCOUNT}/register`,
        headers: { authorization: 'Bearer long-enough-initial-token', 'content-type': 'application/json' },
        body,
      });
    const aborted = await register(() => Promise.reject(new ClientAbortedError()));
    expect([aborted.status, aborted.headers.connection]).toEqual([400, 'close']);
    const late = await register(() => new Promise<string>(() => {}));
    expect([late.status, late.headers.connection]).toEqual([408, 'close']);
    expect(errors).toEqual([]);
  });
});
