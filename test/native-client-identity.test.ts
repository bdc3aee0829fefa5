/**
 * A native app (a public client redirecting to a loopback port or a private-use scheme) cannot be told from another
 * program on the same device: any of them can listen on a loopback port (every port matches, RFC 8252 §7.3) or claim
 * the scheme, and ask in the app's name with a PKCE challenge of its own. RFC 8252 §8.6: such a request is not
 * answered by the browser's session alone. The user sees the login page naming the app; `prompt=none` gets
 * `consent_required`. Apps whose identity something assures still sign in silently: a confidential client (its secret
 * redeems the code) and a public client redirecting to an https URI (its host).
 */
import { describe, expect, it } from 'vitest';
import { interactionRequest } from '../src/authorize/request/prompt.js';
import type { AuthorizationRequest } from '../src/authorize/request/validate-request.js';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { AUTHORIZE_PATH, call, jsonOf, openLogin, postForm, postLogin, signIn, TOKEN_PATH } from './helpers/direct-flow.js';
import { ACCOUNT, baseOptions, CLIENT_ID, makeSentinel, PASSWORD, PUBLIC_CLIENT_ID, REDIRECT_URI, USERNAME } from './helpers/fixtures.js';
import { pkcePair } from './helpers/pkce.js';

const NATIVE_ID = '5d0c3b2a-1f4e-4d6c-9b8a-7e6f5d4c3b2a';
const CONFIDENTIAL_NATIVE_ID = '6e1d4c3b-2a5f-4e7d-8c9b-0f1e2d3c4b5a';
const LOOPBACK = 'http://127.0.0.1/cb';
const PRIVATE_USE = 'com.example.messenger:/oauth';

function sentinelWithNativeApps(overrides: Parameters<typeof makeSentinel>[0] = {}): Sentinel {
  return makeSentinel({
    ...overrides,
    apps: [
      ...(baseOptions().apps ?? []),
      {
        accountId: ACCOUNT,
        clientId: NATIVE_ID,
        tokenEndpointAuthMethod: 'none',
        name: 'Messenger Desktop',
        redirectUris: [LOOPBACK, PRIVATE_USE],
      },
      {
        accountId: ACCOUNT,
        clientId: CONFIDENTIAL_NATIVE_ID,
        clientSecret: 'a-secret-of-the-confidential-native-app',
        redirectUris: [LOOPBACK],
      },
    ],
  });
}

function authorize(sentinel: Sentinel, cookie: string, query: Record<string, string>): Promise<SentinelResponse> {
  const params = new URLSearchParams({
    response_type: 'code',
    state: 'st-n',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...query,
  });
  return call(sentinel, { path: AUTHORIZE_PATH, query: params, headers: { cookie: `sentinel_session=${cookie}` } });
}

function codeOf(response: SentinelResponse): string | null {
  return new URL(String(response.headers.location)).searchParams.get('code');
}

describe('a native app and a browser session (RFC 8252 §8.6)', () => {
  it.each([
    ['a loopback port the app did not register', 'http://127.0.0.1:49152/cb'],
    ['its private-use scheme', PRIVATE_USE],
  ])('is sent to the login page, not given a code, at %s', async (_name, redirectUri) => {
    const sentinel = sentinelWithNativeApps();
    const { sessionCookie } = await signIn(sentinel);
    const asked = await authorize(sentinel, sessionCookie, { client_id: NATIVE_ID, redirect_uri: redirectUri });
    expect(asked.status).toBe(302);
    expect(String(asked.headers.location)).toMatch(/\/login\?interaction=[A-Za-z0-9_-]{43}$/);
    const login = String(asked.headers.location);
    const page = await call(sentinel, { path: login.split('?')[0] as string, query: login.split('?')[1] });
    expect(page.body).toContain('Messenger Desktop');
  });

  it('answers prompt=none with consent_required at the app, with state and iss, and no code', async () => {
    const sentinel = sentinelWithNativeApps();
    const { sessionCookie } = await signIn(sentinel);
    const silent = await authorize(sentinel, sessionCookie, { client_id: NATIVE_ID, redirect_uri: LOOPBACK, prompt: 'none' });
    expect(silent.status).toBe(302);
    const answer = new URL(String(silent.headers.location));
    expect(answer.origin + answer.pathname).toBe(LOOPBACK);
    expect(answer.searchParams.get('error')).toBe('consent_required');
    expect(answer.searchParams.get('error_description')).toMatch(/identity of a native app cannot be assured/);
    expect(answer.searchParams.get('code')).toBeNull();
    expect(answer.searchParams.get('state')).toBe('st-n');
    expect(answer.searchParams.get('iss')).toBe(`http://localhost/sentinel/api/account/${ACCOUNT}`);
  });

  it('signs the user in to it on the login page, then redeems the code as usual', async () => {
    const sentinel = sentinelWithNativeApps();
    const { sessionCookie } = await signIn(sentinel);
    const { verifier, challenge } = pkcePair();
    const asked = await authorize(sentinel, sessionCookie, {
      client_id: NATIVE_ID,
      redirect_uri: LOOPBACK,
      code_challenge: challenge,
    });
    const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(asked.headers.location))?.[1] as string;
    const csrf = await openLogin(sentinel, interaction);
    const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    const code = codeOf(signedIn);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const form = {
      grant_type: 'authorization_code',
      code: code as string,
      code_verifier: verifier,
      client_id: NATIVE_ID,
      redirect_uri: LOOPBACK,
    };
    const tokens = await postForm(sentinel, TOKEN_PATH, new URLSearchParams(form).toString());
    expect(tokens.status).toBe(200);
    expect(jsonOf(tokens).access_token).toEqual(expect.any(String));
  });

  it('still answers silently the apps whose identity something assures', async () => {
    const sentinel = sentinelWithNativeApps();
    const { sessionCookie } = await signIn(sentinel);
    // A confidential app on a loopback URI: only its secret redeems the code.
    const confidential = await authorize(sentinel, sessionCookie, {
      client_id: CONFIDENTIAL_NATIVE_ID,
      redirect_uri: LOOPBACK,
      prompt: 'none',
    });
    expect(codeOf(confidential)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A public app on an https URI: the host of its redirect URI is its.
    const web = await authorize(sentinel, sessionCookie, { client_id: PUBLIC_CLIENT_ID, redirect_uri: REDIRECT_URI, prompt: 'none' });
    expect(codeOf(web)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const own = await authorize(sentinel, sessionCookie, { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, prompt: 'none' });
    expect(codeOf(own)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("is not answered by a host login page's earlier sign-in either: the interaction asks for a new one", async () => {
    // With login.url every interaction goes to the host's page, which may hold a sign-in of its own: handing that
    // over would answer the native app without the user, as the session alone may not.
    const sentinel = sentinelWithNativeApps({ login: { url: 'https://host.example.com/sign-in' } });
    const interactionOf = async (): Promise<string> => {
      const asked = await authorize(sentinel, 'none', { client_id: NATIVE_ID, redirect_uri: LOOPBACK });
      const location = new URL(String(asked.headers.location));
      expect(location.origin + location.pathname).toBe('https://host.example.com/sign-in');
      return location.searchParams.get('interaction') as string;
    };
    const earlier = await interactionOf();
    // What the host's page reads says so, as it does for prompt=login.
    expect((await sentinel.interaction(earlier))?.prompt).toContain('login');
    const anHourAgo = Math.floor(Date.now() / 1000) - 3600;
    const refused = await sentinel.completeLogin(earlier, { userId: 'user-1', authTime: anHourAgo });
    const answer = new URL(String(refused.headers.location));
    expect(answer.origin + answer.pathname).toBe(LOOPBACK);
    expect(answer.searchParams.get('error')).toBe('login_required');
    expect(answer.searchParams.get('error_description')).toMatch(/an app a session does not answer/);
    expect(answer.searchParams.get('code')).toBeNull();
    expect(refused.headers['set-cookie']).toBeUndefined();
    // A sign-in made for this request answers it.
    const fresh = await sentinel.completeLogin(await interactionOf(), { userId: 'user-1' });
    expect(codeOf(fresh)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // An app whose identity something assures keeps taking the host's earlier sign-in.
    const own = await authorize(sentinel, 'none', { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI });
    const ownInteraction = new URL(String(own.headers.location)).searchParams.get('interaction') as string;
    expect((await sentinel.interaction(ownInteraction))?.prompt).toBeUndefined();
    expect(codeOf(await sentinel.completeLogin(ownInteraction, { userId: 'user-1', authTime: anHourAgo }))).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('asks a client named by its metadata document for a new sign-in alike, and leaves other requests as they came', () => {
    const config = { clientIdMetadataDocuments: { enabled: true } } as Parameters<typeof interactionRequest>[0]['config'];
    const request = (clientId: string, extra: Partial<AuthorizationRequest> = {}) =>
      ({ accountId: ACCOUNT, clientId, redirectUri: 'https://agent.example.com/cb', ...extra }) as AuthorizationRequest;
    expect(interactionRequest({ config }, request('https://agent.example.com/client.json')).prompt).toEqual(['login']);
    expect(interactionRequest({ config }, request(NATIVE_ID, { nativeClient: true, prompt: ['consent'] })).prompt).toEqual([
      'consent',
      'login',
    ]);
    const assured = request(CLIENT_ID);
    expect(interactionRequest({ config }, assured)).toBe(assured);
  });
});
