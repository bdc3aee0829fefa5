/**
 * A deleted or disabled app's tokens stop everywhere at once (RFC 7592 §2.3), not only at the bearer guard:
 * UserInfo answers 401 invalid_token, the refresh token and introspection refuse the client. Runs on the default
 * MemoryAppStore (DELETE over RFC 7592) and on the PostgreSQL registry (DELETE, and `disableApp` as the CLI's
 * `apps disable` does it).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import type { PostgresAppStore } from '../src/postgres/index.js';
import { ACCOUNT_PATH, call, jsonOf, openLogin, postForm, postLogin, startInteraction, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { oidcOptions } from './helpers/oidc.js';
import { pkcePair } from './helpers/pkce.js';

const INITIAL = 'initial-access-token-for-userinfo-tests';
const REDIRECT = 'https://spa.example.com/cb';
const USERINFO = `${ACCOUNT_PATH}/userinfo`;
const INTROSPECT = `${TOKEN_PATH}/introspect`;

interface Registered {
  client_id: string;
  client_secret: string;
  registration_access_token: string;
  registration_client_uri: string;
}

interface UserTokens {
  app: Registered;
  accessToken: string;
  refreshToken: string;
}

async function register(sentinel: Sentinel): Promise<Registered> {
  const response = await call(sentinel, {
    method: 'POST',
    path: `${ACCOUNT_PATH}/register`,
    headers: { authorization: `Bearer ${INITIAL}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid email',
    }),
  });
  expect(response.status, response.body).toBe(201);
  return jsonOf(response) as unknown as Registered;
}

/** Registers an app over RFC 7591 and signs the fixture user in to it through the code flow. */
async function userTokens(sentinel: Sentinel): Promise<UserTokens> {
  const app = await register(sentinel);
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: app.client_id,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 'st-gone',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  expect(login.status).toBe(303);
  const code = new URL(String(login.headers.location)).searchParams.get('code') as string;
  const exchanged = await postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      client_secret: app.client_secret,
    }).toString(),
  );
  expect(exchanged.status, exchanged.body).toBe(200);
  const body = jsonOf(exchanged);
  return { app, accessToken: body.access_token as string, refreshToken: body.refresh_token as string };
}

function userInfo(sentinel: Sentinel, accessToken: string, method: 'GET' | 'POST' = 'GET'): Promise<SentinelResponse> {
  return method === 'GET'
    ? call(sentinel, { path: USERINFO, headers: { authorization: `Bearer ${accessToken}` } })
    : postForm(sentinel, USERINFO, new URLSearchParams({ access_token: accessToken }).toString());
}

function deleteApp(sentinel: Sentinel, app: Registered): Promise<SentinelResponse> {
  return call(sentinel, {
    method: 'DELETE',
    path: new URL(app.registration_client_uri).pathname,
    headers: { authorization: `Bearer ${app.registration_access_token}` },
  });
}

function refresh(sentinel: Sentinel, tokens: UserTokens): Promise<SentinelResponse> {
  const { app, refreshToken } = tokens;
  const form = { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: app.client_id, client_secret: app.client_secret };
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
}

function introspect(sentinel: Sentinel, tokens: UserTokens): Promise<SentinelResponse> {
  const { app, accessToken } = tokens;
  const form = { token: accessToken, client_id: app.client_id, client_secret: app.client_secret };
  return postForm(sentinel, INTROSPECT, new URLSearchParams(form).toString());
}

/** Everything works while the app exists (so a later refusal is the app's absence, not a broken flow). */
async function expectLive(sentinel: Sentinel, tokens: UserTokens): Promise<void> {
  const answered = await userInfo(sentinel, tokens.accessToken);
  expect(answered.status, answered.body).toBe(200);
  expect(jsonOf(answered).sub).toBe(USER_ID);
  expect(jsonOf(await introspect(sentinel, tokens)).active).toBe(true);
  expect((await sentinel.checkBearer(`Bearer ${tokens.accessToken}`, {})).ok).toBe(true);
}

/** The app is gone: every presentation of its tokens is refused, as the bearer guard refuses them. */
async function expectRefusedEverywhere(sentinel: Sentinel, tokens: UserTokens): Promise<void> {
  for (const method of ['GET', 'POST'] as const) {
    const refused = await userInfo(sentinel, tokens.accessToken, method);
    expect(refused.status, `${method} ${refused.body}`).toBe(401);
    expect(jsonOf(refused).error).toBe('invalid_token');
    expect(String(refused.headers['www-authenticate'])).toMatch(/^Bearer realm="sentinel", error="invalid_token"/);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
  }
  expect((await sentinel.checkBearer(`Bearer ${tokens.accessToken}`, {})).ok).toBe(false);
  // The token endpoint and introspection authenticate the client first, and it no longer exists: 400 at the token
  // endpoint (the credentials came in the body, RFC 6749 §5.2), 401 at introspection (RFC 7662 §2.3).
  const [refreshed, introspected] = [await refresh(sentinel, tokens), await introspect(sentinel, tokens)];
  expect([refreshed.status, jsonOf(refreshed).error]).toEqual([400, 'invalid_client']);
  expect([introspected.status, jsonOf(introspected).error]).toEqual([401, 'invalid_client']);
}

describe('a deleted app on the MemoryAppStore', () => {
  it('UserInfo answers 401 invalid_token at once after RFC 7592 DELETE, like the bearer guard', async () => {
    const sentinel = makeSentinel(oidcOptions({ registration: { initialAccessToken: INITIAL } }));
    const tokens = await userTokens(sentinel);
    await expectLive(sentinel, tokens); // UserInfo and the guard now remember the app as present
    expect((await deleteApp(sentinel, tokens.app)).status).toBe(204);
    await expectRefusedEverywhere(sentinel, tokens);
  });

  it('refuses the token of a deleted app whose presence was never checked before', async () => {
    const sentinel = makeSentinel(oidcOptions({ registration: { initialAccessToken: INITIAL } }));
    const tokens = await userTokens(sentinel);
    expect((await deleteApp(sentinel, tokens.app)).status).toBe(204);
    const refused = await userInfo(sentinel, tokens.accessToken);
    expect(refused.status).toBe(401);
    expect(jsonOf(refused).error_description).toBe('the token has been revoked');
  });
});

await describeOnPostgres('hardening-userinfo-app-gone', 'a deleted or disabled app in the PostgreSQL registry', (registry) => {
  let store: PostgresAppStore;
  let sentinel: Sentinel;

  beforeAll(() => {
    store = registry().store;
    sentinel = makeSentinel(oidcOptions({ apps: [], appStore: store, registration: { initialAccessToken: INITIAL } }));
  });

  it('UserInfo answers 401 invalid_token after RFC 7592 DELETE', async () => {
    const tokens = await userTokens(sentinel);
    await expectLive(sentinel, tokens);
    expect((await deleteApp(sentinel, tokens.app)).status).toBe(204);
    await expectRefusedEverywhere(sentinel, tokens);
  });

  it('UserInfo answers 401 invalid_token for a disabled app, and 200 again once it is enabled', async () => {
    const tokens = await userTokens(sentinel);
    // Disabled as `sentinel-idp apps disable` does it, before this instance checked the app's presence.
    expect(await store.disableApp(ACCOUNT, tokens.app.client_id)).toBe(true);
    await expectRefusedEverywhere(sentinel, tokens);
    expect(await store.enableApp(ACCOUNT, tokens.app.client_id)).toBe(true);
    const again = await userInfo(sentinel, tokens.accessToken);
    expect(again.status, again.body).toBe(200);
  });
});
