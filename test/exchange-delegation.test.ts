/**
 * Delegation by token exchange (RFC 8693 §4.1): a client exchanges an access token of this service for one that
 * names it as the actor. The delegated token keeps the subject, narrows (never widens) scope, audience and
 * lifetime, stays on the user's grant, and the guard hands `act` to the route. One named test per refusal; each was
 * run with its check removed and failed (see the note of issue 32).
 */
import { decodeJwt } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sentinel, SentinelOptions } from '../src/index.js';
import {
  ACCOUNT,
  basic,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  REDIRECT_URI,
  USER_ID,
  appTokenPath,
} from './helpers/fixtures.js';
import { call, jsonOf, postForm } from './helpers/direct-flow.js';
import { contextOf } from '../src/http/context.js';
import { appPresence } from '../src/guard/app-presence.js';
import { verifiedTokenCache } from '../src/guard/verified-token-cache.js';
import { INITIAL_ACCESS_TOKEN, manageClient, registerClient } from './helpers/registration-client.js';
import { codeFor } from './helpers/oauth.js';
import { BOT, BOT_CLIENT_ID, botApp, brandKey, exchangeOptions, TOKEN_EXCHANGE, TOKEN_PATH, TYPE } from './helpers/exchange.js';

const key = await brandKey();
const SECOND_BOT = 'b0b0b0b0-2222-4333-8444-555555555555';
const THIRD_BOT = 'b0b0b0b0-3333-4444-8555-666666666666';
const FOURTH_BOT = 'b0b0b0b0-4444-4555-8666-777777777777';

function sentinelWith(overrides: Partial<SentinelOptions> = {}): Sentinel {
  const options = exchangeOptions(key, overrides);
  const extra = [SECOND_BOT, THIRD_BOT, FOURTH_BOT].map((clientId) => botApp({ clientId }));
  return makeSentinel({ ...options, apps: [...(options.apps ?? []), ...extra], ...overrides });
}

afterEach(() => {
  vi.useRealTimers();
});

/**
 * A user's access token of the confidential app (code flow through the code contract); `signIn` sets what the
 * code records of the sign-in (its `amr`, …).
 */
async function userToken(
  sentinel: Sentinel,
  scope = 'read write',
  signIn: Parameters<typeof codeFor>[1] = {},
): Promise<{ accessToken: string; refreshToken: string }> {
  const code = await codeFor(sentinel, { scope, ...signIn });
  const response = await postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    }).toString(),
  );
  expect(response.status, response.body).toBe(200);
  const body = jsonOf(response);
  return { accessToken: body.access_token as string, refreshToken: body.refresh_token as string };
}

async function consumerToken(sentinel: Sentinel): Promise<string> {
  const response = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
    headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
  });
  return jsonOf(response).access_token as string;
}

function delegate(sentinel: Sentinel, subjectToken: string, extra: Record<string, string> = {}, client: Record<string, string> = BOT) {
  return postForm(
    sentinel,
    TOKEN_PATH,
    new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: subjectToken,
      subject_token_type: TYPE.accessToken,
      ...client,
      ...extra,
    }).toString(),
  );
}

const asBot = (clientId: string) => ({ client_id: clientId, client_secret: CLIENT_SECRET });

async function expectRefused(
  response: Awaited<ReturnType<typeof delegate>>,
  error: string,
  description: RegExp,
  token?: string,
): Promise<void> {
  expect(response.status, response.body).toBe(400);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(jsonOf(response).error).toBe(error);
  expect(String(jsonOf(response).error_description)).toMatch(description);
  if (token !== undefined) expect(response.body).not.toContain(token.split('.')[1]);
}

describe('delegation of a user token', () => {
  it('keeps the subject, names the client in act, stays within the subject, and answers per §2.2.1', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const subject = decodeJwt(accessToken);
    const response = await delegate(sentinel, accessToken, { scope: 'read' });
    expect(response.status, response.body).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = jsonOf(response);
    expect(body).toMatchObject({ issued_token_type: TYPE.accessToken, token_type: 'Bearer', scope: 'read' });
    const claims = decodeJwt(body.access_token as string);
    expect(claims).toMatchObject({
      sub: USER_ID,
      client_id: BOT_CLIENT_ID,
      act: { sub: BOT_CLIENT_ID },
      scope: 'read',
      aud: subject.aud,
      gid: subject.gid,
    });
    expect(claims.exp as number).toBeLessThanOrEqual(subject.exp as number);
    const checked = await sentinel.checkBearer(`Bearer ${body.access_token as string}`, { accountId: ACCOUNT });
    expect(checked.ok && checked.claims.act).toEqual({ sub: BOT_CLIENT_ID });
    const introspected = await postForm(
      sentinel,
      `${TOKEN_PATH}/introspect`,
      new URLSearchParams({ token: body.access_token as string, ...BOT }).toString(),
    );
    expect(jsonOf(introspected)).toMatchObject({ active: true, sub: USER_ID, client_id: BOT_CLIENT_ID, act: { sub: BOT_CLIENT_ID } });
  });

  it("carries the subject's sign-in (acr, amr): a step-up route the subject token meets accepts the delegation", async () => {
    const sentinel = sentinelWith();
    const { accessToken: subjectToken } = await userToken(sentinel, 'read write', { amr: ['pwd', 'otp', 'mfa'] });
    expect(decodeJwt(subjectToken).acr).toBe('urn:sentinel:acr:mfa');
    const response = await delegate(sentinel, subjectToken);
    expect(response.status, response.body).toBe(200);
    const delegated = jsonOf(response).access_token as string;
    expect(decodeJwt(delegated)).toMatchObject({ acr: 'urn:sentinel:acr:mfa', amr: ['pwd', 'otp', 'mfa'], act: { sub: BOT_CLIENT_ID } });
    const checked = await sentinel.checkBearer(`Bearer ${delegated}`, { accountId: ACCOUNT, acrValues: 'urn:sentinel:acr:mfa' });
    expect(checked.ok).toBe(true);
    const introspected = await postForm(sentinel, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token: delegated, ...BOT }).toString());
    expect(jsonOf(introspected)).toMatchObject({ active: true, acr: 'urn:sentinel:acr:mfa' });
  });

  it('never outlives the subject token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const subjectExp = decodeJwt(accessToken).exp as number;
    vi.setSystemTime(Date.now() + 600_000);
    const response = await delegate(sentinel, accessToken);
    expect(response.status, response.body).toBe(200);
    const claims = decodeJwt(jsonOf(response).access_token as string);
    expect(claims.exp).toBe(subjectExp);
    expect(jsonOf(response).expires_in).toBe(subjectExp - Math.floor(Date.now() / 1000));
  });

  it('never outlives the subject token when it expires while the host policy decides: refused, nothing issued', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let subjectExp = 0;
    const onEvent = vi.fn();
    const sentinel = sentinelWith({
      onEvent,
      // A slow policy (a remote call): the subject token expires while it decides.
      authorizeDelegation: async () => {
        vi.setSystemTime((subjectExp + 2) * 1000);
        return true;
      },
    });
    const { accessToken } = await userToken(sentinel);
    subjectExp = decodeJwt(accessToken).exp as number;
    onEvent.mockClear();
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /expired/, accessToken);
    expect(onEvent.mock.calls.some(([event]) => event.type === 'token.exchanged')).toBe(false);
  });

  it('dies with the subject grant: revoking the refresh token stops the delegated token at the guard', async () => {
    const sentinel = sentinelWith();
    const { accessToken, refreshToken } = await userToken(sentinel);
    const delegated = jsonOf(await delegate(sentinel, accessToken)).access_token as string;
    expect((await sentinel.checkBearer(`Bearer ${delegated}`, { accountId: ACCOUNT })).ok).toBe(true);
    const revoke = await postForm(
      sentinel,
      `${TOKEN_PATH}/revoke`,
      new URLSearchParams({ token: refreshToken, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    );
    expect(revoke.status).toBe(200);
    expect((await sentinel.checkBearer(`Bearer ${delegated}`, { accountId: ACCOUNT })).ok).toBe(false);
  });

  it('dies with any token it was delegated from: revoking one (RFC 7009) stops the chain below it, not above', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const first = jsonOf(await delegate(sentinel, accessToken)).access_token as string;
    const second = jsonOf(await delegate(sentinel, first, {}, asBot(SECOND_BOT))).access_token as string;
    const third = jsonOf(await delegate(sentinel, second, {}, asBot(THIRD_BOT))).access_token as string;
    expect(decodeJwt(third).delegated_from).toEqual([decodeJwt(second).jti, decodeJwt(first).jti, decodeJwt(accessToken).jti]);
    const revoke = (token: string, client: Record<string, string>) =>
      postForm(sentinel, `${TOKEN_PATH}/revoke`, new URLSearchParams({ token, token_type_hint: 'access_token', ...client }).toString());
    const introspect = (token: string, client: Record<string, string>) =>
      postForm(sentinel, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token, ...client }).toString());
    const verified = (token: string) =>
      sentinel.verifyAccessToken(token, { accountId: ACCOUNT }).then(
        () => 'accepted',
        (error: { description?: string }) => error.description,
      );
    // The bot revokes its own delegated token: the two made from it stop, the user's token it came from does not.
    expect((await revoke(first, BOT)).status).toBe(200);
    expect(await verified(second)).toBe('the token has been revoked');
    expect((await sentinel.checkBearer(`Bearer ${third}`, { accountId: ACCOUNT })).ok).toBe(false);
    expect(jsonOf(await introspect(third, asBot(THIRD_BOT)))).toEqual({ active: false });
    await expectRefused(await delegate(sentinel, second, {}, asBot(THIRD_BOT)), 'invalid_request', /revoked/, second);
    expect(await verified(accessToken)).toBe('accepted');
    // The user's app revokes the subject token: a token delegated from it directly stops as well.
    const direct = jsonOf(await delegate(sentinel, accessToken, {}, asBot(FOURTH_BOT))).access_token as string;
    expect(await verified(direct)).toBe('accepted');
    expect((await revoke(accessToken, { client_id: CLIENT_ID, client_secret: CLIENT_SECRET })).status).toBe(200);
    expect(await verified(direct)).toBe('the token has been revoked');
    expect((await sentinel.checkBearer(`Bearer ${direct}`, { accountId: ACCOUNT })).ok).toBe(false);
    expect(jsonOf(await introspect(direct, asBot(FOURTH_BOT)))).toEqual({ active: false });
  });

  it('nests act for a delegation of a delegation, up to three actors', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const first = jsonOf(await delegate(sentinel, accessToken)).access_token as string;
    const second = jsonOf(await delegate(sentinel, first, {}, asBot(SECOND_BOT))).access_token as string;
    const third = jsonOf(await delegate(sentinel, second, {}, asBot(THIRD_BOT))).access_token as string;
    expect(decodeJwt(third).act).toEqual({ sub: THIRD_BOT, act: { sub: SECOND_BOT, act: { sub: BOT_CLIENT_ID } } });
    const checked = await sentinel.checkBearer(`Bearer ${third}`, { accountId: ACCOUNT });
    expect(checked.ok).toBe(true);
    await expectRefused(await delegate(sentinel, third, {}, asBot(FOURTH_BOT)), 'invalid_request', /deeper than 3/, third);
  });

  it('with an audience function of the client, the delegated tokens keep the subject app audience and pass the guard', async () => {
    const sentinel = sentinelWith({ audience: ({ clientId }) => `api:${clientId}` });
    for (const subjectToken of [(await userToken(sentinel)).accessToken, await consumerToken(sentinel)]) {
      const consumer = decodeJwt(subjectToken).gty === 'client_credentials' ? { consumerId: CONSUMER_UUID } : {};
      const first = await delegate(sentinel, subjectToken);
      expect(first.status, first.body).toBe(200);
      const delegated = jsonOf(first).access_token as string;
      expect(decodeJwt(delegated)).toMatchObject({ aud: `api:${CLIENT_ID}`, client_id: BOT_CLIENT_ID, grant_client_id: CLIENT_ID });
      await expect(sentinel.verifyAccessToken(delegated, { accountId: ACCOUNT, ...consumer })).resolves.toMatchObject({
        act: { sub: BOT_CLIENT_ID },
      });
      expect((await sentinel.checkBearer(`Bearer ${delegated}`, { accountId: ACCOUNT, ...consumer })).ok).toBe(true);
      // The account's audience of the subject's app is no RFC 8707 resource of the next hop either.
      const second = await delegate(sentinel, delegated, {}, asBot(SECOND_BOT));
      expect(second.status, second.body).toBe(200);
      const redelegated = jsonOf(second).access_token as string;
      expect(decodeJwt(redelegated).aud).toBe(`api:${CLIENT_ID}`);
      expect((await sentinel.checkBearer(`Bearer ${redelegated}`, { accountId: ACCOUNT, ...consumer })).ok).toBe(true);
    }
    // The actor's own audience is not the delegated token's: no widening through the function.
    const { accessToken } = await userToken(sentinel);
    await expectRefused(await delegate(sentinel, accessToken, { audience: `api:${BOT_CLIENT_ID}` }), 'invalid_target', /audience/);
  });

  it('emits token.exchanged with subject and actor, never a token', async () => {
    const events: Record<string, unknown>[] = [];
    const sentinel = sentinelWith({ onEvent: (event) => events.push(event as never) });
    const { accessToken } = await userToken(sentinel);
    expect((await delegate(sentinel, accessToken)).status).toBe(200);
    expect(events.find((event) => event.type === 'token.exchanged')).toMatchObject({
      grantType: TOKEN_EXCHANGE,
      subject: USER_ID,
      actor: BOT_CLIENT_ID,
      clientId: BOT_CLIENT_ID,
    });
    expect(JSON.stringify(events)).not.toMatch(/eyJ/);
  });

  it("accepts an actor_token that is the requesting client's own app token", async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const own = await postForm(sentinel, TOKEN_PATH, new URLSearchParams({ grant_type: 'client_credentials', ...BOT }).toString());
    const actorToken = jsonOf(own).access_token as string;
    const response = await delegate(sentinel, accessToken, { actor_token: actorToken, actor_token_type: TYPE.accessToken });
    expect(response.status, response.body).toBe(200);
  });
});

describe('delegated tokens at UserInfo', () => {
  it("answers a delegated user token with the claims of its narrowed scope, and refuses a consumer's", async () => {
    const options = exchangeOptions(key);
    const sentinel = makeSentinel({
      ...options,
      // The user's app may release profile and email (a code exchange issues no more than its app's scope); the bot
      // may act with email only, so the delegation narrows.
      apps: (options.apps ?? []).map((app) =>
        app.clientId === BOT_CLIENT_ID
          ? { ...app, scope: 'openid email read' }
          : app.clientId === CLIENT_ID
            ? { ...app, scope: 'profile email read write' }
            : app,
      ),
      users: {
        authenticate: async () => null,
        claims: async () => ({ name: 'Alice', email: 'alice@example.com', email_verified: true }),
      },
    });
    const delegated = await delegate(sentinel, (await userToken(sentinel, 'openid profile email read')).accessToken);
    expect(jsonOf(delegated).scope).toBe('openid email read');
    const userinfo = (token: string) =>
      call(sentinel, { path: `/sentinel/api/account/${ACCOUNT}/userinfo`, headers: { authorization: `Bearer ${token}` } });
    const answered = await userinfo(jsonOf(delegated).access_token as string);
    expect(answered.status, answered.body).toBe(200);
    expect(jsonOf(answered)).toEqual({ sub: USER_ID, email: 'alice@example.com', email_verified: true });
    const consumer = await delegate(sentinel, await consumerToken(sentinel));
    const refused = await userinfo(jsonOf(consumer).access_token as string);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });
});

describe('delegation of a consumer-bound token', () => {
  it('gives a consumer-bound token with act, which the guard accepts for that consumer and hands act to the route', async () => {
    const sentinel = sentinelWith();
    const response = await delegate(sentinel, await consumerToken(sentinel));
    expect(response.status, response.body).toBe(200);
    const token = jsonOf(response).access_token as string;
    expect(decodeJwt(token)).toMatchObject({ sub: CONSUMER_UUID, gty: 'client_credentials', act: { sub: BOT_CLIENT_ID } });
    const checked = await sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
    expect(checked.ok && checked.claims.act).toEqual({ sub: BOT_CLIENT_ID });
  });

  it('stops at the bearer guard with the app the subject came from, also when the guard answers from its caches', async () => {
    // The subject's app registered itself (RFC 7591), so that it can delete itself through its configuration endpoint.
    const sentinel = sentinelWith({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
    const origin = await registerClient(sentinel, { grant_types: ['client_credentials'] });
    const subject = await postForm(sentinel, appTokenPath(), 'grant_type=client_credentials', {
      headers: { authorization: basic(origin.client_id, origin.client_secret as string) },
    });
    expect(subject.status, subject.body).toBe(200);
    const response = await delegate(sentinel, jsonOf(subject).access_token as string);
    expect(response.status, response.body).toBe(200);
    const token = jsonOf(response).access_token as string;
    // No grant to read: the guard may answer this token from its verified-token and app-presence caches.
    expect(decodeJwt(token)).toMatchObject({ client_id: BOT_CLIENT_ID, grant_client_id: origin.client_id });
    expect(decodeJwt(token).gid).toBeUndefined();
    const expected = { accountId: ACCOUNT, consumerId: CONSUMER_UUID };
    expect((await sentinel.checkBearer(`Bearer ${token}`, expected)).ok).toBe(true);
    expect((await sentinel.checkBearer(`Bearer ${token}`, expected)).ok).toBe(true);
    expect(verifiedTokenCache(contextOf(sentinel))?.has(token)).toBe(true);
    // The subject's app deletes itself (RFC 7592 §2.3); the acting app is still there and still known to the guard.
    expect((await manageClient(sentinel, 'DELETE', origin)).status).toBe(204);
    const refused = await sentinel.checkBearer(`Bearer ${token}`, expected);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.response.status).toBe(401);
  });
});

describe('delegation refusals (400, nothing issued, the token never echoed)', () => {
  it("refuses another account's token", async () => {
    const sentinel = sentinelWith();
    const other = await postForm(
      sentinel,
      `/sentinel/api/account/${OTHER_ACCOUNT}/token`,
      new URLSearchParams({ grant_type: 'client_credentials', client_id: OTHER_CLIENT_ID, client_secret: OTHER_SECRET }).toString(),
    );
    expect(other.status).toBe(200);
    // Another account's consumer-bound token, from the v2 endpoint of that account.
    const foreign = await postForm(sentinel, appTokenPath(CONSUMER_UUID, OTHER_ACCOUNT), 'grant_type=client_credentials', {
      headers: { authorization: basic(OTHER_CLIENT_ID, OTHER_SECRET) },
    });
    const token = jsonOf(foreign).access_token as string;
    await expectRefused(await delegate(sentinel, token), 'invalid_request', /another account/, token);
  });

  it('refuses an expired subject token', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    vi.setSystemTime(Date.now() + 3_700_000);
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /expired/, accessToken);
  });

  it('refuses a subject token whose grant was revoked', async () => {
    const sentinel = sentinelWith();
    const { accessToken, refreshToken } = await userToken(sentinel);
    await postForm(
      sentinel,
      `${TOKEN_PATH}/revoke`,
      new URLSearchParams({ token: refreshToken, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
    );
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /revoked/, accessToken);
  });

  it('refuses a broader scope (invalid_scope)', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel, 'read');
    await expectRefused(await delegate(sentinel, accessToken, { scope: 'read write' }), 'invalid_scope', /write/);
    // A token outside the RFC 6749 §3.3 characters is refused as such, never echoed (RFC 6749 §5.2's charset).
    const odd = await delegate(sentinel, accessToken, { scope: 'read "wr\\ite"\té' });
    await expectRefused(odd, 'invalid_scope', /^scope must be space-separated scope tokens/);
    expect(String(jsonOf(odd).error_description)).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
  });

  it('refuses an audience or resource the subject token is not for (invalid_target)', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    await expectRefused(await delegate(sentinel, accessToken, { audience: 'https://api.other.example' }), 'invalid_target', /audience/);
    await expectRefused(await delegate(sentinel, accessToken, { resource: 'https://api.other.example' }), 'invalid_target', /resource/);
    expect((await delegate(sentinel, accessToken, { audience: ACCOUNT })).status).toBe(200);
  });

  it('refuses what the host hook refuses, and tells it who asks to act for whom', async () => {
    const authorizeDelegation = vi.fn(() => false);
    const sentinel = sentinelWith({ authorizeDelegation });
    const { accessToken } = await userToken(sentinel);
    await expectRefused(await delegate(sentinel, accessToken, { scope: 'read' }), 'invalid_request', /does not allow/);
    expect(authorizeDelegation).toHaveBeenCalledWith({
      accountId: ACCOUNT,
      clientId: BOT_CLIENT_ID,
      subject: USER_ID,
      subjectKind: 'user',
      subjectClientId: CLIENT_ID,
      originClientId: CLIENT_ID,
      actors: [],
      scope: 'read',
      audience: [ACCOUNT],
    });
  });

  it("checks the client's DPoP proof before it asks the host hook: a missing or bad one never reaches it", async () => {
    const authorizeDelegation = vi.fn(() => true);
    const options = exchangeOptions(key, { authorizeDelegation });
    const sentinel = makeSentinel({
      ...options,
      apps: [...(options.apps ?? []), botApp({ clientId: SECOND_BOT, requireDPoP: true })],
    });
    const { accessToken } = await userToken(sentinel);
    await expectRefused(await delegate(sentinel, accessToken, {}, asBot(SECOND_BOT)), 'invalid_dpop_proof', /DPoP proof/);
    const forged = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({
        grant_type: TOKEN_EXCHANGE,
        subject_token: accessToken,
        subject_token_type: TYPE.accessToken,
        ...asBot(SECOND_BOT),
      }).toString(),
      { headers: { dpop: 'eyJhbGciOiJub25lIn0.e30.' } },
    );
    await expectRefused(forged, 'invalid_dpop_proof', /./);
    expect(authorizeDelegation).not.toHaveBeenCalled();
  });

  it('tells the host hook the audience the delegated token would carry, which it may refuse', async () => {
    const seen: (readonly string[])[] = [];
    const sentinel = sentinelWith({
      audience: ({ clientId }) => `api:${clientId}`,
      authorizeDelegation: ({ audience }) => {
        seen.push(audience);
        return !audience.includes(`api:${CLIENT_ID}`);
      },
    });
    const { accessToken } = await userToken(sentinel);
    // The subject token is for the app's own API: a host that keeps bots away from it refuses the delegation.
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /does not allow/);
    expect(seen).toEqual([[`api:${CLIENT_ID}`]]);
  });

  it('issues the audience the host hook approved, whatever the hook does to the list it was handed', async () => {
    const sentinel = sentinelWith({
      // A plain JavaScript policy that appends to the list it was told (to log it with the client, say).
      authorizeDelegation: ((request: { audience: string[] }) => {
        request.audience.push('https://admin.example.com');
        return true;
      }) as never,
    });
    const { accessToken } = await userToken(sentinel);
    for (const narrowing of [{}, { audience: ACCOUNT }] as Record<string, string>[]) {
      const response = await delegate(sentinel, accessToken, narrowing);
      expect(response.status, response.body).toBe(200);
      expect(decodeJwt(jsonOf(response).access_token as string).aud).toBe(ACCOUNT);
    }
  });

  it('is a server_error, nothing issued, when the host hook throws', async () => {
    const onError = vi.fn();
    const sentinel = sentinelWith({
      authorizeDelegation: () => {
        throw new Error('policy store down');
      },
      onError,
    });
    const { accessToken } = await userToken(sentinel);
    const response = await delegate(sentinel, accessToken);
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('is a server_error, reported, nothing issued, when the host hook fails with an OAuthError', async () => {
    const onError = vi.fn();
    const onEvent = vi.fn();
    let sentinel: Sentinel | undefined;
    // A policy that asks the service's own verifier about something (here a token it cannot verify): the refusal it
    // meets is the policy's failure, not a reason to tell the bot its request or its credentials were bad.
    sentinel = sentinelWith({
      onError,
      onEvent,
      authorizeDelegation: async () => (await sentinel?.verifyAccessToken('not-a-token')) !== undefined,
    });
    const { accessToken } = await userToken(sentinel);
    onEvent.mockClear();
    const response = await delegate(sentinel, accessToken);
    expect(response.status, response.body).toBe(500);
    expect(jsonOf(response)).toEqual({ error: 'server_error', error_description: 'the server could not complete the request' });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toMatchObject({ code: 'invalid_token' });
    expect(onEvent.mock.calls.some(([event]) => event.type === 'token.exchanged')).toBe(false);
  });

  it.each([
    ['the string "no"', 'no'],
    ['an object', { allowed: false }],
    ['undefined (a forgotten return)', undefined],
  ])('is a server_error, nothing issued, when the host hook answers %s instead of a boolean', async (_name, answer) => {
    const onError = vi.fn();
    const onEvent = vi.fn();
    const sentinel = sentinelWith({ authorizeDelegation: (() => answer) as never, onError, onEvent });
    const { accessToken } = await userToken(sentinel);
    onEvent.mockClear();
    const response = await delegate(sentinel, accessToken);
    expect(response.status).toBe(500);
    expect(jsonOf(response).error).toBe('server_error');
    expect(jsonOf(response).access_token).toBeUndefined();
    expect(onError).toHaveBeenCalledTimes(1);
    expect(String(onError.mock.calls[0]![0])).toContain('authorizeDelegation() must return true or false');
    expect(onEvent.mock.calls.some(([event]) => event.type === 'token.exchanged')).toBe(false);
  });

  it('refuses an app token as subject', async () => {
    const sentinel = sentinelWith();
    const app = jsonOf(
      await postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      ),
    );
    await expectRefused(await delegate(sentinel, app.access_token as string), 'invalid_request', /not an app token/);
  });

  it('refuses a subject token that is not one of ours', async () => {
    const sentinel = sentinelWith();
    await expectRefused(await delegate(sentinel, 'not-a-token'), 'invalid_request', /not a live access token/);
  });

  it("refuses an actor_token that is not the requesting client's app token", async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const others = jsonOf(
      await postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
      ),
    );
    await expectRefused(
      await delegate(sentinel, accessToken, { actor_token: others.access_token as string, actor_token_type: TYPE.accessToken }),
      'invalid_request',
      /actor_token must be an app token of the requesting client/,
    );
    await expectRefused(
      await delegate(sentinel, accessToken, { actor_token: accessToken, actor_token_type: TYPE.jwt }),
      'invalid_request',
      /actor_token_type/,
    );
  });

  it('refuses an app not registered for token exchange (unauthorized_client)', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    await expectRefused(
      await delegate(sentinel, accessToken, {}, { client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
      'unauthorized_client',
      /not registered/,
    );
  });
});

describe('what a delegation may not carry on or widen', () => {
  it('stops with the app the subject came from: its deletion refuses the delegated token and a new exchange', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel);
    const delegated = jsonOf(await delegate(sentinel, accessToken)).access_token as string;
    expect(decodeJwt(delegated).grant_client_id).toBe(CLIENT_ID);
    const context = contextOf(sentinel);
    await context.apps.deleteApp?.(ACCOUNT, CLIENT_ID);
    appPresence(context).forget(ACCOUNT, CLIENT_ID);
    await expect(sentinel.verifyAccessToken(delegated, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
    const introspected = await postForm(sentinel, `${TOKEN_PATH}/introspect`, new URLSearchParams({ token: delegated, ...BOT }).toString());
    expect(jsonOf(introspected)).toEqual({ active: false });
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /not a live access token/);
  });

  it('stops with every actor of its chain: deleting a bot midway refuses what was delegated through it', async () => {
    const sentinel = sentinelWith();
    const check = (token: string, consumerId?: string) =>
      sentinel.checkBearer(`Bearer ${token}`, { accountId: ACCOUNT, ...(consumerId === undefined ? {} : { consumerId }) });
    // A user's chain (its grant is read on each check) and a consumer-bound one (its revocation markers are read on each
    // check, its signature served by the verified-token cache).
    const { accessToken } = await userToken(sentinel);
    const userChain = jsonOf(
      await delegate(sentinel, jsonOf(await delegate(sentinel, accessToken)).access_token as string, {}, asBot(SECOND_BOT)),
    );
    const consumerFirst = jsonOf(await delegate(sentinel, await consumerToken(sentinel))).access_token as string;
    const consumerChain = jsonOf(await delegate(sentinel, consumerFirst, {}, asBot(SECOND_BOT))).access_token as string;
    const userSecond = userChain.access_token as string;
    expect(decodeJwt(consumerChain).act).toEqual({ sub: SECOND_BOT, act: { sub: BOT_CLIENT_ID } });
    // Checked once while every app exists: the token and its apps are now in the guard's caches.
    expect((await check(userSecond)).ok).toBe(true);
    expect((await check(consumerChain, CONSUMER_UUID)).ok).toBe(true);
    const context = contextOf(sentinel);
    await context.apps.deleteApp?.(ACCOUNT, BOT_CLIENT_ID);
    appPresence(context).forget(ACCOUNT, BOT_CLIENT_ID);
    await expect(sentinel.verifyAccessToken(userSecond, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
    expect((await check(userSecond)).ok).toBe(false);
    await expect(sentinel.verifyAccessToken(consumerChain, { accountId: ACCOUNT })).rejects.toMatchObject({ code: 'invalid_token' });
    expect((await check(consumerChain, CONSUMER_UUID)).ok).toBe(false);
    const introspected = await postForm(
      sentinel,
      `${TOKEN_PATH}/introspect`,
      new URLSearchParams({ token: userSecond, ...asBot(SECOND_BOT) }).toString(),
    );
    expect(jsonOf(introspected)).toEqual({ active: false });
    await expectRefused(await delegate(sentinel, userSecond, {}, asBot(THIRD_BOT)), 'invalid_request', /not a live access token/);
  });

  it("stays within the acting app's registered scope, whatever the subject's", async () => {
    const options = exchangeOptions(key);
    const apps = (options.apps ?? []).map((app) => (app.clientId === BOT_CLIENT_ID ? { ...app, scope: 'read' } : app));
    const sentinel = makeSentinel({ ...options, apps });
    const { accessToken } = await userToken(sentinel, 'read write');
    const refused = await delegate(sentinel, accessToken, { scope: 'write' });
    expect(jsonOf(refused).error).toBe('invalid_scope');
    // No scope asked for, and the bot's registration narrowed the subject's: the answer must say so (RFC 8693 §2.2.1).
    const unnamed = jsonOf(await delegate(sentinel, accessToken));
    expect(decodeJwt(unnamed.access_token as string).scope).toBe('read');
    expect(unnamed.scope).toBe('read');
  });

  it('names the issued scope in the answer even when nothing narrowed it', async () => {
    const sentinel = sentinelWith();
    const { accessToken } = await userToken(sentinel, 'read write');
    const unnamed = jsonOf(await delegate(sentinel, accessToken));
    expect(unnamed.scope).toBe('read write');
    expect(decodeJwt(unnamed.access_token as string).scope).toBe('read write');
  });

  it('refuses a subject expired within the clock tolerance: a chain never outlives its subject', async () => {
    const sentinel = sentinelWith({ clockTolerance: 300 });
    const { accessToken } = await userToken(sentinel);
    vi.useFakeTimers({ now: ((decodeJwt(accessToken).exp as number) + 10) * 1000, toFake: ['Date'] });
    await expectRefused(await delegate(sentinel, accessToken), 'invalid_request', /has expired/);
  });
});
