/**
 * The `claims` request parameter's user claims (OpenID Connect Core §5.5): claims asked for by name are released
 * where they were asked for (UserInfo or the ID token) even when no scope covers them, through the code exchange and
 * every refresh; names the service cannot release are ignored, `value`/`values` are hints, a missing `essential`
 * claim is simply absent, and malformed JSON is `invalid_request`. Before, only `acr` and `id_token.sub` were read and
 * every other member was silently ignored, though the discovery document says `claims_parameter_supported: true`.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type UserClaimsInput } from '../src/index.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import {
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  exchangeCode,
  jsonOf,
  openLogin,
  postLogin,
  signIn,
  startInteraction,
  useRefreshToken,
} from './helpers/direct-flow.js';
import { claimsOf } from './helpers/jwt.js';
import { pkcePair } from './helpers/pkce.js';

const USERINFO = `/sentinel/api/account/${ACCOUNT}/userinfo`;
const ALICE = {
  name: 'Alice Liddell',
  email: 'alice@example.com',
  email_verified: true,
  locale: 'en-GB',
  shoe_size: '38',
  favourite_colour: 'blue',
};

/** A sentinel whose claims hook answers ALICE, recording what it was asked. */
function claimsSentinel(overrides: Parameters<typeof makeSentinel>[0] = {}): { sentinel: Sentinel; asked: UserClaimsInput[] } {
  const asked: UserClaimsInput[] = [];
  const sentinel = makeSentinel({
    users: {
      authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
      claims: async (input) => {
        asked.push(input);
        return ALICE;
      },
    },
    ...overrides,
  });
  return { sentinel, asked };
}

/** The whole browser flow with `claims`, then the code exchange: the token response's body. */
async function tokensFor(sentinel: Sentinel, claims: string | undefined, scope = 'openid'): Promise<Record<string, unknown>> {
  const { verifier, challenge } = pkcePair();
  const params: Record<string, string> = { scope, code_challenge: challenge, code_challenge_method: 'S256', nonce: 'n-1' };
  if (claims !== undefined) params.claims = claims;
  const { interaction } = await startInteraction(sentinel, authorizeQuery(params));
  const csrf = await openLogin(sentinel, interaction);
  const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  const code = new URL(String(signedIn.headers.location)).searchParams.get('code');
  expect(code, String(signedIn.headers.location)).toBeTruthy();
  const exchanged = await exchangeCode(sentinel, code as string, verifier);
  expect(exchanged.status, exchanged.body).toBe(200);
  return jsonOf(exchanged);
}

async function userInfo(sentinel: Sentinel, accessToken: unknown): Promise<Record<string, unknown>> {
  const response = await call(sentinel, { path: USERINFO, headers: { authorization: `Bearer ${String(accessToken)}` } });
  expect(response.status, response.body).toBe(200);
  return jsonOf(response);
}

/** The user claims of an ID token (the standard ones of every ID token left out). */
function userClaimsOf(idToken: unknown): Record<string, unknown> {
  const { iss, sub, aud, azp, iat, exp, auth_time, nonce, at_hash, sid, acr, amr, ...rest } = claimsOf(String(idToken));
  return rest;
}

const REQUEST = JSON.stringify({ userinfo: { email: { essential: true } }, id_token: { name: null } });

describe('claims parameter: user claims (OpenID Connect Core §5.5)', () => {
  it('releases claims asked for by name where they were asked for, with scope openid alone', async () => {
    const { sentinel, asked } = claimsSentinel();
    const tokens = await tokensFor(sentinel, REQUEST);
    expect(userClaimsOf(tokens.id_token)).toEqual({ name: ALICE.name });
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, email: ALICE.email });
    // The hook is told what each place asked for.
    expect(asked).toEqual([
      { accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'], claims: ['name'] },
      { accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'], claims: ['email'] },
    ]);
  });

  it('adds to the claims the scopes release, in each place', async () => {
    const { sentinel } = claimsSentinel({ idTokenClaims: true });
    const tokens = await tokensFor(sentinel, REQUEST, 'openid email');
    expect(userClaimsOf(tokens.id_token)).toEqual({ name: ALICE.name, email: ALICE.email, email_verified: true });
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, email: ALICE.email, email_verified: true });
  });

  it('keeps them through refresh: the refreshed ID token and access token release them too', async () => {
    const { sentinel } = claimsSentinel();
    const first = await tokensFor(sentinel, REQUEST);
    const refreshed = await useRefreshToken(sentinel, String(first.refresh_token));
    expect(refreshed.status, refreshed.body).toBe(200);
    const body = jsonOf(refreshed);
    expect(userClaimsOf(body.id_token)).toEqual({ name: ALICE.name });
    expect(await userInfo(sentinel, body.access_token)).toEqual({ sub: USER_ID, email: ALICE.email });
    const again = jsonOf(await useRefreshToken(sentinel, String(body.refresh_token)));
    expect(userClaimsOf(again.id_token)).toEqual({ name: ALICE.name });
    expect(await userInfo(sentinel, again.access_token)).toEqual({ sub: USER_ID, email: ALICE.email });
  });

  it('ignores names the service cannot release, treats value and values as hints, and leaves a missing essential claim out', async () => {
    const { sentinel } = claimsSentinel();
    const claims = JSON.stringify({
      userinfo: { shoe_size: null, locale: { values: ['fr-FR'] }, phone_number: { essential: true }, constructor: null },
      id_token: { favourite_colour: { essential: true }, email: { value: 'bob@example.com' } },
    });
    const tokens = await tokensFor(sentinel, claims);
    expect(userClaimsOf(tokens.id_token)).toEqual({ email: ALICE.email });
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, locale: ALICE.locale });
  });

  it('answers malformed claims with invalid_request back to the app, and issues nothing', async () => {
    const { sentinel } = claimsSentinel();
    for (const claims of ['{"userinfo":', '[]', '{"userinfo":{"email":true}}', '{"id_token":{"name":"yes"}}', '{"userinfo":[]}']) {
      const { challenge } = pkcePair();
      const query = authorizeQuery({ scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', claims });
      const response = await call(sentinel, { path: AUTHORIZE_PATH, query });
      const callback = new URL(String(response.headers.location)).searchParams;
      expect(callback.get('error'), claims).toBe('invalid_request');
      expect(callback.get('code')).toBeNull();
    }
  });

  it('answers the sign-in claims UserInfo is asked for (auth_time, acr, amr) from the access token', async () => {
    const { sentinel, asked } = claimsSentinel();
    const claims = JSON.stringify({ userinfo: { acr: null, auth_time: { essential: true }, amr: null, email: null } });
    const tokens = await tokensFor(sentinel, claims);
    const access = claimsOf(String(tokens.access_token));
    const answer = await userInfo(sentinel, tokens.access_token);
    expect(answer).toEqual({ sub: USER_ID, email: ALICE.email, auth_time: access.auth_time, acr: access.acr, amr: access.amr });
    expect(answer.acr).toBe('urn:sentinel:acr:password');
    // The hook hears only the user claims; asked for none of those, it is asked as without the parameter.
    expect(asked.at(-1)).toEqual({ accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'], claims: ['email'] });
    const onlyAcr = await tokensFor(sentinel, JSON.stringify({ userinfo: { acr: { essential: true } } }));
    expect(await userInfo(sentinel, onlyAcr.access_token)).toEqual({ sub: USER_ID, acr: 'urn:sentinel:acr:password' });
    expect(asked.at(-1)).toEqual({ accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'] });
  });

  // `sid` is in claims_supported for the ID token (and logout tokens) only, as node-oidc-provider releases it: UserInfo
  // answers claims of the user, and a session's id is not one; asked for there, it is ignored like any unknown name.
  it('ignores sid asked of UserInfo: the session id is released in the ID token only', async () => {
    const { sentinel, asked } = claimsSentinel();
    const tokens = await tokensFor(sentinel, JSON.stringify({ userinfo: { sid: null, email: null }, id_token: { sid: null } }));
    expect(claimsOf(String(tokens.id_token)).sid).toEqual(expect.any(String));
    expect(claimsOf(String(tokens.access_token)).userinfo_claims).toEqual(['email']);
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, email: ALICE.email });
    expect(asked.at(-1)).toEqual({ accountId: ACCOUNT, userId: USER_ID, scopes: ['openid'], claims: ['email'] });
  });

  it('gives an app with a registered scope no claim by name its scopes could not release, at refresh too', async () => {
    const store = new MemoryStore();
    const withScope = (scope: string) =>
      claimsSentinel({
        store,
        apps: (baseOptions().apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope } : app)),
      }).sentinel;
    const sentinel = withScope('openid profile');
    const claims = JSON.stringify({ userinfo: { email: null, name: null, acr: null }, id_token: { email_verified: null, locale: null } });
    const tokens = await tokensFor(sentinel, claims);
    expect(userClaimsOf(tokens.id_token)).toEqual({ locale: ALICE.locale });
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, name: ALICE.name, acr: 'urn:sentinel:acr:password' });
    // The operator narrows the app's scope (a restart with new options, the store kept): the next refresh follows.
    const narrowed = withScope('openid');
    const body = jsonOf(await useRefreshToken(narrowed, String(tokens.refresh_token)));
    expect(userClaimsOf(body.id_token)).toEqual({});
    expect(await userInfo(narrowed, body.access_token)).toEqual({ sub: USER_ID, acr: 'urn:sentinel:acr:password' });
  });

  it('gives at the code exchange no claim by name the app lost while the code was pending', async () => {
    const store = new MemoryStore();
    const withScope = (scope: string) =>
      claimsSentinel({
        store,
        apps: (baseOptions().apps ?? []).map((app) => (app.clientId === CLIENT_ID ? { ...app, scope } : app)),
      }).sentinel;
    const { verifier, challenge } = pkcePair();
    const claims = JSON.stringify({ userinfo: { name: null }, id_token: { locale: null } });
    const params = { scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', nonce: 'n-1', claims };
    const sentinel = withScope('openid profile');
    const { interaction } = await startInteraction(sentinel, authorizeQuery(params));
    const csrf = await openLogin(sentinel, interaction);
    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const code = new URL(String(signedIn.headers.location)).searchParams.get('code');
    // The operator narrows the app's scope before the code is redeemed (a restart with new options, the store kept).
    const narrowed = withScope('openid');
    const body = jsonOf(await exchangeCode(narrowed, String(code), verifier));
    expect(userClaimsOf(body.id_token)).toEqual({});
    expect(await userInfo(narrowed, body.access_token)).toEqual({ sub: USER_ID });
  });

  it('a session answering prompt=none releases them as a sign-in does', async () => {
    const { sentinel } = claimsSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const { verifier, challenge } = pkcePair();
    const query = authorizeQuery({
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      prompt: 'none',
      claims: REQUEST,
    });
    const silent = await call(sentinel, { path: AUTHORIZE_PATH, query, headers: { cookie: `sentinel_session=${sessionCookie}` } });
    const code = new URL(String(silent.headers.location)).searchParams.get('code');
    expect(code, String(silent.headers.location)).toBeTruthy();
    const body = jsonOf(await exchangeCode(sentinel, code as string, verifier));
    expect(userClaimsOf(body.id_token)).toEqual({ name: ALICE.name });
    expect(await userInfo(sentinel, body.access_token)).toEqual({ sub: USER_ID, email: ALICE.email });
  });

  it('a failing hook at the token endpoint is server_error to onError with the code unspent, so a retry works', async () => {
    const errors: unknown[] = [];
    const failing = { now: true };
    const sentinel = makeSentinel({
      users: {
        authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null),
        claims: async () => {
          if (failing.now) throw new Error('directory down');
          return ALICE;
        },
      },
      onError: (error) => void errors.push(error),
    });
    const { verifier, challenge } = pkcePair();
    const params = { scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', claims: REQUEST };
    const { interaction } = await startInteraction(sentinel, authorizeQuery(params));
    const csrf = await openLogin(sentinel, interaction);
    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    const code = new URL(String(signedIn.headers.location)).searchParams.get('code') as string;
    const refused = await exchangeCode(sentinel, code, verifier);
    expect(refused.status).toBe(500);
    expect(jsonOf(refused).error).toBe('server_error');
    expect(refused.body).not.toContain('directory down');
    expect(errors).toHaveLength(1);
    failing.now = false;
    const retried = await exchangeCode(sentinel, code, verifier);
    expect(retried.status, retried.body).toBe(200);
    expect(userClaimsOf(jsonOf(retried).id_token)).toEqual({ name: ALICE.name });
  });

  it('changes nothing without the parameter: the hook is asked as before and the access token names no claims', async () => {
    const { sentinel, asked } = claimsSentinel();
    const tokens = await tokensFor(sentinel, undefined, 'openid email');
    expect(claimsOf(String(tokens.access_token))).not.toHaveProperty('userinfo_claims');
    expect(userClaimsOf(tokens.id_token)).toEqual({});
    expect(await userInfo(sentinel, tokens.access_token)).toEqual({ sub: USER_ID, email: ALICE.email, email_verified: true });
    expect(asked).toEqual([{ accountId: ACCOUNT, userId: USER_ID, scopes: ['openid', 'email'] }]);
  });
});
