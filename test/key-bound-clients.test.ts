/**
 * Real clients against DPoP, private_key_jwt and PAR, unmodified: openid-client 6 on every host (pushed request
 * with a DPoP key, browser sign-in, code exchange, refresh, consumer-bound token, guarded API), and oauth4webapi's
 * DPoP on the v2 consumer-bound endpoint.
 */
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT, CONSUMER_UUID, USER_ID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { ACCOUNT_ISSUER, clientKey, dpopProof, KEYED_CLIENT_ID, KEYED_REDIRECT_URI, keyedSentinel, signIn } from './helpers/key-bound.js';

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The issuer is http://localhost; the server listens on an ephemeral port: route the library's requests there. */
function via(url: string): typeof fetch {
  return ((target: string, init: RequestInit) => fetch(String(target).replace('http://localhost', url), init)) as typeof fetch;
}

const V2_TOKEN = `http://localhost/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}`;

describe.each(HOSTS)('openid-client 6 on $name', (host) => {
  it('PAR with a DPoP key, PrivateKeyJwt, code → DPoP tokens → refresh → consumer token → guarded API', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key, { requireDPoP: true, requirePushedAuthorizationRequests: true });
    const mounted = await host.mount(sentinel);
    open.push(mounted);
    const fetchVia = via(mounted.url);
    const config = await client.discovery(new URL(ACCOUNT_ISSUER), KEYED_CLIENT_ID, undefined, client.PrivateKeyJwt(key.privateKey), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: fetchVia as never,
    });
    expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${ACCOUNT_ISSUER}/par`);
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toContain('ES256');
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));

    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationURL = await client.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: KEYED_REDIRECT_URI,
        scope: 'openid',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      },
      { DPoP },
    );
    expect([...authorizationURL.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await signIn(mounted.url, authorizationURL.toString());
    expect(callback.origin + callback.pathname).toBe(KEYED_REDIRECT_URI);

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, {
      DPoP,
    });
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.claims()?.sub).toBe(USER_ID);
    const jkt = (JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()) as { cnf?: { jkt?: string } }).cnf
      ?.jkt;
    expect(jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A bound token is no bearer token: without its proof it is refused.
    await expect(sentinel.verifyAccessToken(tokens.access_token)).rejects.toMatchObject({ code: 'invalid_token' });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe('dpop');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    const v2 = new client.Configuration(
      { issuer: ACCOUNT_ISSUER, token_endpoint: V2_TOKEN },
      KEYED_CLIENT_ID,
      undefined,
      client.PrivateKeyJwt(key.privateKey),
    );
    client.allowInsecureRequests(v2);
    v2[client.customFetch] = fetchVia as never;
    const consumer = await client.clientCredentialsGrant(v2, undefined, { DPoP });
    expect(consumer.token_type).toBe('dpop');

    const api = new URL(`${mounted.url}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`);
    const answer = await client.fetchProtectedResource(config, consumer.access_token, api, 'GET', undefined, undefined, { DPoP });
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { claims: { sub: string } }).claims.sub).toBe(CONSUMER_UUID);
    // The same token as a Bearer token is refused with the DPoP challenge.
    const asBearer = await fetch(api, { headers: { authorization: `Bearer ${consumer.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^DPoP .*error="invalid_token"/);
  });
});

describe('openid-client 6 with server nonces', () => {
  it('follows use_dpop_nonce at the token endpoint and at the guarded API', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key, {}, { dpop: { nonce: true } });
    const mounted = await HOSTS[5]!.mount(sentinel);
    open.push(mounted);
    const v2 = new client.Configuration(
      { issuer: ACCOUNT_ISSUER, token_endpoint: V2_TOKEN },
      KEYED_CLIENT_ID,
      undefined,
      client.PrivateKeyJwt(key.privateKey),
    );
    client.allowInsecureRequests(v2);
    v2[client.customFetch] = via(mounted.url) as never;
    const dpopKey = await clientKey();
    const DPoP = client.getDPoPHandle(v2, { privateKey: dpopKey.privateKey, publicKey: dpopKey.publicKey });
    const consumer = await client.clientCredentialsGrant(v2, undefined, { DPoP });
    expect(consumer.token_type).toBe('dpop');
    const api = new URL(`${mounted.url}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`);
    const answer = await client.fetchProtectedResource(v2, consumer.access_token, api, 'GET', undefined, undefined, { DPoP });
    expect(answer.status).toBe(200);
    // The same key's proof without the nonce is told to fetch one (the client above went through this once).
    const ath = createHash('sha256').update(consumer.access_token).digest('base64url');
    const bare = await fetch(api, {
      headers: { authorization: `DPoP ${consumer.access_token}`, dpop: await dpopProof(dpopKey, { htm: 'GET', htu: api.href, ath }) },
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^DPoP .*error="use_dpop_nonce"/);
    expect(bare.headers.get('dpop-nonce')).toMatch(/^[a-z0-9]+\./);
  });
});

describe('oauth4webapi DPoP on the v2 consumer-bound endpoint', () => {
  it('gets a DPoP-bound consumer token with client_secret_post and uses it at the guarded API', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key);
    const mounted = await HOSTS[0]!.mount(sentinel);
    open.push(mounted);
    const as: oauth.AuthorizationServer = { issuer: ACCOUNT_ISSUER, token_endpoint: V2_TOKEN };
    const { CLIENT_ID, CLIENT_SECRET } = await import('./helpers/fixtures.js');
    const c: oauth.Client = { client_id: CLIENT_ID };
    const DPoP = oauth.DPoP(c, await oauth.generateKeyPair('ES256'));
    // Cast: oauth4webapi types customFetch's init more narrowly than the global fetch it forwards to.
    const options = { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: via(mounted.url), DPoP } as never;
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      c,
      oauth.ClientSecretPost(CLIENT_SECRET),
      new URLSearchParams(),
      options,
    );
    const tokens = await oauth.processClientCredentialsResponse(as, c, response);
    expect(tokens.token_type).toBe('dpop');
    const api = new URL(`${mounted.url}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`);
    const used = await oauth.protectedResourceRequest(tokens.access_token, 'GET', api, undefined, undefined, options);
    expect(used.status).toBe(200);
    // Without its proof the bound token is refused, even with the DPoP scheme.
    const unproven = await fetch(api, { headers: { authorization: `DPoP ${tokens.access_token}` } });
    expect(unproven.status).toBe(401);
    expect(unproven.headers.get('www-authenticate')).toMatch(/^DPoP .*error="invalid_dpop_proof"/);
  });
});
