/**
 * The account page's sessions and connected apps, through `sentinel.handle()`: the page lists the user's device
 * sessions (this one marked) and the apps holding their grants (scopes, since when); ending a session, ending every
 * other one and disconnecting an app take effect (a disconnected app's refresh token is then `invalid_grant`), and a
 * posted sid or client id that is not the user's changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { hashClientSecret, MemoryAppStore, MemoryStore, type SentinelEvent, type SentinelOptions } from '../src/index.js';
import {
  ACCOUNT_PATH,
  AUTHORIZE_PATH,
  authorizeQuery,
  call,
  csrfOf,
  exchangeCode,
  jsonOf,
  openLogin,
  postForm,
  postLogin,
  setCookies,
  useRefreshToken,
} from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';
import { type FlowApp, signInThroughSession } from './helpers/logout-flow.js';
import { pkcePair } from './helpers/pkce.js';

const PAGE = `${ACCOUNT_PATH}/account`;
const SAME_ORIGIN = { 'sec-fetch-site': 'same-origin' };

function harness(overrides: Partial<SentinelOptions> = {}) {
  const events: SentinelEvent[] = [];
  const sentinel = makeSentinel({
    store: new MemoryStore(),
    account: { enabled: true },
    // Two users: alice (the fixture user) and mallory, whose session alice must not end.
    users: {
      authenticate: async ({ username, password }) =>
        password === PASSWORD && (username === USERNAME || username === 'mallory') ? { id: `u-${username}` } : null,
    },
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { sentinel, events };
}
type Harness = ReturnType<typeof harness>;

async function signInToPage(h: Harness, username = USERNAME): Promise<string> {
  const start = await call(h.sentinel, { path: PAGE });
  const interaction = /interaction=([A-Za-z0-9_-]{43})$/.exec(String(start.headers.location))?.[1] as string;
  const csrf = await openLogin(h.sentinel, interaction);
  const done = await postLogin(h.sentinel, interaction, { csrf_token: csrf, username, password: PASSWORD });
  expect(done.headers.location).toBe(PAGE);
  return (setCookies(done).find((line) => line.startsWith('sentinel_session=')) as string).split(';')[0] as string;
}

/** With the page's session, the app gets a code without a login page, and exchanges it: its refresh token. */
async function connectApp(h: Harness, cookie: string, scope = 'openid'): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256', scope });
  const authorized = await call(h.sentinel, { path: AUTHORIZE_PATH, query, headers: { cookie } });
  expect(authorized.status).toBe(302);
  const code = new URL(String(authorized.headers.location)).searchParams.get('code') as string;
  const tokens = await exchangeCode(h.sentinel, code, verifier);
  expect(tokens.status).toBe(200);
  return jsonOf(tokens).refresh_token as string;
}

async function page(h: Harness, cookie: string) {
  const response = await call(h.sentinel, { path: PAGE, headers: { cookie } });
  expect(response.status).toBe(200);
  return { body: String(response.body), csrf: csrfOf(response.body) };
}

function post(h: Harness, cookie: string, form: Record<string, string>) {
  return postForm(h.sentinel, PAGE, new URLSearchParams(form).toString(), { headers: { cookie, ...SAME_ORIGIN } });
}

const sids = (body: string): string[] => [...body.matchAll(/data-sid="([^"]+)"/g)].map((match) => match[1] as string);

describe('account page: sessions and connected apps', () => {
  it('lists both sessions, this one first and marked, with the app signed in through it', async () => {
    const h = harness();
    const laptop = await signInToPage(h);
    const phone = await signInToPage(h);
    await connectApp(h, phone);
    const { body } = await page(h, laptop);
    expect(sids(body)).toHaveLength(2);
    expect(body.indexOf('This device')).toBeLessThan(body.indexOf(`data-sid="${sids(body)[1]}"`));
    expect(body).toContain('Apps: <bdi>Acme Messenger</bdi>');
  });

  it('ends one session: it is gone, and its browser is signed out', async () => {
    const h = harness();
    const laptop = await signInToPage(h);
    const phone = await signInToPage(h);
    const { body: phonePage } = await page(h, phone);
    const phoneSid = sids(phonePage)[0] as string;
    const { csrf } = await page(h, laptop);
    const ended = await post(h, laptop, { csrf_token: csrf, action: 'end-session', sid: phoneSid });
    expect(ended.headers.location).toBe(`${PAGE}?done=session-ended`);
    expect(sids((await page(h, laptop)).body)).not.toContain(phoneSid);
    const phoneAgain = await call(h.sentinel, { path: PAGE, headers: { cookie: phone } });
    expect(phoneAgain.status).toBe(303); // back to the login page
  });

  it("refuses to end a session that is not the user's (400, nothing ended)", async () => {
    const h = harness();
    const alice = await signInToPage(h);
    const { body: alicePage, csrf } = await page(h, alice);
    const mallory = await signInToPage(h, 'mallory');
    const malloryPage = await page(h, mallory);
    const refused = await post(h, alice, { csrf_token: csrf, action: 'end-session', sid: sids(malloryPage.body)[0] as string });
    expect(refused.status).toBe(400);
    const forged = await post(h, alice, { csrf_token: csrf, action: 'end-session', sid: 'not-a-sid' });
    expect(forged.status).toBe(400);
    expect(sids((await page(h, alice)).body)).toEqual(sids(alicePage));
    expect((await call(h.sentinel, { path: PAGE, headers: { cookie: mallory } })).status).toBe(200);
  });

  it('pages the sessions, 20 to a page, this one first on the first page', async () => {
    const h = harness();
    for (let index = 0; index < 22; index++) await signInToPage(h);
    const cookie = await signInToPage(h);
    const first = await page(h, cookie);
    expect(sids(first.body)).toHaveLength(20);
    expect(first.body).toMatch(/This device/);
    expect(first.body).toContain('Page 1 of 2');
    expect(first.body).toContain(`href="${PAGE}?sessions=2#sessions-heading"`);
    const second = await call(h.sentinel, { path: PAGE, query: 'sessions=2', headers: { cookie } });
    expect(sids(String(second.body))).toHaveLength(3);
    expect(second.body).not.toMatch(/This device/);
    expect(new Set([...sids(first.body), ...sids(String(second.body))]).size).toBe(23);
  });

  it('ends every other session and keeps this one', async () => {
    const h = harness();
    const laptop = await signInToPage(h);
    const others = [await signInToPage(h), await signInToPage(h)];
    const { csrf } = await page(h, laptop);
    const done = await post(h, laptop, { csrf_token: csrf, action: 'end-other-sessions' });
    expect(done.headers.location).toBe(`${PAGE}?done=others-ended`);
    const after = await call(h.sentinel, { path: PAGE, query: 'done=others-ended', headers: { cookie: laptop } });
    expect(sids(String(after.body))).toHaveLength(1);
    expect(after.body).toContain('Every other session was signed out.');
    for (const cookie of others) expect((await call(h.sentinel, { path: PAGE, headers: { cookie } })).status).toBe(303);
  });

  it('shows a connected app with its scopes and disconnects it: its refresh token is then invalid_grant', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const refreshToken = await connectApp(h, cookie, 'openid');
    const { body, csrf } = await page(h, cookie);
    expect(body).toContain(`data-client="${CLIENT_ID}"`);
    expect(body).toContain('<strong><bdi>Acme Messenger</bdi></strong>');
    expect(body).toContain('Can use: openid');
    const done = await post(h, cookie, { csrf_token: csrf, action: 'disconnect', client_id: CLIENT_ID });
    expect(done.headers.location).toBe(`${PAGE}?done=app-disconnected`);
    const refreshed = await useRefreshToken(h.sentinel, refreshToken);
    expect(refreshed.status).toBe(400);
    expect(jsonOf(refreshed).error).toBe('invalid_grant');
    const after = await page(h, cookie);
    expect(after.body).not.toContain(`data-client="${CLIENT_ID}"`);
    expect(after.body).toContain('No app holds access to your account.');
    expect(h.events.some((event) => event.type === 'grants.revoked')).toBe(true);
  });

  it("shows the scopes of every live grant of an app, not of its oldest few: a sixth sign-in's wider scope too", async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    // An app that renews silently gets a grant per sign-in: five narrow ones first, then one that asks for more.
    for (let index = 0; index < 5; index++) await connectApp(h, cookie, 'openid');
    await connectApp(h, cookie, 'openid email');
    const { body } = await page(h, cookie);
    expect(body).toContain('Can use: openid, email');
  });

  it('refuses to disconnect an app that holds nothing (400, the other app keeps its grant)', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const refreshToken = await connectApp(h, cookie);
    const { csrf } = await page(h, cookie);
    const refused = await post(h, cookie, { csrf_token: csrf, action: 'disconnect', client_id: 'some-other-app' });
    expect(refused.status).toBe(400);
    expect((await useRefreshToken(h.sentinel, refreshToken)).status).toBe(200);
  });

  it('refuses a disconnect with a forged CSRF token: 403, the app keeps its grant', async () => {
    const h = harness();
    const cookie = await signInToPage(h);
    const refreshToken = await connectApp(h, cookie);
    const refused = await post(h, cookie, { csrf_token: 'forged', action: 'disconnect', client_id: CLIENT_ID });
    expect(refused.status).toBe(403);
    expect((await useRefreshToken(h.sentinel, refreshToken)).status).toBe(200);
  });

  it('names an app of the registry whose client id is an https URL by its name while metadata documents are off', async () => {
    // An OpenID Federation entity id, say: only with documents on is an https client_id an agent's document.
    const app: FlowApp = {
      clientId: 'https://rp.example.com',
      clientSecret: 'secret-of-the-https-app-0123456789',
      redirectUri: 'https://rp.example.com/cb',
    };
    const registry = new MemoryAppStore([
      {
        accountId: ACCOUNT,
        clientId: app.clientId,
        name: 'Federated Notes',
        clientSecretHash: hashClientSecret(app.clientSecret as string),
        redirectUris: [app.redirectUri],
        grantTypes: ['authorization_code', 'refresh_token'],
        tokenEndpointAuthMethod: 'client_secret_basic',
      },
    ]);
    const h = harness({ apps: [], appStore: registry });
    expect(h.sentinel.config.clientIdMetadataDocuments.enabled).toBe(false);
    const cookie = await signInToPage(h);
    await signInThroughSession(h.sentinel, app, cookie.slice('sentinel_session='.length));
    const { body } = await page(h, cookie);
    expect(body).toContain('Apps: <bdi>Federated Notes</bdi>');
    expect(body).toContain(`data-client="${app.clientId}"`);
    expect(body).toContain('<strong><bdi>Federated Notes</bdi></strong>');
    expect(body).not.toContain(`<strong><bdi>${app.clientId}</bdi></strong>`);
  });
});
