/**
 * The `claims` parameter's `sub` (OpenID Connect Core §3.1.2.2): a request asking for the ID token of a specific user
 * gets a positive answer only for that user, never for another user who happens to have a session, and never from a
 * sign-in by someone else.
 */
import { describe, expect, it } from 'vitest';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { AUTHORIZE_PATH, authorizeQuery, call, openLogin, postLogin, signIn, startInteraction } from './helpers/direct-flow.js';

import { pkcePair } from './helpers/pkce.js';

function subClaims(sub: unknown): string {
  return JSON.stringify({ id_token: { sub: { value: sub } } });
}

function callback(location: unknown): URLSearchParams {
  return new URL(String(location)).searchParams;
}

describe('claims parameter: sub', () => {
  const pkce = () => {
    const { challenge } = pkcePair();
    return { code_challenge: challenge, code_challenge_method: 'S256' };
  };

  it('a session of another user does not answer: login_required with prompt=none, the login page otherwise', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const headers = { cookie: `sentinel_session=${sessionCookie}` };
    const silent = await call(sentinel, {
      path: AUTHORIZE_PATH,
      headers,
      query: authorizeQuery({ ...pkce(), scope: 'openid', prompt: 'none', claims: subClaims('u-bob') }),
    });
    expect(silent.status).toBe(302);
    expect(callback(silent.headers.location).get('error')).toBe('login_required');
    expect(callback(silent.headers.location).get('code')).toBeNull();
    const asked = await call(sentinel, {
      path: AUTHORIZE_PATH,
      headers,
      query: authorizeQuery({ ...pkce(), scope: 'openid', claims: subClaims('u-bob') }),
    });
    expect(String(asked.headers.location)).toMatch(/\/login\?interaction=/);
    // The signed-in user's own sub answers silently, as before.
    const own = await call(sentinel, {
      path: AUTHORIZE_PATH,
      headers,
      query: authorizeQuery({ ...pkce(), scope: 'openid', prompt: 'none', claims: subClaims(USER_ID) }),
    });
    expect(callback(own.headers.location).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a sign-in by another user on the login page gets login_required, and no code', async () => {
    const sentinel = makeSentinel();
    const { interaction } = await startInteraction(sentinel, authorizeQuery({ ...pkce(), scope: 'openid', claims: subClaims('u-bob') }));
    const csrf = await openLogin(sentinel, interaction);
    const response = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(response.status).toBe(303);
    expect(callback(response.headers.location).get('error')).toBe('login_required');
    expect(callback(response.headers.location).get('code')).toBeNull();
    expect(response.headers['set-cookie']).toBeUndefined();
  });

  it('a sub member of the wrong type is invalid_request back to the app', async () => {
    const sentinel = makeSentinel();
    for (const claims of [subClaims(42), subClaims(''), JSON.stringify({ id_token: { sub: 'u-bob' } })]) {
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ ...pkce(), scope: 'openid', claims }) });
      expect(callback(response.headers.location).get('error')).toBe('invalid_request');
    }
  });
});
