/**
 * The browser flow of the session and logout suites, driven through `sentinel.handle()`: sign in with `openid`
 * (a new device session), sign a second app in through the same session cookie, and what each suite checks after a
 * session ended — the access token at the bearer guard and at introspection, the refresh token at the token endpoint.
 */
import { expect } from 'vitest';
import type { AppOptions, Sentinel, SentinelResponse } from '../../src/index.js';
import {
  ACCOUNT_PATH,
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  csrfOf,
  jsonOf,
  LOGIN_PATH,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  startInteraction,
  TOKEN_PATH,
} from './direct-flow.js';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, PASSWORD, REDIRECT_URI, USERNAME } from './fixtures.js';
import { pkcePair } from './pkce.js';

/** The tokens one app got through one session. */
export interface AppTokens {
  clientId: string;
  accessToken: string;
  refreshToken?: string | undefined;
  idToken: string;
  /** The `sid` claim of the ID token. */
  sid: string;
}

/** One app's registration as these suites need it: id, secret (none: public) and redirect URI. */
export interface FlowApp {
  clientId: string;
  clientSecret?: string | undefined;
  redirectUri: string;
}

export const MAIN_APP: FlowApp = { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: REDIRECT_URI };

/** A second confidential app of the account: a session that signs in two apps ends both. */
export const APP_B: FlowApp = {
  clientId: 'b0b0b0b0-1111-4222-8333-444444444444',
  clientSecret: 'secret-of-app-b-0123456789abcdef',
  redirectUri: 'https://b.example.com/cb',
};

/** A third confidential app of the account, for sessions that sign in more apps than two. */
export const APP_C: FlowApp = {
  clientId: 'c0c0c0c0-1111-4222-8333-444444444444',
  clientSecret: 'secret-of-app-c-0123456789abcdef',
  redirectUri: 'https://c.example.com/cb',
};

/** `app` as an `apps` entry of the account: the code and refresh grants, unless `extra` says otherwise. */
export function appEntry(app: FlowApp, extra: Partial<AppOptions> = {}): AppOptions {
  const grantTypes: AppOptions['grantTypes'] = ['authorization_code', 'refresh_token'];
  return {
    accountId: ACCOUNT,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUris: [app.redirectUri],
    grantTypes,
    ...extra,
  };
}

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
}

async function redeem(sentinel: Sentinel, app: FlowApp, code: string, verifier: string) {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: app.redirectUri });
  const headers: Record<string, string> = {};
  if (app.clientSecret === undefined) form.set('client_id', app.clientId);
  else headers.authorization = basic(app.clientId, app.clientSecret);
  return postForm(sentinel, TOKEN_PATH, form.toString(), { headers });
}

/** The tokens of a token endpoint's answer to `app`, with the `sid` of its ID token. */
export function tokensOf(app: FlowApp, body: Record<string, unknown>): AppTokens {
  const idToken = body.id_token as string;
  expect(idToken, 'an ID token').toBeTruthy();
  return {
    clientId: app.clientId,
    accessToken: body.access_token as string,
    refreshToken: body.refresh_token as string | undefined,
    idToken,
    sid: claimsOf(idToken).sid as string,
  };
}

/** An authorization request of `app` for `openid` with PKCE (and what `extra` adds), and its code verifier. */
export function pkceQuery(app: FlowApp, extra: Record<string, string> = {}): { verifier: string; query: URLSearchParams } {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  return { verifier, query };
}

/** A code of `app` for the browser of `cookie` (the session signs it in without a login page). */
export async function codeThroughSession(sentinel: Sentinel, app: FlowApp, cookie: string): Promise<{ code: string; verifier: string }> {
  const { verifier, query } = pkceQuery(app);
  const response = await call(sentinel, { path: AUTHORIZE_PATH, query, headers: { cookie: `sentinel_session=${cookie}` } });
  expect(response.status, 'the session signs the app in').toBe(302);
  const code = new URL(String(response.headers.location)).searchParams.get('code');
  expect(code, String(response.headers.location)).toBeTruthy();
  return { code: code as string, verifier };
}

/** The end of a sign-in that answered 303 with a code: the new session cookie, and `app`'s tokens for the code. */
export async function signedInWith(
  sentinel: Sentinel,
  app: FlowApp,
  answer: SentinelResponse,
  verifier: string,
): Promise<{ cookie: string; tokens: AppTokens }> {
  expect(answer.status).toBe(303);
  const line = setCookies(answer).find((value) => value.startsWith('sentinel_session=')) as string;
  const code = new URL(String(answer.headers.location)).searchParams.get('code') as string;
  const response = await redeem(sentinel, app, code, verifier);
  expect(response.status, response.body).toBe(200);
  return { cookie: line.slice('sentinel_session='.length).split(';')[0] as string, tokens: tokensOf(app, jsonOf(response)) };
}

/** Signs in (a new device session) with `openid` for `app`; the session cookie and the app's tokens. */
export async function signInWithSession(sentinel: Sentinel, app: FlowApp = MAIN_APP): Promise<{ cookie: string; tokens: AppTokens }> {
  const { verifier, query } = pkceQuery(app);
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const login = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  return signedInWith(sentinel, app, login, verifier);
}

/**
 * The browser holding `cookie` is sent to the login page again (`prompt=login`, or what `extra` asks) for `app`, and
 * signs in as `user`: the new session cookie and the app's tokens.
 */
export async function signInAgain(
  sentinel: Sentinel,
  app: FlowApp,
  cookie: string,
  extra: Record<string, string> = { prompt: 'login' },
  user = { username: USERNAME, password: PASSWORD },
): Promise<{ cookie: string; tokens: AppTokens }> {
  const { verifier, query } = pkceQuery(app, extra);
  const headers = { cookie: `sentinel_session=${cookie}` };
  const authorize = await call(sentinel, { path: AUTHORIZE_PATH, query, headers });
  const interaction = /[?&]interaction=([A-Za-z0-9_-]{43})$/.exec(String(authorize.headers.location))?.[1] as string;
  expect(interaction, `the login page again, got ${String(authorize.headers.location)}`).toBeTruthy();
  const page = await call(sentinel, { path: LOGIN_PATH, query: new URLSearchParams({ interaction }), headers });
  const login = await postLogin(sentinel, interaction, { csrf_token: csrfOf(page.body), ...user }, undefined, headers.cookie);
  return signedInWith(sentinel, app, login, verifier);
}

/** Signs `app` in through the existing session of `cookie`; its tokens. */
export async function signInThroughSession(sentinel: Sentinel, app: FlowApp, cookie: string): Promise<AppTokens> {
  const { code, verifier } = await codeThroughSession(sentinel, app, cookie);
  const response = await redeem(sentinel, app, code, verifier);
  expect(response.status, response.body).toBe(200);
  return tokensOf(app, jsonOf(response));
}

/** Redeems a code of `app` and answers the token endpoint's response. */
export function redeemCode(sentinel: Sentinel, app: FlowApp, code: string, verifier: string) {
  return redeem(sentinel, app, code, verifier);
}

/** What each of the three checks says about an app's tokens. */
export interface TokenStanding {
  guard: boolean;
  introspection: boolean;
  refresh: boolean | null;
}

/** Whether the guard accepts the access token, introspection calls it active, and the refresh token still works (a confidential app). */
export async function tokenStanding(sentinel: Sentinel, tokens: AppTokens, app: FlowApp): Promise<TokenStanding> {
  const guard = (await sentinel.checkBearer(`Bearer ${tokens.accessToken}`, { accountId: ACCOUNT })).ok;
  // RFC 7662 here: an app introspects its own tokens.
  const introspected = await postForm(
    sentinel,
    `${ACCOUNT_PATH}/token/introspect`,
    new URLSearchParams({ token: tokens.accessToken }).toString(),
    {
      headers: { authorization: basic(app.clientId, app.clientSecret as string) },
    },
  );
  expect(introspected.status, introspected.body).toBe(200);
  let refresh: boolean | null = null;
  if (tokens.refreshToken !== undefined) {
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken });
    const headers: Record<string, string> = {};
    if (app.clientSecret === undefined) form.set('client_id', app.clientId);
    else headers.authorization = basic(app.clientId, app.clientSecret);
    const response = await postForm(sentinel, TOKEN_PATH, form.toString(), { headers });
    refresh = response.status === 200;
    if (response.status === 200) tokens.refreshToken = jsonOf(response).refresh_token as string;
    else expect(jsonOf(response).error).toBe('invalid_grant');
  }
  return { guard, introspection: jsonOf(introspected).active === true, refresh };
}

/** Whether the session cookie still signs an app in without a login page. */
export async function sessionWorks(sentinel: Sentinel, cookie: string): Promise<boolean> {
  const query = authorizeQuery({ prompt: 'none' });
  const response = await call(sentinel, { path: AUTHORIZE_PATH, query, headers: { cookie: `sentinel_session=${cookie}` } });
  return new URL(String(response.headers.location)).searchParams.get('code') !== null;
}
