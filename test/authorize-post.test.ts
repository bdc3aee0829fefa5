/**
 * The authorization endpoint answers POST (OpenID Connect Core §3.1.2.1: GET and POST MUST be supported), with an
 * `application/x-www-form-urlencoded` body read into the same parameters as a GET's query and validated by the
 * same code: a parameter in both the query and the body counts as given twice. A POST without the session cookie
 * (a cross-site form never carries it, SameSite=Lax) is parked and answered with a 303 to a GET carrying only its
 * single-use handle: the posted values (login_hint, id_token_hint, claims) never reach a URL.
 */
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStore, type Sentinel, type SentinelResponse } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call, FORM, postForm, signIn } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, OTHER_ACCOUNT, REDIRECT_URI } from './helpers/fixtures.js';
import { ASSERTION_TYPE } from './helpers/key-bound.js';
import { signIn as signInOverHTTP } from './helpers/login-drive.js';
import { useMount } from './helpers/mount.js';
import { HOSTS } from './helpers/hosts.js';

function post(sentinel: Sentinel, body: string, extra: { query?: string; cookie?: string; contentType?: string } = {}) {
  return call(sentinel, {
    method: 'POST',
    path: AUTHORIZE_PATH,
    query: extra.query ?? '',
    body,
    headers: { 'content-type': extra.contentType ?? FORM, ...(extra.cookie === undefined ? {} : { cookie: extra.cookie }) },
  });
}

function location(response: SentinelResponse): URL {
  return new URL(String(response.headers.location), 'http://localhost');
}

describe('POST to the authorization endpoint, through sentinel.handle()', () => {
  it('without the session cookie: 303 to a GET carrying only a handle of the parameters, query and body together', async () => {
    const sentinel = makeSentinel();
    const response = await post(sentinel, authorizeQuery({ prompt: 'none' }).toString(), { query: 'v=1.0' });
    expect(response.status).toBe(303);
    const target = location(response);
    expect(target.pathname).toBe(AUTHORIZE_PATH);
    expect([...target.searchParams.keys()]).toEqual(['posted_request']);
    // The GET validates them: no session here, so prompt=none gets its answer there, not at the POST.
    const followed = await call(sentinel, { path: target.pathname, query: target.search });
    expect(location(followed).searchParams.get('error')).toBe('login_required');
    expect(location(followed).searchParams.get('state')).toBe(authorizeQuery().get('state'));
    // Single use: the URL kept in a history or a log leads nowhere.
    const replayed = await call(sentinel, { path: target.pathname, query: target.search });
    expect(replayed.status).toBe(400);
    expect(replayed.headers.location).toBeUndefined();
  });

  it('keeps posted hints and claims out of the URL of the 303', async () => {
    const sentinel = makeSentinel();
    const hints = {
      login_hint: 'alice@example.com',
      id_token_hint: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.',
      claims: '{"id_token":{"email":null}}',
    };
    const response = await post(sentinel, authorizeQuery(hints).toString());
    expect(response.status).toBe(303);
    const target = String(response.headers.location);
    for (const value of Object.values(hints)) expect(target).not.toContain(encodeURIComponent(value).slice(0, 12));
    expect(target).not.toContain('hint');
    expect(target).not.toContain('claims');
    expect(target).not.toContain('state');
  });

  it('never moves client credentials posted with the request into the URL of the 303, nor into the GET', async () => {
    const sentinel = makeSentinel();
    const credentials = { client_secret: CLIENT_SECRET, client_assertion: 'eyJ.assertion.sig', client_assertion_type: ASSERTION_TYPE };
    const response = await post(sentinel, authorizeQuery(credentials).toString());
    expect(response.status).toBe(303);
    const target = String(response.headers.location);
    expect(target).not.toContain(CLIENT_SECRET);
    expect(target).not.toContain('client_secret');
    expect(target).not.toContain('client_assertion');
    // The rest of the request is carried as before: the GET goes on to the login page.
    const followed = await call(sentinel, { path: AUTHORIZE_PATH, query: location(response).search });
    expect(followed.status).toBe(302);
    expect(location(followed).pathname).toContain('/login');
  });

  it('refuses a handle beside other parameters, and one parked for another account', async () => {
    const sentinel = makeSentinel();
    const handle = location(await post(sentinel, authorizeQuery().toString())).search.slice(1);
    const added = await call(sentinel, { path: AUTHORIZE_PATH, query: `${handle}&prompt=none` });
    expect(added.status).toBe(400);
    expect(added.headers.location).toBeUndefined();
    const other = await call(sentinel, { path: AUTHORIZE_PATH.replace(ACCOUNT, OTHER_ACCOUNT), query: handle });
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.headers.location).toBeUndefined();
  });

  it('with the session cookie: the code, as the GET would give it, in a 303 that no user agent posts on with', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const response = await post(sentinel, authorizeQuery({ state: 'posted' }).toString(), { cookie: `sentinel_session=${sessionCookie}` });
    // RFC 9110 §15.4.3 lets a user agent keep the method of a 302, and so post the form on to the app (RFC 9700 §4.12).
    expect(response.status).toBe(303);
    const back = location(response);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toBe('posted');
  });

  it('with the session cookie: the login page and the errors for the app in a 303 too, a GET in a 302', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const cookie = `sentinel_session=${sessionCookie}`;
    const login = await post(sentinel, authorizeQuery({ prompt: 'login' }).toString(), { cookie });
    expect(login.status).toBe(303);
    expect(location(login).pathname).toBe(AUTHORIZE_PATH.replace(/authorize$/, 'login'));
    const refused = await post(sentinel, authorizeQuery({ response_type: 'token' }).toString(), { cookie });
    expect(refused.status).toBe(303);
    expect(location(refused).searchParams.get('error')).toBe('unsupported_response_type');
    // The GET keeps the 302 of RFC 6749 §4.1.2.
    const viaGet = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery({ response_type: 'token' }), headers: { cookie } });
    expect(viaGet.status).toBe(302);
    expect(location(viaGet).searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('a parameter in both the query and the body is given twice: invalid_request, as in one place', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const cookie = `sentinel_session=${sessionCookie}`;
    const twice = await post(sentinel, authorizeQuery({ scope: 'openid' }).toString(), { query: 'scope=openid', cookie });
    expect(twice.status).toBe(303);
    expect(location(twice).searchParams.get('error')).toBe('invalid_request');
    expect(location(twice).searchParams.get('error_description')).toContain('scope is given more than once');
    expect(location(twice).searchParams.get('code')).toBeNull();
    // Before the redirect URI is trusted, the same rule gives the page, never a redirect.
    const client = await post(sentinel, authorizeQuery().toString(), { query: `client_id=${CLIENT_ID}`, cookie });
    expect(client.status).toBe(400);
    expect(client.headers.location).toBeUndefined();
    // Without the cookie both places go on to the GET, which refuses the repeated parameter the same way.
    const bounced = await post(sentinel, authorizeQuery().toString(), { query: 'state=other' });
    const followed = await call(sentinel, { path: AUTHORIZE_PATH, query: location(bounced).search });
    expect(location(followed).searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses a body that is not a form, and one longer than a GET may be', async () => {
    const sentinel = makeSentinel();
    const json = await post(sentinel, JSON.stringify(Object.fromEntries(authorizeQuery())), { contentType: 'application/json' });
    expect(json.status).toBe(400);
    expect(json.headers.location).toBeUndefined();
    const long = await postForm(sentinel, AUTHORIZE_PATH, authorizeQuery({ state: 'x'.repeat(9000) }).toString());
    expect(long.status).toBe(413);
    expect(long.headers.location).toBeUndefined();
  });

  it('still refuses other methods with 405 and an Allow that names GET and POST', async () => {
    const response = await call(makeSentinel(), { method: 'PUT', path: AUTHORIZE_PATH, query: authorizeQuery() });
    expect(response.status).toBe(405);
    expect(String(response.headers.allow)).toMatch(/GET.*POST/);
  });
});

describe.each(HOSTS)('POST to the authorization endpoint on $name', (host) => {
  const mount = useMount(host);
  const authorize = `/sentinel/api/account/${ACCOUNT}/authorize`;

  it.each(['none', 'before', 'after'] as const)('passes the form through (host body parser %s)', async (bodyParser) => {
    const { server } = await mount({}, { bodyParser });
    const agent = request.agent(server);
    const bounced = await agent.post(`${authorize}?v=1.0`).set('content-type', FORM).send(authorizeQuery().toString());
    expect(bounced.status).toBe(303);
    expect([...new URL(bounced.headers.location as string, 'http://x').searchParams.keys()]).toEqual(['posted_request']);
    const followed = await agent.get(bounced.headers.location as string);
    expect(followed.status).toBe(302);

    // Signed in, the browser's POST carries the cookie (the agent's jar): the code comes straight back.
    await signInOverHTTP(agent, `${authorize}?${authorizeQuery()}`);
    const answered = await agent
      .post(authorize)
      .set('content-type', FORM)
      .send(authorizeQuery({ state: 'posted' }).toString());
    expect(answered.status).toBe(303);
    const back = new URL(answered.headers.location as string);
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toBe('posted');
  });
});

describe('a store that fails while a cookieless POST is parked or taken', () => {
  it('answers 500 server_error, reports the cause, and puts nothing in the URL', async () => {
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ store, onError: (error) => errors.push(error) });
    const set = vi.spyOn(store, 'set').mockRejectedValueOnce(new Error('store down'));
    const parked = await post(sentinel, authorizeQuery({ login_hint: 'alice@example.com' }).toString());
    expect(parked.status).toBe(500);
    expect(parked.headers.location).toBeUndefined();
    expect(errors).toHaveLength(1);
    set.mockRestore();
    const handle = location(await post(sentinel, authorizeQuery().toString())).search;
    vi.spyOn(store, 'take').mockRejectedValueOnce(new Error('store down'));
    const taken = await call(sentinel, { path: AUTHORIZE_PATH, query: handle });
    expect(taken.status).toBe(500);
    expect(taken.headers.location).toBeUndefined();
    expect(errors).toHaveLength(2);
  });
});
