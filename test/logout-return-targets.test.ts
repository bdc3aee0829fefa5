/**
 * Where the two logout endpoints may send the browser back: an app that registered post-logout redirect URIs is
 * returned only to those, at the platform's logout form as at the end-session endpoint; an app without them, to its
 * redirect URIs.
 */
import { describe, expect, it } from 'vitest';
import { MemoryAppStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { call } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

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
});
