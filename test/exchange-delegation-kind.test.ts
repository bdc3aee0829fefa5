/**
 * What `authorizeDelegation` is told about the subject (RFC 8693 §4.1): whether the token is a user's or a
 * consumer's (`subjectKind`, from the token's own claims), and the app a chain began with (`originClientId`), so a
 * host can write "bots act only for consumers" or "only for the messaging app's people" and have it hold at every hop.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DelegationPolicy, DelegationRequest, Sentinel, SentinelOptions } from '../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID, makeSentinel, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { consumerToken, jsonOf, postForm, useRefreshToken } from './helpers/direct-flow.js';
import { codeFor } from './helpers/oauth.js';
import {
  BOT,
  BOT_CLIENT_ID,
  botApp,
  brandJWT,
  brandKey,
  exchangeOptions,
  JWT_BEARER,
  TOKEN_EXCHANGE,
  TOKEN_PATH,
  TYPE,
} from './helpers/exchange.js';

const key = await brandKey();
const SECOND_BOT = 'b0b0b0b0-2222-4333-8444-555555555555';
const SECOND = { client_id: SECOND_BOT, client_secret: CLIENT_SECRET };

function sentinelWith(authorizeDelegation: DelegationPolicy): Sentinel {
  const options: Partial<SentinelOptions> = exchangeOptions(key, { authorizeDelegation });
  return makeSentinel({ ...options, apps: [...(options.apps ?? []), botApp({ clientId: SECOND_BOT })] });
}

/** A user's access token and refresh token of the fixture app, by the code flow. */
async function userTokens(sentinel: Sentinel): Promise<{ accessToken: string; refreshToken: string }> {
  const code = await codeFor(sentinel, { scope: 'read write' });
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
  const response = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
  expect(response.status, response.body).toBe(200);
  return { accessToken: jsonOf(response).access_token as string, refreshToken: jsonOf(response).refresh_token as string };
}

/** The subjects a bot may be handed, each by the grant that issues it. */
const SUBJECTS = {
  async 'a user token of the code grant'(sentinel: Sentinel) {
    return (await userTokens(sentinel)).accessToken;
  },
  async 'a user token of the refresh grant'(sentinel: Sentinel) {
    const response = await useRefreshToken(sentinel, (await userTokens(sentinel)).refreshToken);
    expect(response.status, response.body).toBe(200);
    return jsonOf(response).access_token as string;
  },
  'a consumer token of the v2 endpoint': consumerToken,
  async 'a consumer token of a brand JWT (JWT bearer)'(sentinel: Sentinel) {
    const form = { grant_type: JWT_BEARER, assertion: await brandJWT(key), ...BOT };
    const response = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
    expect(response.status, response.body).toBe(200);
    return jsonOf(response).access_token as string;
  },
  async 'a consumer token of a brand JWT (token exchange)'(sentinel: Sentinel) {
    const form = { grant_type: TOKEN_EXCHANGE, subject_token: await brandJWT(key), subject_token_type: TYPE.idToken, ...BOT };
    const response = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
    expect(response.status, response.body).toBe(200);
    return jsonOf(response).access_token as string;
  },
} as const;

const KIND_OF: Record<keyof typeof SUBJECTS, 'user' | 'consumer'> = {
  'a user token of the code grant': 'user',
  'a user token of the refresh grant': 'user',
  'a consumer token of the v2 endpoint': 'consumer',
  'a consumer token of a brand JWT (JWT bearer)': 'consumer',
  'a consumer token of a brand JWT (token exchange)': 'consumer',
};

function delegate(sentinel: Sentinel, subjectToken: string, client: Record<string, string>) {
  const form = { grant_type: TOKEN_EXCHANGE, subject_token: subjectToken, subject_token_type: TYPE.accessToken, ...client };
  return postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
}

const CASES = (Object.keys(SUBJECTS) as (keyof typeof SUBJECTS)[]).map((name) => [name, KIND_OF[name]] as const);

describe('authorizeDelegation and the kind of subject', () => {
  it.each(CASES)('a policy that refuses consumers and one that refuses users each decide %s as a %s', async (name, kind) => {
    for (const refused of ['consumer', 'user'] as const) {
      const policy = vi.fn<DelegationPolicy>(({ subjectKind }) => subjectKind !== refused);
      const sentinel = sentinelWith(policy);
      // The second bot acts: the JWT-exchanged consumer tokens are the first bot's own.
      const response = await delegate(sentinel, await SUBJECTS[name](sentinel), SECOND);
      expect(policy).toHaveBeenCalledTimes(1);
      expect(policy.mock.calls[0]![0].subjectKind).toBe(kind);
      if (kind === refused) {
        expect(response.status, response.body).toBe(400);
        expect(jsonOf(response)).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/does not allow/) });
      } else {
        expect(response.status, response.body).toBe(200);
      }
    }
  });

  it.each([
    ['user', (sentinel: Sentinel) => SUBJECTS['a user token of the code grant'](sentinel), USER_ID],
    ['consumer', consumerToken, CONSUMER_UUID],
  ] as const)('keeps a %s subject its kind at the second hop, and names the app the chain began with', async (kind, issue, subject) => {
    const policy = vi.fn<DelegationPolicy>(() => true);
    const sentinel = sentinelWith(policy);
    const first = await delegate(sentinel, await issue(sentinel), BOT);
    expect(first.status, first.body).toBe(200);
    const second = await delegate(sentinel, jsonOf(first).access_token as string, SECOND);
    expect(second.status, second.body).toBe(200);
    const base = { accountId: ACCOUNT, subject, subjectKind: kind, originClientId: CLIENT_ID, scope: 'read write', audience: [ACCOUNT] };
    expect(policy.mock.calls.map(([request]) => request)).toEqual<DelegationRequest[]>([
      { ...base, clientId: BOT_CLIENT_ID, subjectClientId: CLIENT_ID, actors: [] },
      { ...base, clientId: SECOND_BOT, subjectClientId: BOT_CLIENT_ID, actors: [BOT_CLIENT_ID] },
    ]);
  });

  it("takes the kind from the subject token, not from the request's parameters", async () => {
    const policy = vi.fn<DelegationPolicy>(({ subjectKind }) => subjectKind === 'consumer');
    const sentinel = sentinelWith(policy);
    const userToken = await SUBJECTS['a user token of the code grant'](sentinel);
    const response = await delegate(sentinel, userToken, { ...BOT, subject_kind: 'consumer', gty: 'client_credentials' });
    expect(response.status, response.body).toBe(400);
    expect(policy.mock.calls[0]![0].subjectKind).toBe('user');
  });
});
