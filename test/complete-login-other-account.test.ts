/**
 * A sign-in in a browser that holds a session of another account (one session cookie per browser, shared by every
 * account): the new session's cookie replaces the other one, so that session ends as it is replaced, whichever page
 * signed the user in. The login form read it from the cookie; `completeLogin()`, which has no cookie, learns it only
 * from the interaction, and /authorize, the account page and the device page kept there only a session of their own
 * account: the other account's session stayed live and listed, with no cookie left in any browser to sign it out.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelEvent, type SentinelResponse } from '../src/index.js';
import { call, csrfOf, FORM, setCookies } from './helpers/direct-flow.js';
import { deviceApps, enterCode, requestCodes } from './helpers/device-drive.js';
import {
  ACCOUNT,
  CLIENT_ID,
  makeSentinel,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  PASSWORD,
  REDIRECT_URI,
  USER_ID,
  USERNAME,
} from './helpers/fixtures.js';
import { HOST_LOGIN, hostInteraction } from './helpers/host-login.js';

const APPS: Record<string, { client_id: string; redirect_uri: string }> = {
  [ACCOUNT]: { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI },
  [OTHER_ACCOUNT]: { client_id: OTHER_CLIENT_ID, redirect_uri: 'https://other.example.com/cb' },
};

function authorize(sentinel: Sentinel, accountId: string, cookie?: string, extra: Record<string, string> = {}): Promise<SentinelResponse> {
  return call(sentinel, {
    path: `/sentinel/api/account/${accountId}/authorize`,
    query: new URLSearchParams({ response_type: 'code', state: 'st', ...APPS[accountId], ...extra }),
    headers: cookie === undefined ? {} : { cookie },
  });
}

/** The `sentinel_session=…` pair a sign-in's answer sets. */
function sessionOf(response: SentinelResponse): string {
  expect(response.status).toBe(303);
  const line = setCookies(response).find((set) => set.startsWith('sentinel_session='));
  expect(line, 'a session cookie').toBeDefined();
  return (line as string).split(';')[0] as string;
}

function interactionOf(response: SentinelResponse): string {
  return new URL(String(response.headers.location), 'https://service.example').searchParams.get('interaction') as string;
}

/** A sign-in through /authorize of `accountId` in the browser holding `cookie`, on the host's page or the built-in form. */
async function authorizeSignIn(sentinel: Sentinel, hostPage: boolean, accountId: string, cookie?: string): Promise<string> {
  const started = await authorize(sentinel, accountId, cookie);
  expect(started.status).toBe(302);
  const interaction = interactionOf(started);
  if (hostPage) return sessionOf(await sentinel.completeLogin(interaction, { userId: USER_ID }));
  const path = `/sentinel/api/account/${accountId}/login`;
  const query = new URLSearchParams({ interaction });
  const page = await call(sentinel, { path, query });
  const form = new URLSearchParams({ csrf_token: csrfOf(page.body), username: USERNAME, password: PASSWORD }).toString();
  const headers = { 'content-type': FORM, ...(cookie === undefined ? {} : { cookie }) };
  return sessionOf(await call(sentinel, { method: 'POST', path, query, body: form, headers }));
}

/** The ways into a sign-in of {@link ACCOUNT} from a browser holding `cookie`: each ends in its session cookie. */
const ENTRIES: [string, boolean, (sentinel: Sentinel, cookie: string) => Promise<string>][] = [
  ['/authorize, the host’s page (completeLogin)', true, (sentinel, cookie) => authorizeSignIn(sentinel, true, ACCOUNT, cookie)],
  ['/authorize, the built-in login form', false, (sentinel, cookie) => authorizeSignIn(sentinel, false, ACCOUNT, cookie)],
  [
    'the account page, the host’s page',
    true,
    async (sentinel, cookie) => {
      const page = await call(sentinel, { path: `/sentinel/api/account/${ACCOUNT}/account`, headers: { cookie } });
      return sessionOf(await sentinel.completeLogin(hostInteraction(page), { userId: USER_ID }));
    },
  ],
  [
    'the device page, the host’s page',
    true,
    async (sentinel, cookie) => {
      const entered = await enterCode(sentinel, { cookie }, (await requestCodes(sentinel)).user_code);
      return sessionOf(await sentinel.completeLogin(hostInteraction(entered), { userId: USER_ID }));
    },
  ],
];

describe.each(ENTRIES)('a sign-in through %s, in a browser holding a session of another account', (_name, hostPage, signIn) => {
  it('ends that session as it replaces its cookie', async () => {
    const events: SentinelEvent[] = [];
    const sentinel = makeSentinel({
      store: new MemoryStore(),
      apps: deviceApps(),
      account: { enabled: true },
      ...(hostPage ? { login: { url: HOST_LOGIN } } : {}),
      onEvent: (event) => void events.push(event),
    });
    const other = await authorizeSignIn(sentinel, hostPage, OTHER_ACCOUNT);
    expect(await sentinel.listSessions({ accountId: OTHER_ACCOUNT, userId: USER_ID })).toHaveLength(1);
    const signedIn = await signIn(sentinel, other);
    expect(signedIn).not.toBe(other);
    expect(events.filter((event) => event.type === 'session.ended')).toMatchObject([
      { accountId: OTHER_ACCOUNT, userId: USER_ID, reason: 'replaced' },
    ]);
    expect(await sentinel.listSessions({ accountId: OTHER_ACCOUNT, userId: USER_ID })).toEqual([]);
    const silent = await authorize(sentinel, OTHER_ACCOUNT, other, { prompt: 'none' });
    expect(new URL(String(silent.headers.location)).searchParams.get('error')).toBe('login_required');
    // The new session is the browser's, in its own account.
    const again = await authorize(sentinel, ACCOUNT, signedIn, { prompt: 'none' });
    expect(new URL(String(again.headers.location)).searchParams.get('code')).toBeTruthy();
  });
});
