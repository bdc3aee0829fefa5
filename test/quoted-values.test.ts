/**
 * What a refusal quotes of the request (refused scope tokens, unknown `prompt` values, the name of a malformed member
 * of the `claims` parameter) is cut at 200 characters: in
 * the answer, in the error redirect and in the denied event's `reason`. Anyone who knows a public client's id can send
 * such a request, and uncut its whole body or query would travel back and into an existing account's audit log.
 */
import { describe, expect, it } from 'vitest';
import type { SentinelEvent } from '../src/index.js';
import { DEVICE_AUTHORIZATION_PATH, DEVICE_CLIENT_ID, deviceApps, jsonBody } from './helpers/device-drive.js';
import { AUTHORIZE_PATH, authorizeQuery, call, postForm } from './helpers/direct-flow.js';
import { baseOptions, makeSentinel, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';

function collecting(overrides: Parameters<typeof makeSentinel>[0] = {}) {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({ onEvent: (event) => events.push(event), ...overrides });
  return { sentinel, events };
}

const reasons = (events: SentinelEvent[]) =>
  events.flatMap((event) => (event.type === 'token.denied' || event.type === 'authorize.denied' ? [event.reason] : []));

describe('a refusal quotes at most 200 characters of the request', () => {
  it('refused scope tokens at the device authorization endpoint', async () => {
    const apps = deviceApps().map((app) => (app.clientId === DEVICE_CLIENT_ID ? { ...app, scope: 'openid profile' } : app));
    const { sentinel, events } = collecting({ apps });
    const many = Array.from({ length: 1500 }, (_, index) => `junk${index}`).join(' ');
    const response = await postForm(
      sentinel,
      DEVICE_AUTHORIZATION_PATH,
      new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: many }).toString(),
    );
    expect(response.status).toBe(400);
    const description = String(jsonBody(response).error_description);
    expect(description).toMatch(/^scope not allowed for this application: junk0 junk1 .*\.\.\.$/);
    expect(description.length).toBeLessThanOrEqual(260);
    expect(reasons(events)).toEqual([description]);

    // A short list is quoted whole.
    const few = await postForm(
      sentinel,
      DEVICE_AUTHORIZATION_PATH,
      new URLSearchParams({ client_id: DEVICE_CLIENT_ID, scope: 'openid admin' }).toString(),
    );
    expect(jsonBody(few).error_description).toBe('scope not allowed for this application: admin');
  });

  it('unknown prompt values and refused scope tokens in the error redirect of the authorization endpoint', async () => {
    const apps = baseOptions().apps?.map((app) => (app.clientId === PUBLIC_CLIENT_ID ? { ...app, scope: 'openid profile' } : app));
    const { sentinel, events } = collecting({ apps });
    const junk = Array.from({ length: 700 }, (_, index) => `p${index}`).join(' ');
    for (const overrides of [{ scope: 'openid', prompt: junk }, { scope: `openid ${junk}` }] as Record<string, string>[]) {
      const query = authorizeQuery({
        client_id: PUBLIC_CLIENT_ID,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        ...overrides,
      });
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query });
      expect(response.status).toBe(302);
      const location = new URL(String(response.headers.location), 'http://localhost');
      expect(location.origin + location.pathname).toBe('https://app.example.com/cb');
      const description = String(location.searchParams.get('error_description'));
      expect(description.endsWith('...')).toBe(true);
      expect(description.length).toBeLessThanOrEqual(260);
      expect(String(response.headers.location).length).toBeLessThan(1000);
    }
    expect(reasons(events).map((reason) => reason.length <= 260)).toEqual([true, true]);
  });
  it('the name of a malformed claims member in the error redirect of the authorization endpoint', async () => {
    const { sentinel, events } = collecting();
    const name = 'n'.repeat(7000);
    for (const place of ['userinfo', 'id_token']) {
      const query = authorizeQuery({
        client_id: PUBLIC_CLIENT_ID,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        scope: 'openid',
        claims: JSON.stringify({ [place]: { [name]: 1 } }),
      });
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query });
      expect(response.status).toBe(302);
      const location = new URL(String(response.headers.location));
      expect(location.searchParams.get('error')).toBe('invalid_request');
      const description = String(location.searchParams.get('error_description'));
      expect(description).toBe(`claims.${place}.${'n'.repeat(200)}... must be null or a JSON object`);
      expect(String(response.headers.location).length).toBeLessThan(1000);
    }
    expect(reasons(events).map((reason) => reason.length <= 260)).toEqual([true, true]);
    // A short name is quoted whole.
    const short = authorizeQuery({ scope: 'openid', claims: JSON.stringify({ userinfo: { email: true } }) });
    const answer = new URL(String((await call(sentinel, { path: AUTHORIZE_PATH, query: short })).headers.location));
    expect(answer.searchParams.get('error_description')).toBe('claims.userinfo.email must be null or a JSON object');
  });
});
