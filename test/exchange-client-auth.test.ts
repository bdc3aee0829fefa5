/**
 * The exchange grants authenticate the client as every grant does, and the account's metadata lists them only when
 * an app of the account has them. A `private_key_jwt` app that requires DPoP proves a consumer by both grants and
 * delegates: each token is bound to the proof's key (`cnf.jkt`, `token_type: DPoP`), and without a proof — or with
 * a wrong client assertion — nothing is issued.
 */
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { GrantType, Sentinel } from '../src/index.js';
import { call, jsonOf, postForm } from './helpers/direct-flow.js';
import { BOT_CLIENT_ID, brandJWT, brandKey, exchangeOptions, JWT_BEARER, TOKEN_EXCHANGE, TOKEN_PATH, TYPE } from './helpers/exchange.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, OTHER_ACCOUNT, REDIRECT_URI } from './helpers/fixtures.js';
import { type ClientKey, clientAssertion, clientKey, dpopProof, KEYED_CLIENT_ID, ASSERTION_TYPE } from './helpers/key-bound.js';
import { codeFor } from './helpers/oauth.js';

const brand = await brandKey();
const TOKEN_URL = `http://localhost${TOKEN_PATH}`;

/** The brand's account with a keyed bot: private_key_jwt, DPoP required, registered for both exchange grants. */
function keyedBotSentinel(key: ClientKey): Sentinel {
  const options = exchangeOptions(brand);
  return makeSentinel({
    ...options,
    apps: [
      ...(options.apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: KEYED_CLIENT_ID,
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [key.publicJwk] },
        requireDPoP: true,
        redirectUris: [],
        grantTypes: [JWT_BEARER, TOKEN_EXCHANGE],
        scope: 'read write',
      },
    ],
  });
}

async function keyedPost(sentinel: Sentinel, key: ClientKey, fields: Record<string, string>, proof: boolean) {
  const body = new URLSearchParams({
    ...fields,
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: await clientAssertion(key),
  }).toString();
  const headers = proof ? { dpop: await dpopProof(key, { htm: 'POST', htu: TOKEN_URL }) } : {};
  return postForm(sentinel, TOKEN_PATH, body, { headers });
}

describe('client authentication of the exchange grants', () => {
  it('a private_key_jwt app that requires DPoP gets DPoP-bound tokens from both grants and from a delegation', async () => {
    const key = await clientKey();
    const sentinel = keyedBotSentinel(key);
    const bearer = await keyedPost(sentinel, key, { grant_type: JWT_BEARER, assertion: await brandJWT(brand) }, true);
    expect(bearer.status, bearer.body).toBe(200);
    expect(jsonOf(bearer).token_type).toBe('DPoP');
    const bearerToken = jsonOf(bearer).access_token as string;
    expect(decodeJwt(bearerToken)).toMatchObject({ client_id: KEYED_CLIENT_ID, cnf: { jkt: key.jkt } });

    const exchanged = await keyedPost(
      sentinel,
      key,
      { grant_type: TOKEN_EXCHANGE, subject_token: await brandJWT(brand), subject_token_type: TYPE.jwt },
      true,
    );
    expect(exchanged.status, exchanged.body).toBe(200);
    expect(jsonOf(exchanged)).toMatchObject({ token_type: 'DPoP', issued_token_type: TYPE.accessToken });
    expect(decodeJwt(jsonOf(exchanged).access_token as string).cnf).toEqual({ jkt: key.jkt });

    // Delegation of a user's (bearer) token: the bot's token is bound to the bot's key.
    const code = await codeFor(sentinel, { scope: 'read write' });
    const user = await postForm(
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
    const delegated = await keyedPost(
      sentinel,
      key,
      { grant_type: TOKEN_EXCHANGE, subject_token: jsonOf(user).access_token as string, subject_token_type: TYPE.accessToken },
      true,
    );
    expect(delegated.status, delegated.body).toBe(200);
    expect(decodeJwt(jsonOf(delegated).access_token as string)).toMatchObject({
      act: { sub: KEYED_CLIENT_ID },
      cnf: { jkt: key.jkt },
    });
  });

  it('refuses the app that requires DPoP without a proof, and a wrong client assertion, issuing nothing', async () => {
    const key = await clientKey();
    const sentinel = keyedBotSentinel(key);
    const jwt = await brandJWT(brand);
    const unproven = await keyedPost(sentinel, key, { grant_type: JWT_BEARER, assertion: jwt }, false);
    expect(unproven.status).toBe(400);
    expect(jsonOf(unproven).error).toBe('invalid_dpop_proof');
    const stranger = await clientKey(key.publicJwk.kid as string);
    const forged = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({
        grant_type: JWT_BEARER,
        assertion: jwt,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await clientAssertion(stranger),
      }).toString(),
    );
    expect(jsonOf(forged).error).toBe('invalid_client');
    // Neither refusal spent the brand JWT's jti: it still works with a proof.
    expect((await keyedPost(sentinel, key, { grant_type: JWT_BEARER, assertion: jwt }, true)).status).toBe(200);
  });

  it('a request refused for its replayed DPoP proof leaves the brand JWT unspent', async () => {
    const key = await clientKey();
    const sentinel = keyedBotSentinel(key);
    const proof = await dpopProof(key, { htm: 'POST', htu: TOKEN_URL });
    const post = async (assertion: string, dpop: string) =>
      postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({
          grant_type: JWT_BEARER,
          assertion,
          client_assertion_type: ASSERTION_TYPE,
          client_assertion: await clientAssertion(key),
        }).toString(),
        { headers: { dpop } },
      );
    expect((await post(await brandJWT(brand), proof)).status).toBe(200);
    const jwt = await brandJWT(brand);
    const replayedProof = await post(jwt, proof);
    expect(jsonOf(replayedProof)).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/already used/) });
    const retried = await post(jwt, await dpopProof(key, { htm: 'POST', htu: TOKEN_URL }));
    expect(retried.status, retried.body).toBe(200);
  });
});

describe('delegation of a key-bound token', () => {
  it('refuses a DPoP-bound subject_token: exchanging it would unbind it from its key', async () => {
    const key = await clientKey();
    const sentinel = keyedBotSentinel(key);
    const bound = await keyedPost(sentinel, key, { grant_type: JWT_BEARER, assertion: await brandJWT(brand) }, true);
    const token = jsonOf(bound).access_token as string;
    expect(decodeJwt(token).cnf).toEqual({ jkt: key.jkt });
    const refused = await keyedPost(
      sentinel,
      key,
      { grant_type: TOKEN_EXCHANGE, subject_token: token, subject_token_type: TYPE.accessToken },
      true,
    );
    expect(refused.status).toBe(400);
    expect(jsonOf(refused)).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/DPoP-bound subject_token/),
    });
    expect(refused.body).not.toContain(token.split('.')[1]);
  });
});

describe('grant_types_supported of the account metadata', () => {
  async function grantTypes(sentinel: Sentinel, accountId: string): Promise<string[]> {
    const response = await call(sentinel, {
      method: 'GET',
      path: `/.well-known/oauth-authorization-server/sentinel/api/account/${accountId}`,
    });
    expect(response.status).toBe(200);
    return jsonOf(response).grant_types_supported as string[];
  }

  it('lists an exchange grant only for an account where an app has it', async () => {
    const options = exchangeOptions(brand);
    const sentinel = makeSentinel({
      ...options,
      apps: (options.apps ?? []).map((app) => (app.clientId === BOT_CLIENT_ID ? { ...app, grantTypes: [JWT_BEARER] } : app)),
    });
    const listed = await grantTypes(sentinel, ACCOUNT);
    expect(listed).toContain(JWT_BEARER);
    expect(listed).not.toContain(TOKEN_EXCHANGE);
    const other = await grantTypes(sentinel, OTHER_ACCOUNT);
    expect(other).not.toContain(JWT_BEARER);
    expect(other).not.toContain(TOKEN_EXCHANGE);
    expect(await grantTypes(makeSentinel(exchangeOptions(brand)), ACCOUNT)).toEqual(expect.arrayContaining([JWT_BEARER, TOKEN_EXCHANGE]));
  });
});

describe('public apps and the exchange grants', () => {
  // A public app could never use them (the token endpoint serves both only to an authenticated client): refused
  // where it is configured or registered, as client_credentials is, not by invalid_client at every request.
  const PUBLIC_CLIENT_ID = 'c0c0c0c0-1111-4222-8333-444444444444';

  it.each<GrantType>([TOKEN_EXCHANGE, JWT_BEARER])('refuses a public app configured for %s', (grant) => {
    const options = exchangeOptions(brand);
    const app = {
      accountId: ACCOUNT,
      clientId: PUBLIC_CLIENT_ID,
      tokenEndpointAuthMethod: 'none' as const,
      redirectUris: [],
      grantTypes: [grant],
    };
    expect(() => makeSentinel({ ...options, apps: [...(options.apps ?? []), app] })).toThrow(
      `apps[${(options.apps ?? []).length}].grantTypes: a public client (tokenEndpointAuthMethod none) cannot use ${grant}`,
    );
  });

  it.each<GrantType>([TOKEN_EXCHANGE, JWT_BEARER])('refuses to register a public app for %s', async (grant) => {
    const sentinel = makeSentinel(exchangeOptions(brand));
    const registered = sentinel.registerApp({ accountId: ACCOUNT, tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [grant] });
    await expect(registered).rejects.toThrow(`app.grantTypes: a public client (tokenEndpointAuthMethod none) cannot use ${grant}`);
    // The confidential registration of the same grant still goes through.
    const confidential = await sentinel.registerApp({ accountId: ACCOUNT, redirectUris: [], grantTypes: [grant] });
    expect(confidential.app.grantTypes).toEqual([grant]);
  });
});
