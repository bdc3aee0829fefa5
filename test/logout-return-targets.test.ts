/**
 * Where the two logout endpoints may send the browser back: an app that registered post-logout redirect URIs is
 * returned only to those, at the platform's logout form as at the end-session endpoint; an app without them, to its
 * redirect URIs; an app gone since it got its ID token (disabled, deleted), nowhere, and the logout goes on.
 */
import { describe, expect, it } from 'vitest';
import { type App, hashClientSecret, MemoryAppStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { APP_B, signInWithSession } from './helpers/logout-flow.js';

const CLIENT = 'c-logout-targets';
const SIGN_IN_CALLBACK = 'https://app.example.com/cb';
const GOODBYE = 'https://app.example.com/bye';

function sentinelWith(postLogoutRedirectUris?: string[]): Sentinel {
  const app = { accountId: ACCOUNT, clientId: CLIENT, tokenEndpointAuthMethod: 'none' as const, redirectUris: [SIGN_IN_CALLBACK] };
  return makeSentinel({ apps: [postLogoutRedirectUris === undefined ? app : { ...app, postLogoutRedirectUris }] });
}

function logout(sentinel: Sentinel, target: string, clientId = CLIENT): Promise<SentinelResponse> {
  return call(sentinel, {
    method: 'POST',
    path: `/sentinel/api/account/${ACCOUNT}/logout`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: target, state: 's' }).toString(),
  });
}

function endSession(sentinel: Sentinel, target: string, clientId = CLIENT): Promise<SentinelResponse> {
  return call(sentinel, {
    path: `/sentinel/api/account/${ACCOUNT}/end_session`,
    query: new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: target, state: 's' }),
  });
}

describe('post-logout return targets', () => {
  it('an app with its own list is returned only to it, by the logout form as by end-session', async () => {
    const sentinel = sentinelWith([GOODBYE]);
    const toCallback = await logout(sentinel, SIGN_IN_CALLBACK);
    expect([toCallback.status, toCallback.headers.location]).toEqual([200, undefined]);
    expect((await endSession(sentinel, SIGN_IN_CALLBACK)).status).toBe(400);
    const toGoodbye = await logout(sentinel, GOODBYE);
    expect([toGoodbye.status, toGoodbye.headers.location]).toEqual([303, `${GOODBYE}?state=s`]);
    expect((await endSession(sentinel, GOODBYE)).status).not.toBe(400);
  });

  it('an app without one is returned to its redirect URIs', async () => {
    const sentinel = sentinelWith();
    const response = await logout(sentinel, SIGN_IN_CALLBACK);
    expect([response.status, response.headers.location]).toEqual([303, `${SIGN_IN_CALLBACK}?state=s`]);
    expect((await endSession(sentinel, GOODBYE)).status).toBe(400);
  });

  it('an https client_id of the host registry is an app like any other while metadata documents are off', async () => {
    // An OpenID Federation entity id, say: only documents make an https client_id the client's own claim.
    const clientId = 'https://rp.example.com';
    const registry = new MemoryAppStore([
      {
        accountId: ACCOUNT,
        clientId,
        tokenEndpointAuthMethod: 'none',
        grantTypes: ['authorization_code'],
        redirectUris: [SIGN_IN_CALLBACK],
        postLogoutRedirectUris: [GOODBYE],
      },
    ]);
    const sentinel = makeSentinel({ apps: [], appStore: registry });
    expect(sentinel.config.clientIdMetadataDocuments.enabled).toBe(false);
    const form = await logout(sentinel, GOODBYE, clientId);
    expect([form.status, form.headers.location]).toEqual([303, `${GOODBYE}?state=s`]);
    const ended = await endSession(sentinel, GOODBYE, clientId);
    expect([ended.status, ended.headers.location]).toEqual([303, `${GOODBYE}?state=s`]);
  });

  for (const gone of ['disabled', 'deleted'] as const) {
    it(`an app ${gone} since it got its ID token: its logout still ends the session, with no return to it`, async () => {
      const app = {
        accountId: ACCOUNT,
        clientSecretHash: hashClientSecret(APP_B.clientSecret as string),
        grantTypes: ['authorization_code' as const, 'refresh_token' as const],
        tokenEndpointAuthMethod: 'client_secret_basic' as const,
        redirectUris: [APP_B.redirectUri],
      };
      // Another app keeps the account known once this one is deleted.
      const registry = new MemoryAppStore([
        { ...app, clientId: APP_B.clientId },
        { ...app, clientId: CLIENT },
      ]);
      const sentinel = makeSentinel({ apps: [], appStore: registry });
      // Two browsers: the app's usual request with client_id in one, without it in the other.
      const browsers = [await signInWithSession(sentinel, APP_B), await signInWithSession(sentinel, APP_B)];
      if (gone === 'disabled') registry.disableApp(ACCOUNT, APP_B.clientId);
      else registry.deleteApp(ACCOUNT, APP_B.clientId);
      for (const [at, { cookie, tokens }] of browsers.entries()) {
        const query = { id_token_hint: tokens.idToken, post_logout_redirect_uri: APP_B.redirectUri, state: 's' };
        const response = await call(sentinel, {
          path: `/sentinel/api/account/${ACCOUNT}/end_session`,
          query: new URLSearchParams(at === 0 ? { ...query, client_id: APP_B.clientId } : query),
          headers: { cookie: `sentinel_session=${cookie}` },
        });
        expect([response.status, response.headers.location]).toEqual([200, undefined]);
        expect(String(response.headers['set-cookie'])).toMatch(/^sentinel_session=;/);
      }
      expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
    });
  }

  it('a "Sign out?" page confirmed after its app was disabled or its address dropped: signed out, with no return', async () => {
    const app = { accountId: ACCOUNT, tokenEndpointAuthMethod: 'none' as const, grantTypes: ['authorization_code' as const] };
    const registry = new MemoryAppStore([
      { ...app, clientId: CLIENT, redirectUris: [SIGN_IN_CALLBACK] },
      { ...app, clientId: APP_B.clientId, redirectUris: [APP_B.redirectUri, GOODBYE] },
    ]);
    const sentinel = makeSentinel({ apps: [], appStore: registry });
    // Two browsers, each with its "Sign out?" page open; the pages wait for the user (up to interactionTtl), and
    // meanwhile one app is disabled and the other drops the address its page would go back to.
    const cookies: string[] = [];
    for (let n = 0; n < 2; n++)
      cookies.push((await signInWithSession(sentinel, { clientId: CLIENT, redirectUri: SIGN_IN_CALLBACK })).cookie);
    const path = `/sentinel/api/account/${ACCOUNT}/end_session`;
    const asked = async (cookie: string, clientId: string, target: string): Promise<URLSearchParams> => {
      const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: target, state: 's' });
      const page = await call(sentinel, { path, query, headers: { cookie: `sentinel_session=${cookie}` } });
      expect(page.status).toBe(200);
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(String(page.body))?.[1] as string;
      return new URLSearchParams({ confirmation: field('confirmation'), csrf_token: field('csrf_token') });
    };
    const confirm = (cookie: string, form: URLSearchParams) => {
      const headers = {
        cookie: `sentinel_session=${cookie}`,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      };
      return call(sentinel, { method: 'POST', path, headers, body: form.toString() });
    };
    const forms = [await asked(cookies[0] as string, CLIENT, SIGN_IN_CALLBACK), await asked(cookies[1] as string, APP_B.clientId, GOODBYE)];
    registry.disableApp(ACCOUNT, CLIENT);
    await registry.saveApp({ ...(registry.findApp(ACCOUNT, APP_B.clientId) as App), redirectUris: [APP_B.redirectUri] });
    for (const [at, form] of forms.entries()) {
      const confirmed = await confirm(cookies[at] as string, form);
      expect([confirmed.status, confirmed.headers.location]).toEqual([200, undefined]);
      expect(String(confirmed.headers['set-cookie'])).toMatch(/^sentinel_session=;/);
    }
    expect(await sentinel.listSessions({ accountId: ACCOUNT, userId: USER_ID })).toEqual([]);
  });

  it('a client_id that names no app, without an ID token of it, is still an error page', async () => {
    const response = await endSession(sentinelWith(), SIGN_IN_CALLBACK, 'no-such-app');
    expect(response.status).toBe(400);
  });
});
