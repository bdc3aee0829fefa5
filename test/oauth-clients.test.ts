/**
 * Two real client libraries drive the server unmodified: oauth4webapi (discovery, authorization URL with PKCE,
 * callback validation including RFC 9207 `iss`, code exchange, refresh, introspection, revocation) and
 * simple-oauth2 (client credentials with body authentication, as the platform's own SDKs call it).
 */
import * as oauth from 'oauth4webapi';
// @ts-expect-error simple-oauth2 ships no type declarations (and @types/simple-oauth2 is not a dependency)
import { ClientCredentials as UntypedClientCredentials } from 'simple-oauth2';
import { afterEach, describe, expect, it } from 'vitest';
import { createSentinel, type Sentinel } from '../src/index.js';
import {
  baseOptions,
  ACCOUNT,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  PASSWORD,
  REDIRECT_URI,
  USER_ID,
  USERNAME,
} from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { codeFor } from './helpers/oauth.js';

/** The part of simple-oauth2's ClientCredentials this test uses. */
interface SimpleAccessToken {
  token: Record<string, unknown>;
  expired(): boolean;
}
const ClientCredentials = UntypedClientCredentials as new (config: {
  client: { id: string; secret: string };
  auth: { tokenHost: string; tokenPath: string };
  options: { authorizationMethod: 'body' | 'header' };
}) => { getToken(params: Record<string, string>): Promise<SimpleAccessToken> };

const host = HOSTS[0]!;
const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function start(): Promise<{ sentinel: Sentinel; url: string }> {
  const sentinel = createSentinel(baseOptions());
  const mounted = await host.mount(sentinel);
  open.push(mounted);
  return { sentinel, url: mounted.url };
}

/** The issuer is http://localhost; the server listens on an ephemeral port: route the library's requests there. */
function clientOptions(url: string): { [oauth.allowInsecureRequests]: true; [oauth.customFetch]: typeof fetch } {
  const fetchVia = ((target: string, init: RequestInit) => fetch(target.replace('http://localhost', url), init)) as typeof fetch;
  return { [oauth.allowInsecureRequests]: true, [oauth.customFetch]: fetchVia };
}

async function discover(url: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(`http://localhost/sentinel/api/account/${ACCOUNT}`);
  const response = await oauth.discoveryRequest(issuer, { ...clientOptions(url), algorithm: 'oauth2' });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** Builds the authorization URL the way an oauth4webapi client does. */
async function authorizationURL(as: oauth.AuthorizationServer): Promise<{ url: URL; verifier: string; state: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('v', '1.0');
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', CLIENT_ID);
  url.searchParams.set('redirect_uri', REDIRECT_URI);
  url.searchParams.set('scope', 'openid');
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url, verifier, state };
}

/** A browser: follows the authorize redirect to the login page, posts the form, returns the callback URL. */
async function signInThroughBrowser(serverURL: string, authorize: URL): Promise<URL> {
  const local = (location: string): string => new URL(location, serverURL).toString().replace('http://localhost', serverURL);
  const toLogin = await fetch(local(authorize.toString()), { redirect: 'manual' });
  expect(toLogin.status).toBe(302);
  const loginURL = local(toLogin.headers.get('location')!);
  expect(loginURL).toContain('/login?interaction=');
  const page = await fetch(loginURL);
  const html = await page.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  expect(csrf).toBeDefined();
  const cookies = page.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  const posted = await fetch(loginURL, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookies === '' ? {} : { cookie: cookies }),
      origin: 'http://localhost',
    },
    body: new URLSearchParams({ csrf_token: csrf!, username: USERNAME, password: PASSWORD }).toString(),
  });
  expect(posted.status).toBe(303);
  return new URL(posted.headers.get('location')!);
}

describe('oauth4webapi', () => {
  const client: oauth.Client = { client_id: CLIENT_ID };
  const clientAuth = oauth.ClientSecretPost(CLIENT_SECRET);

  async function exchangeRefreshRevoke(
    url: string,
    as: oauth.AuthorizationServer,
    callback: URL,
    state: string,
    verifier: string,
  ): Promise<void> {
    const options = clientOptions(url);
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const codeResponse = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT_URI, verifier, options);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, codeResponse);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(oauth.getValidatedIdTokenClaims(tokens)?.sub).toBe(USER_ID);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token!, options),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    const introspection = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, options),
    );
    expect(introspection).toMatchObject({ active: true, sub: USER_ID, client_id: CLIENT_ID });

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token!, options));
    const afterRevocation = await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token!, options);
    await expect(oauth.processRefreshTokenResponse(as, client, afterRevocation)).rejects.toMatchObject({ error: 'invalid_grant' });
  }

  it('discovers the account issuer at the RFC 8414 path-inserted URL', async () => {
    const { url } = await start();
    const as = await discover(url);
    expect(as.issuer).toBe(`http://localhost/sentinel/api/account/${ACCOUNT}`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('authorize → login → callback (iss, state) → code exchange → refresh → introspect → revoke', async () => {
    const { url } = await start();
    const as = await discover(url);
    const { url: authorize, verifier, state } = await authorizationURL(as);
    const callback = await signInThroughBrowser(url, authorize);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    await exchangeRefreshRevoke(url, as, callback, state, verifier);
  });

  it('validates iss and state on a callback built from a directly issued code, and refuses a wrong iss', async () => {
    const { url, sentinel } = await start();
    const as = await discover(url);
    const { url: authorize, verifier, state } = await authorizationURL(as);
    const code = await codeFor(sentinel, { scope: 'openid', codeChallenge: authorize.searchParams.get('code_challenge')! });
    const callback = new URL(REDIRECT_URI);
    callback.search = new URLSearchParams({ code, state, iss: as.issuer }).toString();
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'http://localhost/sentinel/api/account/90210');
    expect(() => oauth.validateAuthResponse(as, client, forged, state)).toThrow();
    const noIss = new URL(callback);
    noIss.searchParams.delete('iss');
    expect(() => oauth.validateAuthResponse(as, client, noIss, state)).toThrow();
    await exchangeRefreshRevoke(url, as, callback, state, verifier);
  });
});

describe('simple-oauth2', () => {
  it('gets a consumer-bound token with body authentication at the v2 path, as the platform SDKs do', async () => {
    const { url, sentinel } = await start();
    const credentials = new ClientCredentials({
      client: { id: CLIENT_ID, secret: CLIENT_SECRET },
      auth: { tokenHost: url, tokenPath: `/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}` },
      options: { authorizationMethod: 'body' },
    });
    const accessToken = await credentials.getToken({});
    expect(accessToken.token.token_type).toBe('Bearer');
    expect(accessToken.token.expires_in).toBe('3600');
    expect(accessToken.expired()).toBe(false);
    const claims = await sentinel.verifyAccessToken(accessToken.token.access_token as string, {
      accountId: ACCOUNT,
      consumerId: CONSUMER_UUID,
    });
    expect(claims.sub).toBe(CONSUMER_UUID);
    const brand = await fetch(`${url}/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`, {
      headers: { authorization: `Bearer ${accessToken.token.access_token as string}` },
    });
    expect(brand.status).toBe(200);
  });

  it('surfaces a wrong secret as an error from the library', async () => {
    const { url } = await start();
    const credentials = new ClientCredentials({
      client: { id: CLIENT_ID, secret: 'wrong' },
      auth: { tokenHost: url, tokenPath: `/sentinel/api/v2/account/${ACCOUNT}/app/token?state=${CONSUMER_UUID}` },
      options: { authorizationMethod: 'body' },
    });
    await expect(credentials.getToken({})).rejects.toMatchObject({ output: { statusCode: 400 } });
  });
});
