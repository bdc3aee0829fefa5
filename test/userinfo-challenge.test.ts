/**
 * The `WWW-Authenticate` challenges of UserInfo (OpenID Connect Core §5.3.3 points to RFC 6750 §3) and of the bearer
 * guard: well-formed auth-params, no error code for a request without credentials for the resource, another
 * scheme's (`Basic …`) included (RFC 6750 §3.1), and then both schemes offered (RFC 9449 §7.1); the scheme of the
 * request in a refusal of its header; and the challenge on a refused form body too.
 */
import { describe, expect, it } from 'vitest';
import { authorizeQuery, call, exchangeCode, FORM, jsonOf, openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { pkcePair } from './helpers/pkce.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { oidcOptions, USERINFO } from './helpers/oidc.js';

/** `Bearer` and comma-separated `name="quoted-string"` params (RFC 9110 §11.2, §5.6.4), nothing else. */
const WELL_FORMED = /^Bearer realm="sentinel"(?:, [a-z_]+="(?:[^"\\]|\\.)*")*$/;

/** The same in the DPoP scheme, whose challenge starts with the proof algorithms (RFC 9449 §7.1). */
const WELL_FORMED_DPOP = /^DPoP algs="[A-Za-z0-9 ]+"(?:, [a-z_]+="(?:[^"\\]|\\.)*")*$/;

/** A request without credentials for the resource is offered both schemes, Bearer first. */
const BOTH = 'Bearer realm="sentinel", DPoP algs="ES256 ES384 EdDSA RS256 PS256"';

describe('UserInfo challenges', () => {
  const sentinel = makeSentinel(oidcOptions());

  it('answers another scheme as a request without credentials: a challenge with no error code', async () => {
    for (const authorization of ['Basic YTpi', 'Negotiate abc', 'Bearerish abc']) {
      const response = await call(sentinel, { path: USERINFO, headers: { authorization } });
      expect(response.status, authorization).toBe(401);
      expect(response.headers['www-authenticate'], authorization).toBe(BOTH);
    }
  });

  it('keeps the challenge a valid quoted-string when the description holds quotes', async () => {
    for (const authorization of ['Bearer ', 'Bearer a b', 'DPoP ', 'DPoP a b', 'dpop']) {
      const response = await call(sentinel, { path: USERINFO, headers: { authorization } });
      expect(response.status, authorization).toBe(401);
      const challenge = response.headers['www-authenticate'] as string;
      const scheme = /^dpop/i.test(authorization) ? 'DPoP' : 'Bearer';
      expect(challenge, authorization).toMatch(scheme === 'DPoP' ? WELL_FORMED_DPOP : WELL_FORMED);
      expect(challenge).toContain('error="invalid_token"');
      // The JSON body carries the same description, its quotes made ' (RFC 6749 §5.2 allows no `"` in it).
      // It names the form of the scheme the request used: a DPoP client is not told to send a Bearer token.
      expect(JSON.parse(response.body as string).error_description).toBe(`the Authorization header must be '${scheme} <token>'`);
    }
  });
});

describe('UserInfo refusing a form body', () => {
  const sentinel = makeSentinel(oidcOptions({ bodyLimit: 1024, bodyTimeout: 0.2 }));

  function post(headers: Record<string, string>, body: Parameters<typeof call>[1]['body']) {
    return call(sentinel, { method: 'POST', path: USERINFO, headers, body });
  }

  it('answers invalid_request from the body with the Bearer challenge', async () => {
    const cases: [string, Record<string, string>, Parameters<typeof call>[1]['body']][] = [
      ['latin1 form', { 'content-type': `${FORM}; charset=latin1` }, 'access_token=abc'],
      ['JSON without the header', { 'content-type': 'application/json' }, '{"access_token":"abc"}'],
      ['repeated access_token', { 'content-type': FORM }, { access_token: ['abc', 'def'] }],
      ['nested access_token', { 'content-type': FORM }, { access_token: { a: 'abc' } }],
    ];
    for (const [name, headers, body] of cases) {
      const response = await post(headers, body);
      expect(response.status, name).toBe(400);
      expect(JSON.parse(response.body as string).error, name).toBe('invalid_request');
      expect(response.headers['www-authenticate'], name).toMatch(WELL_FORMED);
      expect(response.headers['www-authenticate'], name).toContain('error="invalid_request"');
    }
  });

  it('keeps 413 and 408 with their connection: close, and adds the challenge', async () => {
    const large = await post({ 'content-type': FORM, 'content-length': '5000' }, `access_token=${'a'.repeat(5000)}`);
    expect(large.status).toBe(413);
    expect(large.headers.connection).toBe('close');
    expect(large.headers['www-authenticate']).toContain('error="invalid_request"');
    const slow = await post({ 'content-type': FORM }, () => new Promise<string>(() => {}));
    expect(slow.status).toBe(408);
    expect(slow.headers.connection).toBe('close');
    expect(slow.headers['www-authenticate']).toContain('error="invalid_request"');
  });
});

describe('the bearer guard answers another scheme as UserInfo does', () => {
  const sentinel = makeSentinel();

  it('Basic gets a challenge without an error code; a malformed Bearer header gets invalid_token', async () => {
    const basic = await sentinel.checkBearer('Basic YTpi', {});
    expect(basic.ok).toBe(false);
    if (!basic.ok) expect(basic.response.headers['www-authenticate']).toBe(BOTH);
    const malformed = await sentinel.checkBearer('Bearer ', {});
    expect(malformed.ok).toBe(false);
    if (!malformed.ok) {
      expect(malformed.response.headers['www-authenticate']).toMatch(WELL_FORMED);
      expect(malformed.response.headers['www-authenticate']).toContain('error="invalid_token"');
    }
  });
});

/** An access token for the `openid email` scopes, through the authorization code flow. */
async function userTokens(sentinel: ReturnType<typeof makeSentinel>): Promise<Record<string, unknown>> {
  const { verifier, challenge } = pkcePair();
  const query = authorizeQuery({ scope: 'openid email', code_challenge: challenge, code_challenge_method: 'S256' });
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  const signedIn = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
  const code = new URL(String(signedIn.headers.location)).searchParams.get('code') as string;
  return jsonOf(await exchangeCode(sentinel, code, verifier));
}

describe('UserInfo with two credentials in the Authorization field', () => {
  it('answers invalid_request with the challenge (RFC 6750 §3.1), whichever credential comes first', async () => {
    const sentinel = makeSentinel(oidcOptions());
    const token = (await userTokens(sentinel)).access_token as string;
    const alone = await call(sentinel, { path: USERINFO, headers: { authorization: `Bearer ${token}` } });
    expect(alone.status).toBe(200);
    const fields: (string | string[])[] = [
      [`Bearer ${token}`, 'Bearer another'], // every line, as a host calling the core itself may hand them
      `Bearer ${token}, Bearer another`, // the lines joined, as the adapters and a fetch runtime give them
      `Basic YTpi, Bearer ${token}`,
      `DPoP abc, Bearer ${token}`,
    ];
    for (const authorization of fields) {
      const response = await call(sentinel, { path: USERINFO, headers: { authorization } });
      const label = JSON.stringify(authorization);
      expect([response.status, jsonOf(response).error], label).toEqual([400, 'invalid_request']);
      expect(response.headers['www-authenticate'], label).toMatch(
        /^(?:Bearer realm="sentinel"|DPoP algs="[^"]+"), error="invalid_request"/,
      );
    }
    // Beside a token in the body, a Bearer token after a Basic credential is the token twice, not a header to skip.
    const body = new URLSearchParams({ access_token: token }).toString();
    const headers = { 'content-type': FORM, authorization: `Basic YTpi, Bearer ${token}` };
    const twice = await call(sentinel, { method: 'POST', path: USERINFO, headers, body });
    expect([twice.status, jsonOf(twice).error]).toEqual([400, 'invalid_request']);
  });
});

describe('UserInfo with a form-body token beside another scheme', () => {
  it('answers the body token: a Basic header carries no access token, so the token is not sent twice', async () => {
    const sentinel = makeSentinel(oidcOptions());
    const tokens = await userTokens(sentinel);
    const body = new URLSearchParams({ access_token: tokens.access_token as string }).toString();

    const answered = await call(sentinel, {
      method: 'POST',
      path: USERINFO,
      headers: { 'content-type': FORM, authorization: 'Basic YTpi' },
      body,
    });
    expect(answered.status, answered.body).toBe(200);
    expect(jsonOf(answered).sub).toBe(USER_ID);

    // A Bearer header beside it is the token twice.
    const twice = await call(sentinel, {
      method: 'POST',
      path: USERINFO,
      headers: { 'content-type': FORM, authorization: `Bearer ${tokens.access_token as string}` },
      body,
    });
    expect(twice.status).toBe(400);
    expect(jsonOf(twice).error).toBe('invalid_request');
  });
});
