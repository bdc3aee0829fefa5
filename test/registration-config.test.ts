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

  // RFC 6750 §2.1: the token of `Bearer <token>` is a b64token. A configured token outside that syntax could never be
  // presented, so every registration would be a 401 counted by the throttle; startup refuses it instead.
  it('refuses an initial access token that cannot be sent as a Bearer token, without echoing it', () => {
    for (const token of [
      'correct horse battery staple',
      'S3cret!Registration#Token',
      'p@ssw0rd:registration-token',
      'tok=en=with=equals=inside',
    ]) {
      let refused: unknown;
      try {
        makeSentinel({ registration: { initialAccessToken: token } });
      } catch (error) {
        refused = error;
      }
      expect(isConfigurationError(refused), token).toBe(true);
      const { field, message } = refused as { field: string; message: string };
      expect(field).toBe('registration.initialAccessToken');
      expect(message).toMatch(/RFC 6750 b64token/);
      expect(message).not.toContain(token);
    }
  });

  it('takes every b64token of 16 characters or more, and registers with it', async () => {
    for (const token of ['abcdefghijklmnop', 'A-._~+/9A-._~+/9', 'Zm9vYmFyYmF6cXV4cXV1eA==']) {
      const sentinel = makeSentinel({ registration: { initialAccessToken: token } });
      const created = await call(sentinel, {
        method: 'POST',
        path: `/sentinel/api/account/${ACCOUNT}/register`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grant_types: ['client_credentials'] }),
      });
      expect(created.status, token).toBe(201);
    }
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
