/**
 * RFC 6749 §5.2: a client that tried to authenticate through the `Authorization` header and failed gets 401
 * `invalid_client` with a `WWW-Authenticate` challenge naming the scheme. A `Basic` header with no credentials (which
 * an HTTP server's trimming makes of `Basic `) is such an attempt, at every endpoint that authenticates clients; it
 * is not a request without a header, whose body `client_id` would make it a public client's. Nor is one whose
 * credentials do not read as `id:secret` (no colon, a broken form encoding): the attempt failed all the same.
 */
import { describe, expect, it } from 'vitest';
import { ACCOUNT_PATH, jsonOf, postForm } from './helpers/direct-flow.js';
import {
  basic,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  makeSentinel,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
} from './helpers/fixtures.js';

const sentinel = makeSentinel();

const REQUESTS: [string, string][] = [
  ['token', `grant_type=authorization_code&code=${'x'.repeat(43)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`],
  [
    'par',
    `response_type=code&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&code_challenge=${'c'.repeat(43)}&code_challenge_method=S256`,
  ],
  ['token/revoke', `token=${'t'.repeat(40)}`],
  ['token/introspect', `token=${'t'.repeat(40)}`],
  ['device_authorization', 'scope=openid'],
];

describe('an empty Authorization: Basic header at the client-authenticating endpoints', () => {
  for (const [endpoint, form] of REQUESTS) {
    it(`${endpoint}: 401 invalid_client with the Basic challenge, with or without a body client_id`, async () => {
      for (const authorization of ['Basic', 'basic', 'Basic   ', 'Basic\t']) {
        for (const body of [form, `${form}&client_id=${PUBLIC_CLIENT_ID}`]) {
          const response = await postForm(sentinel, `${ACCOUNT_PATH}/${endpoint}`, body, { headers: { authorization } });
          const label = `${endpoint} ${JSON.stringify(authorization)} ${body.includes('client_id') ? 'with' : 'without'} client_id`;
          expect(response.status, label).toBe(401);
          expect(jsonOf(response).error, label).toBe('invalid_client');
          expect(response.headers['www-authenticate'], label).toMatch(/^Basic realm="sentinel"/);
        }
      }
    });
  }

  it('answers a Basic header whose credentials are not id:secret the same way: 401 invalid_client with the challenge', async () => {
    const encoded = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    // No colon; an id and a secret whose form encoding does not decode; text that is not base64 at all.
    const malformed = [encoded(CLIENT_ID), encoded(`%ZZ:${CLIENT_SECRET}`), encoded(`${CLIENT_ID}:%E0%A4%A`), 'Basic %%%%'];
    for (const [endpoint, form] of REQUESTS) {
      for (const authorization of malformed) {
        const response = await postForm(sentinel, `${ACCOUNT_PATH}/${endpoint}`, form, { headers: { authorization } });
        const label = `${endpoint} ${authorization}`;
        expect(response.status, label).toBe(401);
        expect(jsonOf(response).error, label).toBe('invalid_client');
        expect(response.headers['www-authenticate'], label).toMatch(/^Basic realm="sentinel"/);
      }
    }
  });

  it('still refuses an empty Basic header next to a body secret as two methods, and takes a real one', async () => {
    const twice = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, `token=abc&client_id=${CLIENT_ID}&client_secret=x`, {
      headers: { authorization: 'Basic' },
    });
    expect(twice.status).toBe(400);
    expect(jsonOf(twice).error).toBe('invalid_request');
    const real = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, 'token=abc', {
      headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    });
    expect(real.status).toBe(200);
  });

  it('refuses an empty Basic header next to a client assertion as two methods', async () => {
    const assertion = `client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=a.b.c`;
    const response = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, `token=abc&${assertion}`, {
      headers: { authorization: 'Basic' },
    });
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_request');
  });
});

describe('client assertion parameters without a value', () => {
  // RFC 6749 §3.1: a parameter sent without a value is treated as omitted, so the request names one method.
  const empty = 'client_assertion_type=&client_assertion=';

  it('leave a secret in the body, or in a Basic header, to authenticate the client', async () => {
    const inBody = await postForm(
      sentinel,
      `${ACCOUNT_PATH}/token`,
      `grant_type=client_credentials&${empty}&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`,
    );
    expect(inBody.status, inBody.body).toBe(200);
    const inHeader = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, `token=abc&${empty}`, {
      headers: { authorization: basic(CLIENT_ID, CLIENT_SECRET) },
    });
    expect(inHeader.status, inHeader.body).toBe(200);
  });

  it('still make a repeated one, or one with a value beside a secret, a refusal', async () => {
    const type = encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const secret = `client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`;
    for (const form of [
      `client_assertion_type=${type}&client_assertion=a.b.c&${secret}`,
      `client_assertion=&client_assertion=&${secret}`,
    ]) {
      const response = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, `token=abc&${form}`);
      expect([response.status, jsonOf(response).error], form).toEqual([400, 'invalid_request']);
    }
  });
});

describe('an Authorization field with a Basic credential beside another', () => {
  it('is invalid_request at every client-authenticating endpoint, whichever credential comes first', async () => {
    const valid = basic(CLIENT_ID, CLIENT_SECRET);
    // A padded credential: Buffer's lenient decoder would stop at its padding and ignore the rest.
    const padded = basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET);
    const fields: (string | string[])[] = [
      [valid, basic(PUBLIC_CLIENT_ID, 'x')], // every line, as a host calling the core itself may hand them
      [valid, 'Bearer abc'],
      `${valid}, ${basic(PUBLIC_CLIENT_ID, 'x')}`, // the lines joined, as the adapters and a fetch runtime give them
      `${padded}, Basic ${Buffer.from('other:x').toString('base64')}`,
      `Bearer abc, ${valid}`,
    ];
    expect(padded.endsWith('=')).toBe(true);
    for (const [endpoint, form] of REQUESTS) {
      for (const authorization of fields) {
        const response = await postForm(sentinel, `${ACCOUNT_PATH}/${endpoint}`, form, { headers: { authorization } });
        const label = `${endpoint} ${JSON.stringify(authorization)}`;
        expect(response.status, label).toBe(400);
        expect(jsonOf(response).error, label).toBe('invalid_request');
      }
    }
  });

  it('refuses text after the credentials as a malformed Basic header, and still takes one credential alone', async () => {
    const padded = basic(CC_ONLY_CLIENT_ID, CC_ONLY_SECRET);
    expect(padded.endsWith('=')).toBe(true);
    for (const authorization of [`${padded} x`, `${padded}abc`, `${basic(CLIENT_ID, CLIENT_SECRET)}!`]) {
      const response = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, 'token=abc', { headers: { authorization } });
      expect([response.status, jsonOf(response).error], authorization).toEqual([401, 'invalid_client']);
    }
    for (const authorization of [padded, basic(CLIENT_ID, CLIENT_SECRET)]) {
      const real = await postForm(sentinel, `${ACCOUNT_PATH}/token/revoke`, 'token=abc', { headers: { authorization } });
      expect(real.status, authorization).toBe(200);
    }
  });
});
