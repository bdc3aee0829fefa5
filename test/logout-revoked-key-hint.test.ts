/**
 * RP-initiated logout after an emergency key revocation: the app still holds ID tokens signed by the revoked key,
 * and the user must still be able to sign out through it. A hint that fails verification only because its key is
 * unknown (revoked, or never this service's) is taken as no hint: the user confirms on the "Sign out?" page (never a
 * silent logout on a hint nobody can verify), and `post_logout_redirect_uri` is honoured only when `client_id` names
 * the app and the URI is registered exactly. Any other failure (a bad signature of a known key) stays a 400.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Sentinel } from '../src/index.js';
import { ACCOUNT_PATH, call, postForm } from './helpers/direct-flow.js';
import { CLIENT_ID, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
import { kidOf } from './helpers/jwt.js';
import { MAIN_APP, sessionWorks, signInWithSession, tokenStanding } from './helpers/logout-flow.js';

const BYE = 'https://app.example.com/bye';
const END_SESSION = `${ACCOUNT_PATH}/end_session`;
const LIVE = { guard: true, introspection: true, refresh: true };

function ringSentinel(): Sentinel {
  return makeSentinel({
    keys: undefined,
    keyRotation: { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 3600, prePublishSeconds: 360, name: 'logout' },
    apps: makeSentinel().config.apps?.map((app) => (app.clientId === CLIENT_ID ? { ...app, postLogoutRedirectUris: [BYE] } : app)),
  });
}

/** Signed in, then the key that signed the app's ID token revoked. */
async function afterRevocation() {
  const sentinel = ringSentinel();
  const { cookie, tokens } = await signInWithSession(sentinel, MAIN_APP);
  expect(await sentinel.revokeKey(kidOf(tokens.idToken))).toBe(true);
  return { sentinel, cookie, tokens, headers: { cookie: `sentinel_session=${cookie}`, 'sec-fetch-site': 'same-origin' } };
}

function fieldsOf(body: string | undefined): string {
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(String(body))?.[1] as string;
  return new URLSearchParams({ confirmation: field('confirmation'), csrf_token: field('csrf_token') }).toString();
}

describe('an id_token_hint signed by a key revoked since', () => {
  it('is taken as no hint: the user confirms, and nothing ends before', async () => {
    const { sentinel, cookie, tokens, headers } = await afterRevocation();
    const page = await call(sentinel, { path: END_SESSION, query: new URLSearchParams({ id_token_hint: tokens.idToken }), headers });
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('name="confirmation"');
    expect(await sessionWorks(sentinel, cookie), 'no silent logout on a hint nobody can verify').toBe(true);
    const confirmed = await postForm(sentinel, END_SESSION, fieldsOf(page.body), { headers });
    expect(confirmed.status).toBe(200);
    expect(await sessionWorks(sentinel, cookie)).toBe(false);
  });

  it('goes back to post_logout_redirect_uri only when client_id names the app and the URI is registered', async () => {
    const { sentinel, tokens, headers } = await afterRevocation();
    const query = new URLSearchParams({ id_token_hint: tokens.idToken, client_id: CLIENT_ID, post_logout_redirect_uri: BYE, state: 's-1' });
    const page = await call(sentinel, { path: END_SESSION, query, headers });
    expect(page.status, page.body).toBe(200);
    const confirmed = await postForm(sentinel, END_SESSION, fieldsOf(page.body), { headers });
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.location).toBe(`${BYE}?state=s-1`);
    // Not registered as a logout URI: refused as without a hint.
    const unregistered = new URLSearchParams({
      id_token_hint: tokens.idToken,
      client_id: CLIENT_ID,
      post_logout_redirect_uri: REDIRECT_URI,
    });
    expect((await call(sentinel, { path: END_SESSION, query: unregistered, headers })).status).toBe(400);
  });

  it('without client_id: no return to the URI the request names, but the user can still sign out', async () => {
    const { sentinel, cookie, tokens, headers } = await afterRevocation();
    const query = new URLSearchParams({ id_token_hint: tokens.idToken, post_logout_redirect_uri: BYE, state: 's-1' });
    const page = await call(sentinel, { path: END_SESSION, query, headers });
    expect(page.status, page.body).toBe(200);
    expect(page.body).not.toContain(BYE);
    const confirmed = await postForm(sentinel, END_SESSION, fieldsOf(page.body), { headers });
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.location).toBeUndefined();
    expect(await sessionWorks(sentinel, cookie)).toBe(false);
  });

  it('a hint of a known key with a bad signature is still refused, and changes nothing', async () => {
    const sentinel = ringSentinel();
    const { cookie, tokens } = await signInWithSession(sentinel, MAIN_APP);
    const [header, payload] = tokens.idToken.split('.') as [string, string];
    const forged = `${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}`;
    const response = await call(sentinel, {
      path: END_SESSION,
      query: new URLSearchParams({ id_token_hint: forged }),
      headers: { cookie: `sentinel_session=${cookie}` },
    });
    expect(response.status).toBe(400);
    expect(await tokenStanding(sentinel, tokens, MAIN_APP)).toEqual(LIVE);
  });
});
