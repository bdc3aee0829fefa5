/**
 * A pushed request whose validation fails inside (the store failing while an `id_token_hint` reloads the key ring)
 * is a `500 server_error` JSON answer at the PAR endpoint, reported to `onError`, with nothing stored: the redirect
 * the authorization endpoint would send instead has no place in a JSON answer to the client (RFC 9126 §2.3). At the
 * authorization endpoint, a store failing while a `request_uri` is looked up sends the browser back to the app with
 * `server_error`, as every store failure once the redirect URI is known, unless there is no redirect URI to go to.
 */
import { describe, expect, it } from 'vitest';
import { ACCOUNT_PATH, AUTHORIZE_PATH, call, postForm } from './helpers/direct-flow.js';
import { CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { FailingReadStore, unloadedHintSentinel } from './helpers/unloaded-hint.js';

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

describe('a request_uri looked up while the store fails', () => {
  it('redirects server_error with the URL state and iss, reports the cause, and keeps the pushed request', async () => {
    const store = new FailingReadStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => void errors.push(error) });
    const form = { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, response_type: 'code', redirect_uri: REDIRECT_URI };
    const pushed = await postForm(sentinel, `${ACCOUNT_PATH}/par`, new URLSearchParams(form).toString());
    const { request_uri } = JSON.parse(pushed.body ?? '{}') as { request_uri: string };
    store.failing = true;
    const response = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: new URLSearchParams({ client_id: CLIENT_ID, request_uri, state: 's1' }),
    });
    expect(response.status, response.body).toBe(302);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('server_error');
    expect(location.searchParams.get('state')).toBe('s1');
    expect(location.searchParams.get('iss')).toBeTruthy();
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
    store.failing = false;
    const again = await call(sentinel, { path: AUTHORIZE_PATH, query: new URLSearchParams({ client_id: CLIENT_ID, request_uri }) });
    expect(String(again.headers.location)).toContain('/login?interaction=');
  });

  it('is the 500 page, reported, when the URL names no redirect URI and the app has several', async () => {
    const store = new FailingReadStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => void errors.push(error) });
    store.failing = true;
    const requestUri = `urn:ietf:params:oauth:request_uri:${'a'.repeat(43)}`;
    const response = await call(sentinel, {
      path: AUTHORIZE_PATH,
      query: new URLSearchParams({ client_id: PUBLIC_CLIENT_ID, request_uri: requestUri }),
    });
    expect(response.status).toBe(500);
    expect(response.headers.location).toBeUndefined();
    expect(errors).toContainEqual(expect.objectContaining({ message: 'store unavailable' }));
  });
});
