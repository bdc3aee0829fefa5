/**
 * acr and amr (RFC 8176) in ID tokens and user access tokens: what each sign-in method reaches, that the session
 * remembers it (and that sessions of earlier versions still read), that refreshed tokens keep it, and that events
 * carry it. Real HTTP on the bare node:http host.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSentinel, MemoryStore } from '../src/index.js';
import { encodeSessionRecord, sessionKey } from '../src/authorize/state/session.js';
import { ACCOUNT, USER_ID } from './helpers/fixtures.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { MountedHost } from './helpers/host.js';
import { claimsOf } from './helpers/jwt.js';
import { exchangeCode, refreshTokens, StepUpBrowser } from './helpers/stepup-browser.js';
import { CONFIDENTIAL, stepUpAuthorize, stepUpFixture } from './helpers/stepup-fixtures.js';

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

async function mount(fixture: ReturnType<typeof stepUpFixture>): Promise<MountedHost> {
  const mounted = await HANDLE_HOST.mount(createSentinel(fixture.options));
  open.push(mounted);
  return mounted;
}

async function signInAndExchange(mounted: MountedHost, browser: StepUpBrowser, params: Record<string, string> = {}) {
  const { url, verifier } = stepUpAuthorize(params);
  const trace = await browser.signIn(url);
  const code = trace.callback.searchParams.get('code');
  expect(code, trace.callback.toString()).toBeTruthy();
  const tokens = await exchangeCode(mounted.url, code as string, verifier, CONFIDENTIAL);
  expect(tokens.status).toBe(200);
  return { trace, body: tokens.body, access: claimsOf(tokens.body.access_token as string), id: claimsOf(tokens.body.id_token as string) };
}

describe('acr and amr of a sign-in', () => {
  it('a password sign-in: acr password, amr pwd, in both tokens; the access token carries auth_time', async () => {
    const fixture = stepUpFixture({ totp: 'none' });
    const mounted = await mount(fixture);
    const { access, id } = await signInAndExchange(mounted, new StepUpBrowser(mounted.url));
    for (const claims of [access, id]) {
      expect(claims.acr).toBe('urn:sentinel:acr:password');
      expect(claims.amr).toEqual(['pwd']);
    }
    expect(access.auth_time).toBe(id.auth_time);
    expect(typeof access.auth_time).toBe('number');
  });

  it('a password and a TOTP code: acr mfa, amr pwd otp mfa; refreshed tokens keep them', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    const { trace, body, access, id } = await signInAndExchange(mounted, browser);
    expect(trace.totpAsked).toBe(true);
    for (const claims of [access, id]) {
      expect(claims.acr).toBe('urn:sentinel:acr:mfa');
      expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);
    }
    const refreshed = await refreshTokens(mounted.url, body.refresh_token as string, CONFIDENTIAL);
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.access_token as string)).toMatchObject({ acr: 'urn:sentinel:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
    expect(claimsOf(refreshed.body.id_token as string)).toMatchObject({ acr: 'urn:sentinel:acr:mfa', auth_time: id.auth_time });
  });

  it('the session remembers the methods: a second authorization without the login page has the same acr', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    const browser = new StepUpBrowser(mounted.url, { totpSecret: fixture.secret });
    await signInAndExchange(mounted, browser);
    const again = await signInAndExchange(mounted, browser);
    expect(again.trace.loginShown).toBe(false);
    expect(again.access).toMatchObject({ acr: 'urn:sentinel:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
  });

  it('events carry acr and amr: login.succeeded, session.created and token.issued', async () => {
    const fixture = stepUpFixture({ totp: 'always' });
    const mounted = await mount(fixture);
    await signInAndExchange(mounted, new StepUpBrowser(mounted.url, { totpSecret: fixture.secret }));
    for (const type of ['login.succeeded', 'session.created', 'token.issued'] as const) {
      const event = fixture.events.find((candidate) => candidate.type === type);
      expect(event, type).toMatchObject({ acr: 'urn:sentinel:acr:mfa', amr: ['pwd', 'otp', 'mfa'] });
    }
  });
});

describe('stored sessions', () => {
  it('keeps the compact array, with amr last', () => {
    const record = { userId: 'u-1', accountId: '123456', authTime: 1767225600, expiresAt: 1767254400000 };
    expect(encodeSessionRecord(record)).toBe('["u-1","123456",1767225600,1767254400000]');
    expect(encodeSessionRecord({ ...record, amr: ['pwd', 'otp', 'mfa'] })).toBe(
      '["u-1","123456",1767225600,1767254400000,["pwd","otp","mfa"]]',
    );
  });

  for (const [name, stored] of [
    [
      'the four-element array of earlier versions',
      (authTime: number, expiresAt: number) => JSON.stringify([USER_ID, ACCOUNT, authTime, expiresAt]),
    ],
    [
      'the named-field object of earlier versions',
      (authTime: number, expiresAt: number) => JSON.stringify({ userId: USER_ID, accountId: ACCOUNT, authTime, expiresAt }),
    ],
    [
      'an array whose amr names a method the service does not know',
      (authTime: number, expiresAt: number) => JSON.stringify([USER_ID, ACCOUNT, authTime, expiresAt, ['pwd', 'magic']]),
    ],
  ] as const) {
    it(`reads ${name}: the session signs in, and the tokens carry no acr`, async () => {
      const store = new MemoryStore();
      const fixture = stepUpFixture({ totp: 'none' }, { store });
      const mounted = await mount(fixture);
      const browser = new StepUpBrowser(mounted.url);
      await signInAndExchange(mounted, browser);
      // Rewrite the session the browser holds as an earlier version stored it.
      const sessionId = browser.cookie('sentinel_session');
      expect(sessionId).toBeDefined();
      const key = sessionKey(decodeURIComponent(sessionId as string));
      expect(await store.get(key)).toMatch(/^\[/);
      const now = Math.floor(Date.now() / 1000);
      await store.set(key, stored(now, Date.now() + 3_600_000), 60_000);
      const again = await signInAndExchange(mounted, browser);
      expect(again.trace.loginShown).toBe(false);
      expect(again.access.acr).toBeUndefined();
      expect(again.access.amr).toBeUndefined();
      expect(again.id.acr).toBeUndefined();
    });
  }
});
