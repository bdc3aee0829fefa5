/**
 * A pushed request whose validation fails inside (the store failing while an `id_token_hint` reloads the key ring)
 * is a `500 server_error` JSON answer at the PAR endpoint, reported to `onError`, with nothing stored: the redirect
 * the authorization endpoint would send instead has no place in a JSON answer to the client (RFC 9126 §2.3).
 */
import { describe, expect, it } from 'vitest';
import { ACCOUNT_PATH, postForm } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI } from './helpers/fixtures.js';
import { unloadedHintSentinel } from './helpers/unloaded-hint.js';

describe('a pushed request whose validation fails inside', () => {
  it('answers 500 server_error as JSON, reports the cause to onError and stores nothing', async () => {
    const { sentinel, store, errors, hint } = await unloadedHintSentinel();
    store.failing = true;
    const response = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/par`,
      new URLSearchParams({
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state: 'st-1',
        id_token_hint: hint,
      }).toString(),
    );
    expect(response.status, response.body).toBe(500);
    expect(response.headers.location).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(response.body ?? '{}')).toMatchObject({ error: 'server_error' });
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
    expect(store.writes.filter((key) => key.startsWith('par:'))).toEqual([]);
  });
});
