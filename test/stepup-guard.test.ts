/**
 * What a protected resource asks of a token's sign-in (RFC 9470): `sentinel.verifyAccessToken` and the guards'
 * `acrValues` and `maxAge`, their 401 challenge, the verified-token cache's path, tokens with no sign-in behind them,
 * and options no token could meet (a ConfigurationError when the guard is set up).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { requireAccessToken } from '../adapters/fetch/index.js';
import { ConfigurationError, createSentinel, type Sentinel } from '../src/index.js';
import { ACCOUNT, ccBody } from './helpers/fixtures.js';
import { advanceClock } from './helpers/clock.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { MountedHost } from './helpers/host.js';
import { exchangeCode, StepUpBrowser } from './helpers/stepup-browser.js';
import { CONFIDENTIAL, stepUpAuthorize, stepUpFixture } from './helpers/stepup-fixtures.js';

const MFA = 'urn:sentinel:acr:mfa';
const PASSWORD_ACR = 'urn:sentinel:acr:password';

const open: MountedHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function tokenOf(totp: 'always' | 'none'): Promise<{ sentinel: Sentinel; token: string; mounted: MountedHost }> {
  const fixture = stepUpFixture({ totp });
  const sentinel = createSentinel(fixture.options);
  const mounted = await HANDLE_HOST.mount(sentinel);
  open.push(mounted);
  const { url, verifier } = stepUpAuthorize();
  const trace = await new StepUpBrowser(mounted.url, { totpSecret: fixture.secret }).signIn(url);
  const tokens = await exchangeCode(mounted.url, trace.callback.searchParams.get('code') as string, verifier, CONFIDENTIAL);
  expect(tokens.status).toBe(200);
  return { sentinel, token: tokens.body.access_token as string, mounted };
}

function guarded(sentinel: Sentinel, token: string, options: Parameters<typeof requireAccessToken>[1]) {
  const guard = requireAccessToken(sentinel, options);
  return guard(new Request('https://api.example.com/export', { headers: { authorization: `Bearer ${token}` } }), { accountId: ACCOUNT });
}

describe('introspection (RFC 9470 §6.2)', () => {
  it("names the token's acr and auth_time, as its claims do", async () => {
    const { token, mounted } = await tokenOf('always');
    const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
    const response = await fetch(`${mounted.url}/sentinel/api/account/${ACCOUNT}/token/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: CONFIDENTIAL.clientId, client_secret: CONFIDENTIAL.secret }).toString(),
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ active: true, acr: MFA, auth_time: claims.auth_time });
    expect(typeof body.auth_time).toBe('number');
  });
});

describe('verifyAccessToken with acrValues and maxAge', () => {
  it('a password token is refused for mfa with insufficient_user_authentication and the RFC 9470 challenge', async () => {
    const { sentinel, token } = await tokenOf('none');
    const error = await sentinel.verifyAccessToken(token, { acrValues: [MFA] }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'insufficient_user_authentication', status: 401 });
    expect((error as { headers: Record<string, string> }).headers['www-authenticate']).toMatch(
      /^Bearer error="insufficient_user_authentication", error_description="[^"]+", acr_values="urn:sentinel:acr:mfa"$/,
    );
    // The same token meets a request for its own level, and for "password or better" written as a string.
    await expect(sentinel.verifyAccessToken(token, { acrValues: PASSWORD_ACR })).resolves.toMatchObject({ acr: PASSWORD_ACR });
    await expect(sentinel.verifyAccessToken(token, { acrValues: `${PASSWORD_ACR} ${MFA}` })).resolves.toMatchObject({ acr: PASSWORD_ACR });
  });

  it('an mfa token meets mfa, not phishing-resistant', async () => {
    const { sentinel, token } = await tokenOf('always');
    await expect(sentinel.verifyAccessToken(token, { acrValues: MFA })).resolves.toMatchObject({ acr: MFA });
    await expect(sentinel.verifyAccessToken(token, { acrValues: 'urn:sentinel:acr:phishing-resistant' })).rejects.toMatchObject({
      code: 'insufficient_user_authentication',
    });
  });

  it('maxAge: a token whose sign-in is older is refused with max_age in the challenge', async () => {
    const { sentinel, token } = await tokenOf('always');
    await expect(sentinel.verifyAccessToken(token, { maxAge: 60 })).resolves.toMatchObject({ acr: MFA });
    advanceClock(61);
    const error = await sentinel.verifyAccessToken(token, { maxAge: 60, acrValues: MFA }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'insufficient_user_authentication' });
    expect((error as { headers: Record<string, string> }).headers['www-authenticate']).toMatch(
      /error="insufficient_user_authentication", error_description="[^"]+", acr_values="urn:sentinel:acr:mfa", max_age="60"$/,
    );
  });

  it('an app token (no sign-in behind it) meets no requirement', async () => {
    const fixture = stepUpFixture({ totp: 'none' });
    const sentinel = createSentinel(fixture.options);
    const mounted = await HANDLE_HOST.mount(sentinel);
    open.push(mounted);
    const response = await fetch(`${mounted.url}/sentinel/api/account/${ACCOUNT}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: ccBody(),
    });
    expect(response.status).toBe(200);
    const { access_token: token } = (await response.json()) as { access_token: string };
    await expect(sentinel.verifyAccessToken(token)).resolves.toBeTruthy();
    await expect(sentinel.verifyAccessToken(token, { acrValues: PASSWORD_ACR })).rejects.toMatchObject({
      code: 'insufficient_user_authentication',
    });
    await expect(sentinel.verifyAccessToken(token, { maxAge: 3600 })).rejects.toMatchObject({ code: 'insufficient_user_authentication' });
  });

  it('options no token could meet are a ConfigurationError naming the field', async () => {
    const { sentinel, token } = await tokenOf('none');
    await expect(sentinel.verifyAccessToken(token, { acrValues: 'urn:example:gold' })).rejects.toMatchObject({
      name: 'ConfigurationError',
      field: 'verifyAccessToken.acrValues',
    });
    expect(() => requireAccessToken(sentinel, { acrValues: ['urn:example:gold'] })).toThrow(ConfigurationError);
    expect(() => requireAccessToken(sentinel, { maxAge: -1 })).toThrow(/requireAccessToken\.maxAge/);
    expect(() => requireAccessToken(sentinel, { acrValues: '' })).toThrow(/requireAccessToken\.acrValues/);
    // Refused whatever the token, as `resource` and `scopes` are, and under the name of the entry point called: an
    // invalid token does not hide the host's mistake behind a 401 until a good one comes.
    await expect(sentinel.verifyAccessToken('not-a-token', { maxAge: -1 })).rejects.toMatchObject({ field: 'verifyAccessToken.maxAge' });
    for (const authorization of [`Bearer ${token}`, 'Bearer not-a-token', undefined]) {
      await expect(sentinel.checkBearer(authorization, { acrValues: 'urn:example:gold' })).rejects.toMatchObject({
        name: 'ConfigurationError',
        field: 'checkBearer.acrValues',
      });
      await expect(sentinel.checkBearer(authorization, { maxAge: 1.5 })).rejects.toMatchObject({ field: 'checkBearer.maxAge' });
    }
  });
});

describe('the guard', () => {
  it('answers 401 with the challenge, on the cache path too, and passes a token that meets it', async () => {
    const { sentinel, token } = await tokenOf('none');
    // Verified once without requirements: the next check is served by the verified-token cache.
    expect(await guarded(sentinel, token, {})).not.toBeInstanceOf(Response);
    for (let round = 0; round < 2; round++) {
      const refused = await guarded(sentinel, token, { acrValues: MFA, maxAge: 300 });
      expect(refused).toBeInstanceOf(Response);
      const response = refused as Response;
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_user_authentication", error_description="a stronger authentication level is required", acr_values="urn:sentinel:acr:mfa", max_age="300"',
      );
      expect(await response.json()).toMatchObject({ error: 'insufficient_user_authentication' });
    }
    const passed = await guarded(sentinel, token, { acrValues: PASSWORD_ACR, maxAge: 300 });
    expect(passed).not.toBeInstanceOf(Response);
  });
});
