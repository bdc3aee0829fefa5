/**
 * The `scope` parameter at the platform's app-token paths (v2 consumer-bound and v1), read as the account token
 * endpoint's client_credentials grant reads it (RFC 6749 §4.4.2, §3.3): a narrower scope is what the token carries
 * and the answer echoes (§5.1); a scope the app is not registered for is `invalid_scope`; no scope is the app's.
 */
import { describe, expect, it } from 'vitest';
import { ACCOUNT, appTokenPath, baseOptions, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel } from './helpers/fixtures.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { claimsOf } from './helpers/jwt.js';

const V1_PATH = `/sentinel/api/account/${ACCOUNT}/app/token`;
const PATHS = [
  ['v2', appTokenPath()],
  ['v1', V1_PATH],
] as const;

function scopedSentinel() {
  const apps = baseOptions().apps!.map((app) => (app.clientId === CLIENT_ID ? { ...app, scope: 'orders.read orders.write' } : app));
  return makeSentinel({ apps });
}

const ask = (sentinel: ReturnType<typeof makeSentinel>, path: string, form: string) =>
  postForm(sentinel, path, `grant_type=client_credentials${form}`, { headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) } });

describe.each(PATHS)('the %s app-token path reads scope', (_name, path) => {
  it('issues the requested part of the app scope and says so', async () => {
    const response = await ask(scopedSentinel(), path, '&scope=orders.read');
    expect(response.status, response.body).toBe(200);
    const body = jsonOf(response);
    expect(claimsOf(String(body.access_token)).scope).toBe('orders.read');
    expect(body.scope).toBe('orders.read');
  });

  it('refuses a scope the app is not registered for', async () => {
    const response = await ask(scopedSentinel(), path, '&scope=orders.read%20admin');
    expect(response.status).toBe(400);
    expect(jsonOf(response)).toEqual({ error: 'invalid_scope', error_description: 'scope not allowed for this application: admin' });
  });

  it("keeps the app's whole scope and the three-member answer without one", async () => {
    const response = await ask(scopedSentinel(), path, '');
    expect(response.status).toBe(200);
    const body = jsonOf(response);
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(claimsOf(String(body.access_token)).scope).toBe('orders.read orders.write');
  });
});
