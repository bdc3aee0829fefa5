/**
 * The pieces of the client-credentials hot path written by hand instead of through general helpers: the token
 * response body, the single query parameter, and the form Content-Type check. Each must answer exactly as the
 * general form does.
 */
import { describe, expect, it } from 'vitest';
import { accessTokenResponse } from '../src/token/access-token.js';
import { readForm } from '../src/http/form-body.js';
import { NO_STORE_JSON_HEADERS, type SentinelRequest } from '../src/http/messages.js';
import { single, fromSearchParams, singleQuery } from '../src/http/params.js';

const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhYmMifQ.c2lnbmF0dXJlLV8tXw';

describe('accessTokenResponse', () => {
  it('is the JSON of the token response, with the no-store headers', () => {
    for (const [type, expiresIn] of [
      ['Bearer', '3600'],
      ['DPoP', 3600],
    ] as const) {
      const response = accessTokenResponse(TOKEN, type, expiresIn);
      expect(response.status).toBe(200);
      expect(response.body).toBe(JSON.stringify({ access_token: TOKEN, token_type: type, expires_in: expiresIn }));
      expect(response.headers).toEqual({ ...NO_STORE_JSON_HEADERS });
    }
  });

  it('adds the user token members in order, and only those given, as JSON.stringify would write them', () => {
    const refresh = 'AbCdEfGhIjKlMnOpQrStUv.3.fam-_ily.sec_ret-';
    const cases: Array<[Parameters<typeof accessTokenResponse>[3], Record<string, unknown>]> = [
      [{}, {}],
      [{ refreshToken: refresh }, { refresh_token: refresh }],
      [{ scope: 'openid offline_access' }, { scope: 'openid offline_access' }],
      [{ idToken: TOKEN }, { id_token: TOKEN }],
      [
        { refreshToken: refresh, scope: 'openid api:read', idToken: TOKEN },
        { refresh_token: refresh, scope: 'openid api:read', id_token: TOKEN },
      ],
      // A scope is the one member not made by this service: quotes and backslashes stay escaped.
      [{ scope: 'a"b\\c' }, { scope: 'a"b\\c' }],
    ];
    for (const [more, members] of cases) {
      const body = accessTokenResponse(TOKEN, 'Bearer', '60', more).body;
      expect(body).toBe(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: '60', ...members }));
      expect(JSON.parse(body as string)).toEqual({ access_token: TOKEN, token_type: 'Bearer', expires_in: '60', ...members });
    }
  });

  it('gives every response its own headers object', () => {
    const first = accessTokenResponse(TOKEN, 'Bearer', '1');
    first.headers['x-extra'] = 'set by a host';
    expect(accessTokenResponse(TOKEN, 'Bearer', '1').headers['x-extra']).toBeUndefined();
  });
});

describe('singleQuery', () => {
  it('answers as single(fromSearchParams(query)) does', () => {
    for (const text of ['state=abc', 'state=', '', 'other=1', 'state=a%20b&v=1']) {
      const query = new URLSearchParams(text);
      expect(singleQuery(query, 'state')).toBe(single(fromSearchParams(query), 'state'));
    }
  });

  it('refuses a repeated parameter', () => {
    expect(() => singleQuery(new URLSearchParams('state=a&state=b'), 'state')).toThrow(/more than once/);
  });
});

describe('readForm Content-Type', () => {
  const request = (contentType: string): SentinelRequest => ({
    method: 'POST',
    path: '/',
    query: new URLSearchParams(),
    headers: { 'content-type': contentType },
    body: 'grant_type=client_credentials',
  });

  it('accepts the form type with no charset or UTF-8, however spelled', async () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded;charset=UTF-8',
      'application/x-www-form-urlencoded; charset=utf-8',
      'Application/X-WWW-Form-Urlencoded ; Charset="utf8"',
    ]) {
      await expect(readForm(request(type), 1024)).resolves.toEqual(new Map([['grant_type', ['client_credentials']]]));
    }
  });

  it('refuses another type or charset', async () => {
    for (const type of ['application/json', 'application/x-www-form-urlencoded;charset=ISO-8859-1', 'text/plain']) {
      await expect(readForm(request(type), 1024)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });
});
