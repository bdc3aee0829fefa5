/**
 * A host's user service written as a class: its hooks reach their own state through `this` (a database handle, a
 * private field). The service must call every hook on the host's object, wherever it asks one: the TOTP step-up
 * (`totpSecret`), a recovery code at the step (`recover`) and the device confirmation page's name (`claims`), as
 * UserInfo always did. A hook called detached threw a TypeError inside a sign-in, and the browser got a 500.
 */
import { generateSecret } from 'otplib';
import { afterEach, describe, expect, it } from 'vitest';
import { createSentinel } from '../src/index.js';
import { ACCOUNT, baseOptions, makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';
import { call, csrfOf, FORM, LOGIN_PATH, openLogin, postLogin, startInteraction, stepCookie } from './helpers/direct-flow.js';
import { deviceApps, openConfirmationFor, requestCodes, type Browser } from './helpers/device-drive.js';
import { HANDLE_HOST } from './helpers/handle-host.js';
import type { MountedHost } from './helpers/host.js';
import { claimsOf } from './helpers/jwt.js';
import { exchangeCode, StepUpBrowser } from './helpers/stepup-browser.js';
import { CONFIDENTIAL, stepUpAuthorize } from './helpers/stepup-fixtures.js';

const MFA = 'urn:sentinel:acr:mfa';
const RECOVERY_CODE = 'rcv-class-hooks-0001';

/** Alice's directory; every hook reads the instance's private state, so a detached call throws. */
class Directory {
  readonly #secret = generateSecret();
  readonly #unusedCodes = new Set([RECOVERY_CODE]);
  readonly #names = new Map([[USER_ID, 'Alice Liddell']]);

  constructor(private readonly askTotp: boolean) {}

  get secret(): string {
    return this.#secret;
  }

  async authenticate(input: { accountId: string; username: string; password: string }) {
    if (input.accountId !== ACCOUNT || input.username !== USERNAME || input.password !== PASSWORD) return null;
    return this.askTotp ? { id: USER_ID, secondFactor: 'totp' as const } : { id: USER_ID };
  }

  async claims(input: { userId: string }) {
    return { name: this.#names.get(input.userId) };
  }

  async totpSecret(input: { userId: string }) {
    return input.userId === USER_ID ? this.#secret : null;
  }

  async recover(input: { userId: string; code: string }) {
    return input.userId === USER_ID && this.#unusedCodes.delete(input.code);
  }
}

const open: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((mounted) => mounted.close()));
});

describe('a user service written as a class', () => {
  it('reaches mfa through the TOTP step a request asks for (users.totpSecret on its object)', async () => {
    const users = new Directory(false);
    const mounted = await HANDLE_HOST.mount(createSentinel(baseOptions({ users })));
    open.push(mounted);
    const { url, verifier } = stepUpAuthorize({ acr_values: MFA });
    const trace = await new StepUpBrowser(mounted.url, { totpSecret: users.secret }).signIn(url);
    expect(trace.totpAsked).toBe(true);
    const tokens = await exchangeCode(mounted.url, trace.callback.searchParams.get('code') as string, verifier, CONFIDENTIAL);
    expect(tokens.status).toBe(200);
    expect(claimsOf(tokens.body.access_token as string).acr).toBe(MFA);
  });

  it('signs in with a recovery code at the TOTP step (users.recover on its object)', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ users: new Directory(true), onError: (error) => errors.push(error) });
    const { interaction } = await startInteraction(sentinel);
    const loginCsrf = await openLogin(sentinel, interaction);
    const password = await postLogin(sentinel, interaction, { csrf_token: loginCsrf, username: USERNAME, password: PASSWORD });
    expect(password.status).toBe(303);
    const cookie = stepCookie(password);
    const step = `${LOGIN_PATH}/totp`;
    const query = new URLSearchParams({ interaction });
    const page = await call(sentinel, { path: step, query, headers: { cookie } });
    expect(page.status).toBe(200);
    const form = new URLSearchParams({ csrf_token: csrfOf(page.body), recovery_code: RECOVERY_CODE }).toString();
    const answer = await call(sentinel, { method: 'POST', path: step, query, headers: { 'content-type': FORM, cookie }, body: form });
    expect(errors).toEqual([]);
    expect(answer.status).toBe(303);
    expect(new URL(String(answer.headers.location)).searchParams.has('code')).toBe(true);
  });

  it('names the signed-in user on the device confirmation page (users.claims on its object)', async () => {
    const sentinel = makeSentinel({ apps: deviceApps(), users: new Directory(false) });
    const browser: Browser = {};
    const opened = await openConfirmationFor(sentinel, browser, (await requestCodes(sentinel)).user_code);
    expect(opened.page.status).toBe(200);
    expect(String(opened.page.body)).toContain('Signed in as <strong><bdi>Alice Liddell</bdi></strong>.');
  });
});
