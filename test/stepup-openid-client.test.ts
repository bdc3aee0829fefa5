/**
 * RFC 9470 step-up, driven end to end by openid-client 6 on every host: a password token is refused by the route
 * that asks for mfa with a 401 challenge naming `acr_values` and `max_age`; the client re-authorizes with exactly
 * those values, the user passes the TOTP step, and the new token is accepted.
 */
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { HOSTS, type MountedHost, STEP_UP_GUARD, stepUpPath } from './helpers/hosts.js';
import { StepUpBrowser } from './helpers/stepup-browser.js';
import { stepUpFixture } from './helpers/stepup-fixtures.js';

const ACCOUNT_ISSUER = `http://localhost/sentinel/api/account/${ACCOUNT}`;

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

/** The issuer is http://localhost; the server listens on an ephemeral port: route the library's requests there. */
function via(url: string): typeof fetch {
  return ((target: string, init: RequestInit) => fetch(String(target).replace('http://localhost', url), init)) as typeof fetch;
}

/** One authorization with openid-client: the URL it builds, the browser's sign-in, the code exchange. */
async function authorize(config: client.Configuration, browser: StepUpBrowser, extra: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: 'openid',
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  const trace = await browser.signIn(url.toString());
  const tokens = await client.authorizationCodeGrant(config, trace.callback, { pkceCodeVerifier: verifier, expectedState: state });
  return { trace, tokens };
}

describe.each(HOSTS)('openid-client 6 step-up round trip on $name', (host) => {
  it('401 insufficient_user_authentication → re-authorize with acr_values and max_age → TOTP step → accepted', async () => {
    const fixture = stepUpFixture({ totp: 'available' });
    const mounted = await host.mount(createSentinel(fixture.options));
    open.push(mounted);
    const config = await client.discovery(new URL(ACCOUNT_ISSUER), CLIENT_ID, CLIENT_SECRET, undefined, {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: via(mounted.url) as never,
    });
    expect(config.serverMetadata().acr_values_supported).toContain(STEP_UP_GUARD.acrValues);
    expect(config.serverMetadata().claims_parameter_supported).toBe(true);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    const api = new URL(`${mounted.url}${stepUpPath(ACCOUNT)}`);

    // A password sign-in: its token is good, but below what the export route asks.
    const first = await authorize(config, browser);
    expect(first.trace.totpAsked).toBe(false);
    const challenge = await client.fetchProtectedResource(config, first.tokens.access_token, api, 'GET').then(
      () => expect.unreachable('the password token was accepted'),
      (error: unknown) => error as client.WWWAuthenticateChallengeError,
    );
    expect(challenge).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect(challenge.status).toBe(401);
    const [bearer] = challenge.cause;
    expect(bearer?.scheme).toBe('bearer');
    expect(bearer?.parameters).toMatchObject({
      error: 'insufficient_user_authentication',
      acr_values: STEP_UP_GUARD.acrValues,
      max_age: String(STEP_UP_GUARD.maxAge),
    });
    expect(bearer?.parameters.error_description).toBeTruthy();

    // The client asks for exactly what the challenge named; the session is below it, so the user signs in again.
    const second = await authorize(config, browser, {
      acr_values: bearer?.parameters.acr_values as string,
      max_age: bearer?.parameters.max_age as string,
    });
    expect(second.trace.loginShown).toBe(true);
    expect(second.trace.totpAsked).toBe(true);
    expect(second.tokens.claims()).toMatchObject({ sub: USER_ID, acr: STEP_UP_GUARD.acrValues });
    const answer = await client.fetchProtectedResource(config, second.tokens.access_token, api, 'GET');
    expect(answer.status).toBe(200);
    const { claims } = (await answer.json()) as { claims: Record<string, unknown> };
    expect(claims).toMatchObject({ sub: USER_ID, acr: STEP_UP_GUARD.acrValues, amr: ['pwd', 'otp', 'mfa'] });
    expect(typeof claims.auth_time).toBe('number');
  });
});
