/**
 * An `id_token_hint` signed by a key this instance has not loaded reloads the key ring once (unknown-kid.ts). When
 * the store fails during that reload, the redirect URI is already validated: the browser goes back to the app with
 * `server_error`, `state` and `iss`, as for every other failure after that point, the failure goes to `onError`, and
 * nothing is issued or stored (no interaction, no code).
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { REDIRECT_URI } from './helpers/fixtures.js';
import { unloadedHintSentinel } from './helpers/unloaded-hint.js';

describe('id_token_hint when the key ring cannot be reloaded', () => {
  it('redirects server_error with state and iss, reports to onError, issues nothing', async () => {
    const { sentinel, store, errors, hint } = await unloadedHintSentinel();
    store.failing = true;
    const response = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: authorizeQuery({ scope: 'openid', id_token_hint: hint }),
    });
    expect(response.status, response.body).toBe(302);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('server_error');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('iss')).toBeTruthy();
    expect(location.searchParams.get('code')).toBeNull();
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
    expect(store.writes).toEqual([]);
  });
});
