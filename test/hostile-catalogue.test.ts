/**
 * A named catalogue of hostile requests, sent through `sentinel.handle()` against a recording store.
 * Each is its own test, and every one must also: answer below 500, write nothing to the store, send no Location
 * outside the app's registered redirect URIs, and never echo the hostile markup unescaped.
 *
 * | #  | request                                                        | status | error                     |
 * |----|----------------------------------------------------------------|--------|---------------------------|
 * | 1  | authorize: redirect_uri with userinfo (evil@)                  | 400    | invalid_request (page)    |
 * | 2  | authorize: redirect_uri with a Cyrillic look-alike host (IDN)  | 400    | invalid_request (page)    |
 * | 3  | authorize: redirect_uri as punycode of a look-alike host       | 400    | invalid_request (page)    |
 * | 4  | authorize: redirect_uri with a `..` segment                    | 400    | invalid_request (page)    |
 * | 5  | authorize: redirect_uri with a trailing `#`                    | 400    | invalid_request (page)    |
 * | 6  | authorize: redirect_uri double-encoded                         | 400    | invalid_request (page)    |
 * | 7  | authorize: redirect_uri with a trailing slash                  | 400    | invalid_request (page)    |
 * | 8  | authorize: redirect_uri with an upper-case host                | 400    | invalid_request (page)    |
 * | 9  | authorize: redirect_uri with an added query                    | 400    | invalid_request (page)    |
 * | 10 | authorize: redirect_uri given twice                            | 400    | invalid_request (page)    |
 * | 11 | authorize: redirect_uri with CR/LF and a header                | 400    | invalid_request (page)    |
 * | 12 | authorize: redirect_uri in fullwidth letters                   | 400    | invalid_request (page)    |
 * | 13 | authorize: redirect_uri javascript:                            | 400    | invalid_request (page)    |
 * | 14 | authorize: client_id with a NUL                                | 401    | invalid_client (page)     |
 * | 15 | authorize: client_id with a Cyrillic look-alike letter         | 401    | invalid_client (page)     |
 * | 16 | authorize: client_id in fullwidth (NFKC-equal)                 | 401    | invalid_client (page)     |
 * | 17 | authorize: client_id given twice                               | 400    | invalid_request (page)    |
 * | 18 | authorize: client_id of another account                        | 401    | invalid_client (page)     |
 * | 19 | authorize: client_id carrying `<script>`                       | 401    | invalid_client (page)     |
 * | 20 | authorize: account id with a NUL                               | 401    | invalid_request (page)    |
 * | 21 | authorize: a 1 MB state                                        | 414    | invalid_request (page)    |
 * | 22 | authorize: response_type=token                                 | 302    | unsupported_response_type |
 * | 23 | authorize: response_type given twice                           | 302    | invalid_request           |
 * | 24 | authorize: code_challenge_method=plain                         | 302    | invalid_request           |
 * | 25 | authorize: state given twice                                   | 302    | invalid_request           |
 * | 26 | authorize: PUT instead of GET or POST                          | 405    | invalid_request (page)    |
 * | 27 | authorize: JSON asked for an unknown client                    | 401    | invalid_client (JSON)     |
 * | 28 | login: forged interaction id                                   | 400    | invalid_request (page)    |
 * | 29 | login: POST without the CSRF token                             | 403    | invalid_request (page)    |
 * | 30 | login: POST with a wrong CSRF token                            | 403    | invalid_request (page)    |
 * | 31 | login: POST from another site (Origin)                         | 403    | invalid_request (page)    |
 * | 32 | login: POST with a JSON body                                   | 400    | invalid_request (page)    |
 * | 33 | login: POST body over the cap                                  | 413    | invalid_request (page)    |
 * | 34 | login: POST with a nested-object username (qs parser)          | 400    | invalid_request (page)    |
 * | 35 | login: POST with the CSRF token given twice (array)            | 400    | invalid_request (page)    |
 * | 36 | token: grant_type given twice                                  | 400    | invalid_request           |
 * | 37 | token: a JSON body                                             | 400    | invalid_request           |
 * | 38 | token: client_secret in the query                              | 400    | invalid_request           |
 * | 39 | token: body over the cap                                       | 413    | invalid_request           |
 * | 40 | token: Content-Length over the cap (body never read)           | 413    | invalid_request           |
 * | 41 | token: grant_type as an array from a qs parser                 | 400    | invalid_request           |
 * | 42 | token: client_id as a nested object from a qs parser           | 400    | invalid_request           |
 * | 43 | token: broken percent-encoding in grant_type                   | 400    | unsupported_grant_type    |
 * | 44 | token: invalid UTF-8 bytes in client_id                        | 400    | invalid_client            |
 * | 45 | token: malformed Basic header                                  | 401    | invalid_client            |
 * | 46 | token: Basic header and client_secret in the body              | 400    | invalid_request           |
 * | 47 | token: Basic header for an unknown client                      | 401    | invalid_client            |
 * | 48 | token: password grant                                          | 400    | unsupported_grant_type    |
 * | 49 | token: a code with a NUL                                       | 400    | invalid_grant             |
 * | 50 | token: Content-Type text/plain                                 | 400    | invalid_request           |
 * | 51 | token: charset=ISO-8859-1                                      | 400    | invalid_request           |
 * | 52 | token: an unknown refresh_token                                | 400    | invalid_grant             |
 * | 53 | app token v2: state (consumer id) missing                      | 400    | invalid_request           |
 * | 54 | app token v2: state with CR/LF                                 | 400    | invalid_request           |
 * | 55 | app token v2: state given twice                                | 400    | invalid_request           |
 * | 56 | app token v2: client_secret in the query                       | 400    | invalid_request           |
 * | 57 | app token v2: client id with a Cyrillic look-alike letter      | 400    | invalid_client            |
 * | 58 | revoke: client_secret in the query                             | 400    | invalid_request           |
 * | 59 | introspect: no client authentication                           | 401    | invalid_client            |
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Sentinel, SentinelResponse } from '../src/index.js';
import { MemoryStore } from '../src/index.js';
import {
  ACCOUNT_PATH,
  AUTHORIZE_PATH,
  call,
  FORM,
  LOGIN_PATH,
  openLogin,
  recordingStore,
  startInteraction,
  TOKEN_PATH,
  type DirectRequest,
  type RecordingStore,
} from './helpers/direct-flow.js';
import {
  ACCOUNT,
  appTokenPath,
  ccBody,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  makeSentinel,
  OTHER_CLIENT_ID,
  REDIRECT_URI,
  basic,
} from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';

type Delivery = 'page' | 'json' | 'redirect';

interface HostileCase {
  name: string;
  status: number;
  error: string;
  delivery: Delivery;
  /** Builds the request; login cases get a live interaction and its CSRF token. */
  request: (login: { interaction: string; csrf: string }) => DirectRequest;
}

/** The registered redirect URIs of every app in the fixtures: the only places a Location may point to. */
const REGISTERED = [REDIRECT_URI, 'https://app.example.com/other?tenant=a', 'https://other.example.com/cb'];
const CYRILLIC_A = '\u0430';
const LOOKALIKE_CLIENT = CLIENT_ID.replace('c', '\u0441');
const FULLWIDTH_CLIENT = [...CLIENT_ID]
  .map((ch) => (/[0-9a-z]/.test(ch) ? String.fromCodePoint(ch.codePointAt(0)! + 0xfee0) : ch))
  .join('');

function authorize(query: Record<string, string> | string, extra: Partial<DirectRequest> = {}): DirectRequest {
  const search =
    typeof query === 'string'
      ? query
      : new URLSearchParams({ response_type: 'code', client_id: CLIENT_ID, state: 's1', ...query }).toString();
  return { path: AUTHORIZE_PATH, query: search, ...extra };
}

function withRedirect(redirectUri: string): DirectRequest {
  return authorize({ redirect_uri: redirectUri });
}

function token(body: DirectRequest['body'], extra: Partial<DirectRequest> = {}): DirectRequest {
  return { method: 'POST', path: TOKEN_PATH, body, ...extra, headers: { 'content-type': FORM, ...extra.headers } };
}

function login(interaction: string, body: DirectRequest['body'], headers: DirectRequest['headers'] = {}): DirectRequest {
  return {
    method: 'POST',
    path: LOGIN_PATH,
    query: new URLSearchParams({ interaction }),
    body,
    headers: { 'content-type': FORM, ...headers },
  };
}

const codeBody = (extra: Record<string, string> = {}): string =>
  new URLSearchParams({
    grant_type: 'authorization_code',
    code: 'x'.repeat(43),
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    ...extra,
  }).toString();

const CASES: HostileCase[] = [
  {
    name: 'redirect_uri with userinfo',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect('https://evil.example@app.example.com/cb'),
  },
  {
    name: 'redirect_uri with a Cyrillic look-alike host (IDN)',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(`https://${CYRILLIC_A}pp.example.com/cb`),
  },
  {
    name: 'redirect_uri as punycode of a look-alike host',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(new URL(`https://${CYRILLIC_A}pp.example.com/cb`).href),
  },
  {
    name: 'redirect_uri with a .. segment',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect('https://app.example.com/evil/../cb'),
  },
  {
    name: 'redirect_uri with a trailing #',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(`${REDIRECT_URI}#`),
  },
  {
    name: 'redirect_uri double-encoded',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(encodeURIComponent(REDIRECT_URI)),
  },
  {
    name: 'redirect_uri with a trailing slash',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(`${REDIRECT_URI}/`),
  },
  {
    name: 'redirect_uri with an upper-case host',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect('https://APP.example.com/cb'),
  },
  {
    name: 'redirect_uri with an added query',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(`${REDIRECT_URI}?next=https://evil.example`),
  },
  {
    name: 'redirect_uri given twice',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () =>
      authorize(
        `response_type=code&client_id=${CLIENT_ID}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`,
      ),
  },
  {
    name: 'redirect_uri with CR/LF and a header',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect(`${REDIRECT_URI}\r\nSet-Cookie: pwned=1`),
  },
  {
    name: 'redirect_uri in fullwidth letters',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect('ｈｔｔｐｓ://app.example.com/cb'),
  },
  {
    name: 'redirect_uri javascript:',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => withRedirect('javascript:alert(document.domain)//'),
  },
  {
    name: 'client_id with a NUL',
    status: 401,
    error: 'invalid_client',
    delivery: 'page',
    request: () => authorize({ client_id: `${CLIENT_ID}\u0000` }),
  },
  {
    name: 'client_id with a Cyrillic look-alike letter',
    status: 401,
    error: 'invalid_client',
    delivery: 'page',
    request: () => authorize({ client_id: LOOKALIKE_CLIENT }),
  },
  {
    name: 'client_id in fullwidth (NFKC-equal)',
    status: 401,
    error: 'invalid_client',
    delivery: 'page',
    request: () => authorize({ client_id: FULLWIDTH_CLIENT }),
  },
  {
    name: 'client_id given twice',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => authorize(`response_type=code&client_id=${CLIENT_ID}&client_id=${CLIENT_ID}`),
  },
  {
    name: 'client_id of another account',
    status: 401,
    error: 'invalid_client',
    delivery: 'page',
    request: () => authorize({ client_id: OTHER_CLIENT_ID }),
  },
  {
    name: 'client_id carrying <script>',
    status: 401,
    error: 'invalid_client',
    delivery: 'page',
    request: () => authorize({ client_id: '"><script>alert(1)</script>' }),
  },
  {
    name: 'account id with a NUL',
    status: 401,
    error: 'invalid_request',
    delivery: 'page',
    request: () => ({ path: `/sentinel/api/account/${ACCOUNT}%00/authorize`, query: `response_type=code&client_id=${CLIENT_ID}` }),
  },
  {
    name: 'a 1 MB state',
    status: 414,
    error: 'invalid_request',
    delivery: 'page',
    request: () => authorize({ state: 's'.repeat(1_048_576) }),
  },
  {
    name: 'response_type=token',
    status: 302,
    error: 'unsupported_response_type',
    delivery: 'redirect',
    request: () => authorize({ response_type: 'token' }),
  },
  {
    name: 'response_type given twice',
    status: 302,
    error: 'invalid_request',
    delivery: 'redirect',
    request: () => authorize(`response_type=code&response_type=token&client_id=${CLIENT_ID}&state=s1`),
  },
  {
    name: 'code_challenge_method=plain',
    status: 302,
    error: 'invalid_request',
    delivery: 'redirect',
    request: () => authorize({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }),
  },
  {
    name: 'state given twice',
    status: 302,
    error: 'invalid_request',
    delivery: 'redirect',
    request: () => authorize(`response_type=code&client_id=${CLIENT_ID}&state=a&state=b`),
  },
  {
    name: 'PUT to the authorize endpoint',
    status: 405,
    error: 'invalid_request',
    delivery: 'page',
    request: () => ({ ...authorize({}), method: 'PUT' }),
  },
  {
    name: 'JSON asked for an unknown client',
    status: 401,
    error: 'invalid_client',
    delivery: 'json',
    request: () => authorize({ client_id: 'no-such-client' }, { headers: { accept: 'application/json' } }),
  },
  {
    name: 'login with a forged interaction id',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: () => ({ path: LOGIN_PATH, query: `interaction=${'A'.repeat(43)}` }),
  },
  {
    name: 'login POST without the CSRF token',
    status: 403,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction }) => login(interaction, 'username=alice&password=x'),
  },
  {
    name: 'login POST with a wrong CSRF token',
    status: 403,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction }) => login(interaction, `csrf_token=${'B'.repeat(43)}&username=alice&password=x`),
  },
  {
    name: 'login POST from another site (Origin)',
    status: 403,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction, csrf }) =>
      login(interaction, `csrf_token=${csrf}&username=alice&password=x`, { origin: 'https://evil.example' }),
  },
  {
    name: 'login POST with a JSON body',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction, csrf }) =>
      login(interaction, JSON.stringify({ csrf_token: csrf, username: 'alice', password: 'x' }), { 'content-type': 'application/json' }),
  },
  {
    name: 'login POST body over the cap',
    status: 413,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction, csrf }) => login(interaction, `csrf_token=${csrf}&username=alice&password=${'p'.repeat(20_000)}`),
  },
  {
    name: 'login POST with a nested-object username (qs parser)',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction, csrf }) => login(interaction, { csrf_token: csrf, username: { $ne: '' }, password: 'x' }),
  },
  {
    name: 'login POST with the CSRF token given twice (array)',
    status: 400,
    error: 'invalid_request',
    delivery: 'page',
    request: ({ interaction, csrf }) => login(interaction, { csrf_token: [csrf, csrf], username: 'alice', password: 'x' }),
  },
  {
    name: 'token: grant_type given twice',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token(`${codeBody()}&grant_type=refresh_token`),
  },
  {
    name: 'token: a JSON body',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () =>
      token(JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }), {
        headers: { 'content-type': 'application/json' },
      }),
  },
  {
    name: 'token: client_secret in the query',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () =>
      token(`grant_type=authorization_code&code=${'x'.repeat(43)}`, { query: `client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}` }),
  },
  {
    name: 'token: body over the cap',
    status: 413,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token(`${codeBody()}&pad=${'z'.repeat(20_000)}`),
  },
  {
    name: 'token: Content-Length over the cap (body never read)',
    status: 413,
    error: 'invalid_request',
    delivery: 'json',
    request: () =>
      token(
        async () => {
          throw new Error('the body must not be read');
        },
        { headers: { 'content-length': '5000000' } },
      ),
  },
  {
    name: 'token: grant_type as an array (qs parser)',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token({ grant_type: ['authorization_code', 'refresh_token'], code: 'x' }),
  },
  {
    name: 'token: client_id as a nested object (qs parser)',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () =>
      token({ grant_type: 'authorization_code', code: 'x'.repeat(43), client_id: { toString: 'x' }, client_secret: CLIENT_SECRET }),
  },
  {
    name: 'token: broken percent-encoding in grant_type',
    status: 400,
    error: 'unsupported_grant_type',
    delivery: 'json',
    request: () => token('grant_type=authorization%E0%A4%A_code&code=x'),
  },
  {
    name: 'token: invalid UTF-8 bytes in client_id',
    status: 400,
    error: 'invalid_client',
    delivery: 'json',
    request: () =>
      token(
        Buffer.concat([
          Buffer.from(`grant_type=authorization_code&code=${'x'.repeat(43)}&client_secret=${CLIENT_SECRET}&client_id=`),
          Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
        ]),
      ),
  },
  {
    name: 'token: malformed Basic header',
    status: 401,
    error: 'invalid_client',
    delivery: 'json',
    request: () => token(codeBody({ client_secret: '' }), { headers: { authorization: 'Basic %%%not-base64' } }),
  },
  {
    name: 'token: Basic header and client_secret in the body',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token(codeBody(), { headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) } }),
  },
  {
    name: 'token: Basic header for an unknown client',
    status: 401,
    error: 'invalid_client',
    delivery: 'json',
    request: () =>
      token(`grant_type=authorization_code&code=${'x'.repeat(43)}`, { headers: { authorization: basic('no-such-client', CLIENT_SECRET) } }),
  },
  {
    name: 'token: password grant',
    status: 400,
    error: 'unsupported_grant_type',
    delivery: 'json',
    request: () => token(`grant_type=password&username=alice&password=x&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`),
  },
  {
    name: 'token: a code with a NUL',
    status: 400,
    error: 'invalid_grant',
    delivery: 'json',
    request: () => token(codeBody({ code: `${'x'.repeat(42)}\u0000` })),
  },
  {
    name: 'token: Content-Type text/plain',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token(codeBody(), { headers: { 'content-type': 'text/plain' } }),
  },
  {
    name: 'token: charset=ISO-8859-1',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => token(codeBody(), { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=ISO-8859-1' } }),
  },
  {
    name: 'token: an unknown refresh_token',
    status: 400,
    error: 'invalid_grant',
    delivery: 'json',
    request: () =>
      token(
        new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'r'.repeat(43),
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }).toString(),
      ),
  },
  {
    name: 'app token v2: state missing',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => ({ method: 'POST', path: appTokenPath(null), body: ccBody(), headers: { 'content-type': FORM } }),
  },
  {
    name: 'app token v2: state with CR/LF',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => ({
      method: 'POST',
      path: appTokenPath(`${CONSUMER_UUID}\r\nX-Injected: 1`),
      body: ccBody(),
      headers: { 'content-type': FORM },
    }),
  },
  {
    name: 'app token v2: state given twice',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => ({
      method: 'POST',
      path: `${appTokenPath()}&state=${CONSUMER_UUID}`,
      body: ccBody(),
      headers: { 'content-type': FORM },
    }),
  },
  {
    name: 'app token v2: client_secret in the query',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => ({
      method: 'POST',
      path: `${appTokenPath()}&client_secret=${CLIENT_SECRET}`,
      body: ccBody(),
      headers: { 'content-type': FORM },
    }),
  },
  {
    name: 'app token v2: client id with a Cyrillic look-alike letter',
    status: 400,
    error: 'invalid_client',
    delivery: 'json',
    request: () => ({
      method: 'POST',
      path: appTokenPath(),
      body: ccBody({ client_id: LOOKALIKE_CLIENT }),
      headers: { 'content-type': FORM },
    }),
  },
  {
    name: 'revoke: client_secret in the query',
    status: 400,
    error: 'invalid_request',
    delivery: 'json',
    request: () => ({
      method: 'POST',
      path: `${TOKEN_PATH}/revoke`,
      query: `client_secret=${CLIENT_SECRET}`,
      body: `token=abc&client_id=${CLIENT_ID}`,
      headers: { 'content-type': FORM },
    }),
  },
  {
    name: 'introspect: no client authentication',
    status: 401,
    error: 'invalid_client',
    delivery: 'json',
    request: () => ({ method: 'POST', path: `${ACCOUNT_PATH}/token/introspect`, body: 'token=abc', headers: { 'content-type': FORM } }),
  },
];

/** The OAuth error code a response carries, however it was delivered. */
function errorOf(response: SentinelResponse, delivery: Delivery): string | null {
  if (delivery === 'redirect') {
    const location = String(response.headers.location ?? '');
    return new URL(location).searchParams.get('error');
  }
  if (delivery === 'json') {
    expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
    const body = JSON.parse(response.body ?? '{}') as Record<string, unknown>;
    expect(typeof body.error_description).toBe('string');
    return typeof body.error === 'string' ? body.error : null;
  }
  expect(String(response.headers['content-type'])).toMatch(/^text\/html/);
  return /Error code: <code>([a-z_]+)<\/code>/.exec(response.body ?? '')?.[1] ?? null;
}

describe('hostile request catalogue', () => {
  let store: RecordingStore;
  let sentinel: Sentinel;
  let login: { interaction: string; csrf: string };

  beforeEach(async () => {
    store = recordingStore(new MemoryStore());
    sentinel = makeSentinel({ store });
    const { interaction } = await startInteraction(sentinel);
    login = { interaction, csrf: await openLogin(sentinel, interaction) };
    store.reset();
  });

  it('lists at least 40 hostile requests, each with a distinct name', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((entry) => entry.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((entry, index) => [`${index + 1}. ${entry.name} → ${entry.status} ${entry.error}`, entry] as const))(
    '%s',
    async (_title, entry) => {
      const response = await call(sentinel, entry.request(login));
      expect(response.status).toBe(entry.status);
      expect(errorOf(response, entry.delivery)).toBe(entry.error);
      // A refused request changes nothing.
      expect(store.writes).toEqual([]);
      const location = response.headers.location;
      if (location !== undefined) {
        expect(REGISTERED.some((uri) => String(location).startsWith(`${uri}${uri.includes('?') ? '&' : '?'}`))).toBe(true);
      } else {
        expect(entry.delivery).not.toBe('redirect');
      }
      expect(response.body ?? '').not.toMatch(/<script>alert|"><script/);
      for (const value of Object.values(response.headers).flat()) expect(String(value)).not.toMatch(/[\r\n]/);
      // The interaction of the login cases survives a refused post: the user can still sign in.
      expect(await contextOf(sentinel).store.get(`interaction:${login.interaction}`)).not.toBeNull();
    },
  );

  it('the account id in a refused request is the fixture account (sanity: the paths are the real ones)', async () => {
    const ok = await call(sentinel, authorize({ redirect_uri: REDIRECT_URI }));
    expect(ok.status).toBe(302);
    expect(String(ok.headers.location)).toContain(`/sentinel/api/account/${ACCOUNT}/login?interaction=`);
    // The address's counter of interactions started (interactionsPerAddress), then the interaction.
    expect(store.writes.map((write) => write.key.split(':')[0])).toEqual(['throttle-interaction', 'interaction']);
  });
});
