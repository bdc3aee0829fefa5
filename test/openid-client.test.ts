/**
 * openid-client 6 end to end on every host, configured only from the discovered metadata: authorization code
 * with PKCE and nonce, UserInfo, refresh, RP-initiated logout through buildEndSessionUrl, and the client
 * credentials grant at the discovered token endpoint.
 */
import * as client from 'openid-client';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { CLIENT_ID, CLIENT_SECRET, baseOptions, ISSUER, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';
import { ACCOUNT_ISSUER } from './helpers/oauth.js';
import { ALICE, authorizePath, callbackOf, isLoginRedirect, oidcOptions, POST_LOGOUT_URI, submitLogin } from './helpers/oidc.js';

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

for (const host of HOSTS) {
  describe(host.name, () => {
    it('openid-client 6: discovery, code + PKCE + nonce, fetchUserInfo, refresh, buildEndSessionUrl, clientCredentialsGrant', async () => {
      const sentinel = createSentinel(baseOptions(oidcOptions()));
      const mounted = await host.mount(sentinel);
      open.push(mounted);
      // The issuer is http://localhost; the host listens on an ephemeral port, so requests are re-pointed there.
      const rewrite: client.CustomFetch = (url, options) => fetch(url.replace(ISSUER, mounted.url), options as RequestInit);
      const config = await client.discovery(new URL(ACCOUNT_ISSUER), CLIENT_ID, CLIENT_SECRET, client.ClientSecretBasic(CLIENT_SECRET), {
        execute: [client.allowInsecureRequests],
        [client.customFetch]: rewrite,
      });
      expect(config.serverMetadata().userinfo_endpoint).toBe(`${ACCOUNT_ISSUER}/userinfo`);
      expect(config.serverMetadata().end_session_endpoint).toBe(`${ACCOUNT_ISSUER}/end_session`);

      const verifier = client.randomPKCECodeVerifier();
      const nonce = client.randomNonce();
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid profile email',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        nonce,
        state,
      });
      const browser = request.agent(mounted.server);
      const toLogin = await browser.get(`${url.pathname}${url.search}`);
      expect(isLoginRedirect(toLogin)).toBe(true);
      const back = await submitLogin(browser, toLogin.headers.location as string);
      const tokens = await client.authorizationCodeGrant(config, new URL(back.headers.location as string), {
        pkceCodeVerifier: verifier,
        expectedNonce: nonce,
        expectedState: state,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      expect(claims?.sub).toBe(USER_ID);

      const userinfo = await client.fetchUserInfo(config, tokens.access_token, USER_ID);
      expect(userinfo).toMatchObject({ sub: USER_ID, email: ALICE.email, name: ALICE.name });
      expect(userinfo.phone_number).toBeUndefined();

      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token ?? '');
      expect(refreshed.claims()?.sub).toBe(USER_ID);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

      const endSession = client.buildEndSessionUrl(config, {
        id_token_hint: tokens.id_token ?? '',
        post_logout_redirect_uri: POST_LOGOUT_URI,
        state: 'after-logout',
      });
      const loggedOut = await browser.get(`${endSession.pathname}${endSession.search}`);
      expect(loggedOut.status).toBe(303);
      expect(loggedOut.headers.location).toBe(`${POST_LOGOUT_URI}?state=after-logout`);
      expect(callbackOf(await browser.get(authorizePath({ prompt: 'none' }))).get('error')).toBe('login_required');

      const app = await client.clientCredentialsGrant(config);
      const appClaims = await sentinel.verifyAccessToken(app.access_token);
      expect(appClaims).toMatchObject({ sub: CLIENT_ID, gty: 'client_credentials', token_use: 'app' });
    });
  });
}
