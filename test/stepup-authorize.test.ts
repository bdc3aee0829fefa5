/**
 * Step-up at the authorization endpoint (OpenID Connect Core §3.1.2.1 `acr_values`, §5.5.1.1 the `claims` parameter's
 * `acr`): a session below the level signs in again with a method that reaches it (the TOTP step after the password,
 * or a passkey), a user who cannot reach it gets `unmet_authentication_requirements`, unknown voluntary values are
 * ignored, malformed `claims` is `invalid_request`, and every error redirect carries `state` and `iss`. An essential
 * `acr` with values gets one of them back (§5.5.1.1), in the code's tokens and the refreshed ones. Real HTTP on the
 * bare node:http host.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSentinel, MemoryPasskeys } from '../src/index.js';
import { assuranceClaims } from '../src/assurance/levels.js';
import { ACCOUNT, CLIENT_ID, ISSUER, REDIRECT_URI, USER_ID } from './helpers/fixtures.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { MountedHost } from './helpers/host.js';
import { claimsOf } from './helpers/jwt.js';
import { advanceClock } from './helpers/clock.js';
import { assert, newCredential } from './helpers/software-authenticator.js';
import { exchangeCode, refreshTokens, StepUpBrowser } from './helpers/stepup-browser.js';
import { CONFIDENTIAL, stepUpAuthorize, stepUpFixture } from './helpers/stepup-fixtures.js';

const PASSWORD = 'urn:sentinel:acr:password';
const MFA = 'urn:sentinel:acr:mfa';
const PHISHING_RESISTANT = 'urn:sentinel:acr:phishing-resistant';
const ACCOUNT_ISSUER = `${ISSUER}/sentinel/api/account/${ACCOUNT}`;

const open: MountedHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function mount(fixture: ReturnType<typeof stepUpFixture>): Promise<MountedHost> {
  const mounted = await HANDLE_HOST.mount(createSentinel(fixture.options));
  open.push(mounted);
  return mounted;
}

async function tokensOf(mounted: MountedHost, callback: URL, verifier: string) {
  const code = callback.searchParams.get('code');
  expect(code, callback.toString()).toBeTruthy();
  const tokens = await exchangeCode(mounted.url, code as string, verifier, CONFIDENTIAL);
  expect(tokens.status).toBe(200);
  return { access: claimsOf(tokens.body.access_token as string), id: claimsOf(tokens.body.id_token as string) };
}

/** Signs in through `params` and returns the callback and the tokens' claims. */
async function signIn(mounted: MountedHost, browser: StepUpBrowser, params: Record<string, string> = {}) {
  const { url, verifier } = stepUpAuthorize(params);
  const trace = await browser.signIn(url);
  return { trace, ...(await tokensOf(mounted, trace.callback, verifier)) };
}

/** The error redirect of `url` (no sign-in involved): its error, state and iss. */
async function errorRedirect(mounted: MountedHost, url: string): Promise<URLSearchParams> {
  const response = await new StepUpBrowser(mounted.url).get(url);
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location') as string);
  expect(location.origin + location.pathname).toBe(REDIRECT_URI);
  return location.searchParams;
}

function expectUnmet(callback: URL): void {
  expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
  expect(callback.searchParams.get('error')).toBe('unmet_authentication_requirements');
  expect(callback.searchParams.get('state')).toBe('st-1');
  expect(callback.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
  expect(callback.searchParams.get('code')).toBeNull();
}

describe('acr_values at the authorization endpoint', () => {
  it('asks the TOTP step of a user whose store did not ask for it, when acr_values needs mfa', async () => {
    const fixture = stepUpFixture({ totp: 'available' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    // Without acr_values the same user signs in with the password alone.
    const plain = await signIn(mounted, browser);
    expect(plain.trace.totpAsked).toBe(false);
    expect(plain.access.acr).toBe('urn:sentinel:acr:password');
    // The password session is below mfa: the login page again, then the TOTP step.
    const stepped = await signIn(mounted, browser, { acr_values: MFA });
    expect(stepped.trace.loginShown).toBe(true);
    expect(stepped.trace.totpAsked).toBe(true);
    for (const claims of [stepped.access, stepped.id]) expect(claims).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    // The mfa session now answers a request for mfa, and for password, without the login page.
    const again = await signIn(mounted, browser, { acr_values: `urn:example:unknown ${MFA}` });
    expect(again.trace.loginShown).toBe(false);
    expect(again.access.acr).toBe(MFA);
  });

  it('the claims parameter: an essential acr of mfa asks for the TOTP step, the ID token names it', async () => {
    const fixture = stepUpFixture({ totp: 'available' });
    const mounted = await mount(fixture);
    const claims = JSON.stringify({ id_token: { acr: { essential: true, values: [MFA] } } });
    const { trace, id } = await signIn(mounted, new StepUpBrowser(mounted.url, { totpSecret: fixture.secret }), { claims });
    expect(trace.totpAsked).toBe(true);
    expect(id.acr).toBe(MFA);
  });

  it('max_age with acr_values: an mfa session that is too old signs in again, TOTP included', async () => {
    const fixture = stepUpFixture({ totp: 'available' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    await signIn(mounted, browser, { acr_values: MFA });
    // Two minutes on: the session is older than max_age, and the authenticator shows its next code.
    advanceClock(120);
    const again = await signIn(mounted, browser, { acr_values: MFA, max_age: '60' });
    expect(again.trace.loginShown).toBe(true);
    expect(again.trace.totpAsked).toBe(true);
    expect(again.access.acr).toBe(MFA);
  });

  it('unknown acr_values are ignored: a password sign-in gives a password token', async () => {
    const fixture = stepUpFixture({ totp: 'none' });
    const mounted = await mount(fixture);
    const { trace, access } = await signIn(mounted, new StepUpBrowser(mounted.url), { acr_values: 'urn:example:gold urn:example:silver' });
    expect(trace.totpAsked).toBe(false);
    expect(access.acr).toBe('urn:sentinel:acr:password');
  });

  it('a user without a TOTP secret or a passkey cannot reach mfa: unmet_authentication_requirements, nothing issued', async () => {
    const fixture = stepUpFixture({ totp: 'none' });
    const mounted = await mount(fixture);
    const { url } = stepUpAuthorize({ acr_values: MFA });
    const trace = await new StepUpBrowser(mounted.url).signIn(url);
    expectUnmet(trace.callback);
    expect(fixture.events.map((event) => event.type)).not.toContain('code.issued');
    expect(fixture.events.map((event) => event.type)).not.toContain('session.created');
    expect(fixture.events.find((event) => event.type === 'authorize.denied')).toMatchObject({ error: 'unmet_authentication_requirements' });
  });

  it('phishing-resistant is out of reach of a password and a TOTP code', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const { url } = stepUpAuthorize({ acr_values: PHISHING_RESISTANT });
    const trace = await new StepUpBrowser(mounted.url, { totpSecret: fixture.secret }).signIn(url);
    expect(trace.totpAsked).toBe(false);
    expectUnmet(trace.callback);
  });

  it('an essential acr naming only unknown values is unmet at once, with state and iss', async () => {
    const mounted = await mount(stepUpFixture({ totp: 'always' }));
    const claims = JSON.stringify({ userinfo: { acr: { essential: true, value: 'urn:example:gold' } } });
    const params = await errorRedirect(mounted, stepUpAuthorize({ claims }).url);
    expect(params.get('error')).toBe('unmet_authentication_requirements');
    expect(params.get('state')).toBe('st-1');
    expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
  });

  it('a voluntary acr naming only unknown values in claims is ignored', async () => {
    const fixture = stepUpFixture({ totp: 'none' });
    const mounted = await mount(fixture);
    const claims = JSON.stringify({ id_token: { acr: { values: ['urn:example:gold'] }, email: null } });
    const { access } = await signIn(mounted, new StepUpBrowser(mounted.url), { claims });
    expect(access.acr).toBe('urn:sentinel:acr:password');
  });

  it.each([
    ['not JSON', '{"id_token":'],
    ['not an object', '["acr"]'],
    ['a target that is not an object', '{"id_token":"acr"}'],
    ['essential not a boolean', '{"id_token":{"acr":{"essential":"yes"}}}'],
    ['values not strings', '{"id_token":{"acr":{"values":[1]}}}'],
  ])('malformed claims (%s) → invalid_request with state and iss', async (_name, claims) => {
    const fixture = stepUpFixture({ totp: 'none' });
    const mounted = await mount(fixture);
    const params = await errorRedirect(mounted, stepUpAuthorize({ claims }).url);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st-1');
    expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
    expect(fixture.events.map((event) => event.type)).not.toContain('code.issued');
  });

  it('prompt=none with a session below the level: login_required, with state and iss', async () => {
    const fixture = stepUpFixture({ totp: 'available' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    await signIn(mounted, browser);
    const response = await browser.get(stepUpAuthorize({ acr_values: MFA, prompt: 'none' }).url);
    const location = new URL(response.headers.get('location') as string);
    expect(location.searchParams.get('error')).toBe('login_required');
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
  });

  it('completeLogin() with methods below the level gets unmet_authentication_requirements, no session', async () => {
    const fixture = stepUpFixture({ totp: 'none' }, { login: { url: 'https://login.example.com/sign-in' } });
    const sentinel = createSentinel(fixture.options);
    const mounted = await HANDLE_HOST.mount(sentinel);
    open.push(mounted);
    const response = await new StepUpBrowser(mounted.url).get(stepUpAuthorize({ acr_values: MFA }).url);
    const interaction = new URL(response.headers.get('location') as string).searchParams.get('interaction') as string;
    const done = await sentinel.completeLogin(interaction, { userId: USER_ID, amr: ['pwd'] });
    expect(done.status).toBe(303);
    expectUnmet(new URL(done.headers.location as string));
    expect(done.headers['set-cookie']).toBeUndefined();
  });
});

/** The claims parameter asking for an essential acr among `values` in the ID token. */
function essentialAcr(...values: string[]): string {
  return JSON.stringify({ id_token: { acr: { essential: true, values } } });
}

describe('essential acr values (OpenID Connect Core §5.5.1.1)', () => {
  it('a stronger sign-in is reported as the value asked for, in the code, the access token and refreshed tokens', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    const { url, verifier } = stepUpAuthorize({ claims: essentialAcr(PASSWORD) });
    const trace = await browser.signIn(url);
    expect(trace.totpAsked).toBe(true);
    const tokens = await exchangeCode(mounted.url, trace.callback.searchParams.get('code') as string, verifier, CONFIDENTIAL);
    expect(tokens.status).toBe(200);
    // The methods stay what they were; only the class is the one the client listed.
    for (const token of [tokens.body.id_token, tokens.body.access_token]) {
      expect(claimsOf(token as string)).toMatchObject({ acr: PASSWORD, amr: ['pwd', 'otp', 'mfa'] });
    }
    const refreshed = await refreshTokens(mounted.url, tokens.body.refresh_token as string, CONFIDENTIAL);
    expect(refreshed.status).toBe(200);
    for (const token of [refreshed.body.id_token, refreshed.body.access_token]) expect(claimsOf(token as string).acr).toBe(PASSWORD);
    expect(fixture.events.find((event) => event.type === 'token.issued')).toMatchObject({ acr: PASSWORD });
  });

  it('reports the strongest listed value the sign-in reaches, also from an existing session', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    const first = await signIn(mounted, browser, { claims: essentialAcr(PHISHING_RESISTANT, PASSWORD) });
    expect(first.id.acr).toBe(PASSWORD);
    // The mfa session answers a list that names mfa as mfa, without the login page.
    const again = await signIn(mounted, browser, { claims: essentialAcr(PASSWORD, MFA) });
    expect(again.trace.loginShown).toBe(false);
    for (const claims of [again.id, again.access]) expect(claims.acr).toBe(MFA);
  });

  it('voluntary acr values still report the sign-in as it is', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const claims = JSON.stringify({ id_token: { acr: { values: [PASSWORD] } } });
    const { id } = await signIn(mounted, new StepUpBrowser(mounted.url, { totpSecret: fixture.secret }), { claims, acr_values: PASSWORD });
    expect(id.acr).toBe(MFA);
  });

  it('a stored acr the methods do not reach is not trusted: the token carries neither acr nor amr', () => {
    expect(assuranceClaims(['pwd', 'otp', 'mfa'], PASSWORD)).toEqual({ acr: PASSWORD, amr: ['pwd', 'otp', 'mfa'] });
    expect(assuranceClaims(['pwd'], MFA)).toBeUndefined();
    expect(assuranceClaims(['pwd'], 'urn:example:gold')).toBeUndefined();
  });

  it('essential values of id_token and userinfo with none in common are unmet at once', async () => {
    const mounted = await mount(stepUpFixture({ totp: 'always' }));
    const claims = JSON.stringify({
      id_token: { acr: { essential: true, value: PASSWORD } },
      userinfo: { acr: { essential: true, value: MFA } },
    });
    const params = await errorRedirect(mounted, stepUpAuthorize({ claims }).url);
    expect(params.get('error')).toBe('unmet_authentication_requirements');
    expect(params.get('state')).toBe('st-1');
  });
});

describe('a passkey reaches every level', () => {
  it('phishing-resistant: the password is not enough, the page says so in its language, the passkey signs in', async () => {
    const passkeys = new MemoryPasskeys();
    const credential = newCredential();
    passkeys.save({
      accountId: ACCOUNT,
      userId: USER_ID,
      passkey: { id: credential.id, publicKey: credential.publicKey, counter: 0, createdAt: Date.now() },
    });
    const fixture = stepUpFixture({ totp: 'always', passkeys });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    const { url, verifier } = stepUpAuthorize({ acr_values: PHISHING_RESISTANT, ui_locales: 'de' });
    const trace = await browser.signIn(url);
    // The walk stops at the login page shown again after the right password: no way forward but the passkey.
    expect(trace.callback.href).toBe('about:blank');
    expect(trace.totpAsked).toBe(false);
    expect(trace.lastPage).toContain('Diese Anwendung verlangt eine stärkere Anmeldung.');
    expect(fixture.events.map((event) => event.type)).not.toContain('session.created');

    // The same interaction, signed in with the passkey.
    const start = await browser.get(url);
    const loginPath = new URL(start.headers.get('location') as string, ISSUER);
    const page = await browser.get(loginPath.pathname + loginPath.search);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const optionsResponse = await fetch(browser.local(`${loginPath.pathname}/passkey/options${loginPath.search}`), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        cookie: browser.cookieHeader(),
        origin: 'http://localhost',
      },
      body: new URLSearchParams({ csrf_token: csrf }).toString(),
    });
    expect(optionsResponse.status).toBe(200);
    const { challenge } = (await optionsResponse.json()) as { challenge: string };
    const assertion = assert(credential, { challenge, origin: 'http://localhost', rpId: 'localhost', userHandle: USER_ID });
    const signedIn = await browser.post(`${loginPath.pathname}/passkey${loginPath.search}`, { csrf_token: csrf, assertion });
    expect(signedIn.status).toBe(303);
    const { access, id } = await tokensOf(mounted, new URL(signedIn.headers.get('location') as string), verifier);
    for (const claims of [access, id]) expect(claims.acr).toBe(PHISHING_RESISTANT);
    expect(access.amr).toEqual(expect.arrayContaining(['user', 'mfa']));
  });
});

describe('every error redirect carries state and iss', () => {
  it('an app that must push its requests, sent without one: invalid_request with the URL state', async () => {
    const fixture = stepUpFixture(
      { totp: 'none' },
      {
        apps: [
          {
            accountId: ACCOUNT,
            clientId: CLIENT_ID,
            clientSecret: CONFIDENTIAL.secret,
            redirectUris: [REDIRECT_URI],
            requirePushedAuthorizationRequests: true,
          },
        ],
      },
    );
    const mounted = await mount(fixture);
    const params = await errorRedirect(mounted, stepUpAuthorize().url);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st-1');
    expect(params.get('iss')).toBe(ACCOUNT_ISSUER);
  });
});
