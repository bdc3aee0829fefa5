/**
 * What a refusal quotes of the request (refused scope tokens, unknown `prompt` values, the name of a malformed member
 * of the `claims` parameter) is cut at 200 characters: in
 * the answer, in the error redirect and in the denied event's `reason`. Anyone who knows a public client's id can send
 * such a request, and uncut its whole body or query would travel back and into an existing account's audit log.
 * A quoted value shaped like a credential (a client that sent its token as `scope`) is not repeated at all.
 */
import { describe, expect, it } from 'vitest';
import { WITHHELD_VALUE } from '../src/errors.js';
import type { SentinelEvent } from '../src/index.js';
import { DEVICE_AUTHORIZATION_PATH, DEVICE_CLIENT_ID, deviceApps, jsonBody } from './helpers/device-drive.js';
import { AUTHORIZE_PATH, authorizeQuery, call, postForm } from './helpers/direct-flow.js';
import { appTokenPath, baseOptions, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';

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

  it('holds back a value shaped like a credential: in the answer, the error redirect and the denied event', async () => {
    const apps = baseOptions().apps?.map((app) =>
      app.clientId === CLIENT_ID || app.clientId === PUBLIC_CLIENT_ID ? { ...app, scope: 'openid orders.read' } : app,
    );
    const { sentinel, events } = collecting({ apps });
    // What a client mixing up its parameters sends as scope: its refresh token, a JWT, a hex secret.
    const refreshToken = 'Qm9vbGVhbl9yZWZyZXNoX3Rva2VuX3ZhbHVlXzEyMzQ';
    const jwt = 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJjb25zdW1lci0xIn0.c2lnbmF0dXJl';
    const hex = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
    // A standard-base64 secret percent-encoded once more: its %2B, %2F and %3D must not cut it into short runs.
    const encoded = 'q3Xk9%2BVb2%2FLm8Pz1Rt7Yw4Hn6Jc0Ds5Ea%2BGf2Ku9Ni8%3D';
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      scope: `orders.read admin ${refreshToken} ${jwt} ${hex} ${encoded}`,
    });
    const answer = await postForm(sentinel, appTokenPath(), form.toString(), {
      headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    });
    expect(answer.status).toBe(400);
    const withheld = WITHHELD_VALUE;
    expect(jsonBody(answer).error_description).toBe(
      `scope not allowed for this application: admin ${withheld} ${withheld} ${withheld} ${withheld}`,
    );

    const query = authorizeQuery({
      client_id: PUBLIC_CLIENT_ID,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: `openid ${refreshToken}`,
    });
    const redirect = await call(sentinel, { path: AUTHORIZE_PATH, query });
    expect(redirect.status).toBe(302);
    const location = String(redirect.headers.location);
    expect(new URL(location).searchParams.get('error_description')).toBe(`scope not allowed for this application: ${withheld}`);

    const denied = reasons(events);
    expect(denied).toHaveLength(2);
    for (const text of [...denied, location, answer.body]) {
      for (const secret of [refreshToken, jwt, hex, encoded]) expect(text).not.toContain(secret);
    }
    // Long names that are no credential are still quoted: letters alone, or digits alone.
    const plain = new URLSearchParams({ grant_type: 'client_credentials', scope: `${'n'.repeat(40)} ${'7'.repeat(40)}` });
    const named = await postForm(sentinel, appTokenPath(), plain.toString(), {
      headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    });
    expect(jsonBody(named).error_description).toBe(`scope not allowed for this application: ${'n'.repeat(40)} ${'7'.repeat(40)}`);
  });
});
