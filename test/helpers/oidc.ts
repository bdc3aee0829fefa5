/**
 * Helpers of the OpenID Connect suites: a sentinel with an RSA and an EC key and a `users.claims` hook, a browser
 * (supertest agent) that signs in through the real authorize → login → code flow, and ID token verification
 * against the published JWKS with jose.
 */
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import request from 'supertest';
import { expect } from 'vitest';
import { generatePrivateJWK, type JWK, type SentinelOptions, type UserClaims } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, PASSWORD, REDIRECT_URI, SIGNING_KEY, USER_ID, USERNAME, baseOptions } from './fixtures.js';
import { ACCOUNT_ISSUER, exchange, FORM } from './oauth.js';
import { pkcePair } from './pkce.js';

export type Agent = ReturnType<typeof request.agent>;

export const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;
export const USERINFO = `/sentinel/api/account/${ACCOUNT}/userinfo`;
export const END_SESSION = `/sentinel/api/account/${ACCOUNT}/end_session`;
export const DISCOVERY = `/sentinel/api/account/${ACCOUNT}/.well-known/openid-configuration`;
export const POST_LOGOUT_URI = 'https://app.example.com/signed-out';

/** One RSA key per test process (generation costs tens of milliseconds). */
export const RSA_KEY: JWK = generatePrivateJWK('RS256');

/** Everything the claims hook knows about the fixture user (OpenID Connect Core §5.1). */
export const ALICE: UserClaims = {
  name: 'Alice Liddell',
  given_name: 'Alice',
  family_name: 'Liddell',
  preferred_username: 'alice',
  locale: 'en-GB',
  updated_at: 1_700_000_000,
  email: 'alice@example.com',
  email_verified: true,
  phone_number: '+44 20 7946 0000',
  phone_number_verified: false,
  address: { street_address: '1 Rabbit Hole', locality: 'Oxford', country: 'GB' },
};

/** Base options plus an RSA key (listed after the EC access-token key), the claims hook and a logout URI. */
export function oidcOptions(overrides: Partial<SentinelOptions> = {}): Partial<SentinelOptions> {
  const base = baseOptions();
  const apps = (base.apps ?? []).map((app) =>
    app.clientId === CLIENT_ID ? { ...app, postLogoutRedirectUris: [POST_LOGOUT_URI, `${POST_LOGOUT_URI}?tenant=a`] } : app,
  );
  const authenticate = base.users!.authenticate;
  return {
    keys: [SIGNING_KEY, RSA_KEY],
    apps,
    users: {
      authenticate,
      claims: async ({ userId }) => (userId === USER_ID ? ALICE : null),
    },
    ...overrides,
  };
}

/** An authorize path for the confidential client with `scope=openid`; `undefined` leaves a default out. */
export function authorizePath(params: Record<string, string | undefined> = {}): string {
  const merged: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state: 'st-1',
    nonce: 'n-1',
    ...params,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) query.append(name, value);
  return `${AUTHORIZE}?${query}`;
}

/** The parameters of a redirect back to the app. */
export function callbackOf(response: request.Response): URLSearchParams {
  const location = response.headers.location as string | undefined;
  expect(location, `expected a redirect (status ${response.status}: ${response.text?.slice(0, 200)})`).toBeTypeOf('string');
  const url = new URL(location as string);
  expect(`${url.origin}${url.pathname}`).toBe(REDIRECT_URI);
  return url.searchParams;
}

/** True when the response sends the browser to the login page. */
export function isLoginRedirect(response: request.Response): boolean {
  return response.status === 302 && /\/login\?interaction=/.test(String(response.headers.location));
}

/** Posts the login form of a login page URL for the fixture user; returns the 303 back to the app. */
export async function submitLogin(agent: Agent, loginPath: string): Promise<request.Response> {
  const page = await agent.get(loginPath);
  expect(page.status).toBe(200);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const response = await agent
    .post(loginPath)
    .set('content-type', FORM)
    .send(new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString());
  expect(response.status).toBe(303);
  return response;
}

/** Tokens of one completed flow. */
export interface FlowTokens {
  accessToken: string;
  idToken: string;
  refreshToken?: string | undefined;
  body: Record<string, unknown>;
}

/**
 * Runs the flow once: authorize (signing in on the login page when asked to), then the code exchange with PKCE.
 * `params` are extra authorize parameters.
 */
export async function signInFlow(server: unknown, agent: Agent, params: Record<string, string | undefined> = {}): Promise<FlowTokens> {
  const { verifier, challenge } = pkcePair();
  let response = await agent.get(authorizePath({ code_challenge: challenge, code_challenge_method: 'S256', ...params }));
  if (isLoginRedirect(response)) response = await submitLogin(agent, response.headers.location as string);
  const callback = callbackOf(response);
  expect(callback.get('error'), callback.get('error_description') ?? '').toBeNull();
  const tokens = await exchange(server, callback.get('code') ?? '', { code_verifier: verifier });
  expect(tokens.status).toBe(200);
  return {
    accessToken: tokens.body.access_token,
    idToken: tokens.body.id_token,
    refreshToken: tokens.body.refresh_token,
    body: tokens.body,
  };
}

/** Verifies an ID token against the JWKS the discovery document points to, as a client would. */
export async function verifyIDToken(
  server: unknown,
  idToken: string,
  expected: { nonce?: string | undefined } = {},
): Promise<{ payload: JWTPayload; alg: string; kid: string | undefined }> {
  const discovery = await request(server as Parameters<typeof request>[0]).get(DISCOVERY);
  const jwksPath = new URL(discovery.body.jwks_uri).pathname;
  const jwks = await request(server as Parameters<typeof request>[0]).get(jwksPath);
  const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks.body), {
    issuer: ACCOUNT_ISSUER,
    audience: CLIENT_ID,
    algorithms: discovery.body.id_token_signing_alg_values_supported,
  });
  expect(payload.sub).toBe(USER_ID);
  expect(payload.azp).toBe(CLIENT_ID);
  expect(typeof payload.auth_time).toBe('number');
  if (expected.nonce !== undefined) expect(payload.nonce).toBe(expected.nonce);
  return { payload, alg: protectedHeader.alg, kid: protectedHeader.kid };
}

/** A random nonce. */
export function freshNonce(): string {
  return randomBytes(12).toString('base64url');
}
