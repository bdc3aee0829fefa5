/**
 * The authorization endpoint answers POST (OpenID Connect Core §3.1.2.1: GET and POST MUST be supported), with an
 * `application/x-www-form-urlencoded` body read into the same parameters as a GET's query and validated by the
 * same code: a parameter in both the query and the body counts as given twice. A POST without the session cookie
 * (a cross-site form never carries it, SameSite=Lax) is answered with a 303 to the GET of the same parameters.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call, FORM, postForm, signIn } from './helpers/direct-flow.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, makeSentinel, REDIRECT_URI } from './helpers/fixtures.js';
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
  it('without the session cookie: 303 to the GET of the same parameters, query and body together', async () => {
    const sentinel = makeSentinel();
    const response = await post(sentinel, authorizeQuery({ prompt: 'none' }).toString(), { query: 'v=1.0' });
    expect(response.status).toBe(303);
    const target = location(response);
    expect(target.pathname).toBe(AUTHORIZE_PATH);
    expect(Object.fromEntries(target.searchParams)).toEqual({ ...Object.fromEntries(authorizeQuery({ prompt: 'none' })), v: '1.0' });
    // The GET validates them: no session here, so prompt=none gets its answer there, not at the POST.
    const followed = await call(sentinel, { path: target.pathname, query: target.search });
    expect(location(followed).searchParams.get('error')).toBe('login_required');
  });

  it('never moves client credentials posted with the request into the URL of the 303', async () => {
    const sentinel = makeSentinel();
    const credentials = { client_secret: CLIENT_SECRET, client_assertion: 'eyJ.assertion.sig', client_assertion_type: ASSERTION_TYPE };
    const response = await post(sentinel, authorizeQuery(credentials).toString());
    expect(response.status).toBe(303);
    const target = String(response.headers.location);
    expect(target).not.toContain(CLIENT_SECRET);
    expect(target).not.toContain('client_secret');
    expect(target).not.toContain('client_assertion');
    // The rest of the request is carried as before.
    expect(Object.fromEntries(location(response).searchParams)).toEqual(Object.fromEntries(authorizeQuery()));
  });

  it('with the session cookie: the code, as the GET would give it', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const response = await post(sentinel, authorizeQuery({ state: 'posted' }).toString(), { cookie: `sentinel_session=${sessionCookie}` });
    expect(response.status).toBe(302);
    const back = location(response);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toBe('posted');
  });

  it('a parameter in both the query and the body is given twice: invalid_request, as in one place', async () => {
    const sentinel = makeSentinel();
    const { sessionCookie } = await signIn(sentinel);
    const cookie = `sentinel_session=${sessionCookie}`;
    const twice = await post(sentinel, authorizeQuery({ scope: 'openid' }).toString(), { query: 'scope=openid', cookie });
    expect(twice.status).toBe(302);
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
    expect(Object.fromEntries(new URL(bounced.headers.location as string, 'http://x').searchParams)).toEqual({
      ...Object.fromEntries(authorizeQuery()),
      v: '1.0',
    });

    // Signed in, the browser's POST carries the cookie (the agent's jar): the code comes straight back.
    await signInOverHTTP(agent, `${authorize}?${authorizeQuery()}`);
    const answered = await agent
      .post(authorize)
      .set('content-type', FORM)
      .send(authorizeQuery({ state: 'posted' }).toString());
    expect(answered.status).toBe(302);
    const back = new URL(answered.headers.location as string);
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toBe('posted');
  });
});
