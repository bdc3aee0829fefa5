/**
 * A TOTP secret otplib cannot check codes with: shorter than the 128 bits RFC 4226 §4 (R6) requires (the common
 * 16-character base32 secret is 80 bits), or not base32 at all. It stays refused; the refusal is the host's data
 * error, so the step answers 500 and `onError` hears what is wrong with the secret, otplib's error as the cause. And
 * step-up never sends a user whose only way to `mfa` would be such a secret to a TOTP step that can only fail.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, type SentinelResponse } from '../src/index.js';
import type { SentinelContext } from '../src/http/context.js';
import { passkeyEnrolmentLevel } from '../src/second-factor/step-up-method.js';
import { totpSecretProblem } from '../src/second-factor/totp.js';
import {
  authorizeQuery,
  call,
  csrfOf,
  FORM,
  LOGIN_PATH,
  openLogin,
  postLogin,
  startInteraction,
  stepCookie,
} from './helpers/direct-flow.js';
import { makeSentinel, PASSWORD, USER_ID, USERNAME } from './helpers/fixtures.js';

const TOTP_PATH = `${LOGIN_PATH}/totp`;
const SHORT = 'JBSWY3DPEHPK3PXP'; // valid base32, 10 bytes
const FULL = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'; // 20 bytes, the size RFC 4226 recommends
const MFA = 'urn:sentinel:acr:mfa';

function sentinelWith(secret: string, askTotp: boolean, errors: unknown[] = []) {
  return makeSentinel({
    store: new MemoryStore(),
    users: {
      authenticate: async ({ username, password }) =>
        username === USERNAME && password === PASSWORD ? { id: USER_ID, ...(askTotp ? { secondFactor: 'totp' as const } : {}) } : null,
      totpSecret: async () => secret,
    },
    onError: (error) => errors.push(error),
  });
}

/** Signs in with the password on a new interaction of `query`; the answer to the password. */
async function afterPassword(sentinel: ReturnType<typeof makeSentinel>, query = authorizeQuery()) {
  const { interaction } = await startInteraction(sentinel, query);
  const csrf = await openLogin(sentinel, interaction);
  return { interaction, response: await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD }) };
}

async function postCode(sentinel: ReturnType<typeof makeSentinel>, interaction: string, cookie: string): Promise<SentinelResponse> {
  const query = new URLSearchParams({ interaction });
  const csrf = csrfOf((await call(sentinel, { path: TOTP_PATH, query, headers: { cookie } })).body);
  const body = new URLSearchParams({ csrf_token: csrf, code: '123456' }).toString();
  return call(sentinel, { method: 'POST', path: TOTP_PATH, query, headers: { 'content-type': FORM, cookie }, body });
}

describe('a TOTP secret otplib cannot check codes with', () => {
  it('names the size: an 80-bit secret is refused for the 128 bits RFC 4226 requires, with otplib as the cause', async () => {
    const errors: unknown[] = [];
    const sentinel = sentinelWith(SHORT, true, errors);
    const { interaction, response } = await afterPassword(sentinel);
    const answer = await postCode(sentinel, interaction, stepCookie(response));
    expect(answer.status).toBe(500);
    expect(errors).toHaveLength(1);
    const error = errors[0] as Error;
    expect(error.message).toBe(
      'sentinel-idp: users.totpSecret returned a secret that is 80 bits long; RFC 4226 §4 (R6) requires at least 128 (26 base32 characters)',
    );
    expect(String((error.cause as Error).message)).toContain('at least 16 bytes');
  });

  it('still says base32 for a secret that is not, with otplib as the cause', async () => {
    const errors: unknown[] = [];
    const sentinel = sentinelWith('not base32!', true, errors);
    const { interaction, response } = await afterPassword(sentinel);
    expect((await postCode(sentinel, interaction, stepCookie(response))).status).toBe(500);
    expect((errors[0] as Error).message).toBe('sentinel-idp: users.totpSecret returned a secret that is not valid base32');
    expect((errors[0] as Error).cause).toBeInstanceOf(Error);
  });

  it('tells the sizes apart as otplib does', () => {
    expect(totpSecretProblem(FULL)).toBeNull();
    expect(totpSecretProblem(FULL.toLowerCase())).toBeNull();
    expect(totpSecretProblem('A'.repeat(26))).toBeNull(); // 26 characters: 16 bytes, the least accepted
    expect(totpSecretProblem('A'.repeat(24))).toContain('is 120 bits long');
    expect(totpSecretProblem('A'.repeat(112))).toBe('is 560 bits long; at most 512 are accepted');
  });

  it('step-up to mfa: a short secret is no way there (unmet), a full one is (the TOTP step)', async () => {
    const query = authorizeQuery({ scope: 'openid', acr_values: MFA });
    const short = await afterPassword(sentinelWith(SHORT, false), query);
    expect(short.response.status).toBe(303);
    const location = new URL(String(short.response.headers.location));
    expect(location.searchParams.get('error')).toBe('unmet_authentication_requirements');
    const full = await afterPassword(sentinelWith(FULL, false), query);
    expect(String(full.response.headers.location)).toContain('/login/totp?interaction=');
  });

  it('the passkey enrolment level still counts a short secret: a password alone never adds a passkey', async () => {
    const context = { config: { users: { totpSecret: async () => SHORT } } } as unknown as SentinelContext;
    expect(await passkeyEnrolmentLevel(context, { accountId: 'a', userId: USER_ID })).toBe(MFA);
  });
});
