/**
 * The account metadata says only what the running configuration does (RFC 8414 §2, OpenID Connect Discovery §3):
 * clients configure themselves from it, so a member that is missing or promises too much breaks them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { contextOf } from '../src/http/context.js';
import { MemoryPasskeys, type SentinelOptions } from '../src/index.js';
import { ACR_MFA, ACR_PASSWORD, ACR_PHISHING_RESISTANT } from '../src/assurance/levels.js';
import { ACCOUNT_PATH, authorizeQuery, call, openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { baseOptions, makeSentinel, PASSWORD, USERNAME } from './helpers/fixtures.js';

async function metadataOf(overrides: Partial<SentinelOptions> = {}): Promise<Record<string, unknown>> {
  const response = await call(makeSentinel(overrides), { path: `${ACCOUNT_PATH}/.well-known/openid-configuration` });
  expect(response.status).toBe(200);
  return JSON.parse(response.body as string) as Record<string, unknown>;
}

describe('client authentication metadata (RFC 8414 §2)', () => {
  it('lists the assertion algorithms of every endpoint whose methods include private_key_jwt', async () => {
    const metadata = await metadataOf();
    const tokenAlgs = metadata.token_endpoint_auth_signing_alg_values_supported as string[];
    expect(tokenAlgs.length).toBeGreaterThan(0);
    for (const endpoint of ['token', 'revocation', 'introspection']) {
      const methods = metadata[`${endpoint}_endpoint_auth_methods_supported`] as string[];
      expect(methods, endpoint).toContain('private_key_jwt');
      // "MUST be present if either of these authentication methods are specified"; "none" MUST NOT be used.
      const algs = metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`];
      expect(algs, endpoint).toEqual(tokenAlgs);
      expect(algs, endpoint).not.toContain('none');
    }
  });
});

describe('acr_values_supported (OpenID Connect Discovery §3)', () => {
  const users = baseOptions().users as NonNullable<SentinelOptions['users']>;
  // A base32 secret of 160 bits: one the TOTP step can check codes against.
  const totpSecret = async () => 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

  it('lists only the password level when nothing reaches a stronger one', async () => {
    expect((await metadataOf()).acr_values_supported).toEqual([ACR_PASSWORD]);
  });

  it('a level it does not list cannot be reached: the app gets unmet_authentication_requirements', async () => {
    const sentinel = makeSentinel();
    const { interaction } = await startInteraction(
      sentinel,
      authorizeQuery({
        scope: 'openid',
        acr_values: ACR_MFA,
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }),
    );
    const csrf = await openLogin(sentinel, interaction);
    const answer = await postLogin(sentinel, interaction, { csrf_token: csrf, username: USERNAME, password: PASSWORD });
    expect(new URL(String(answer.headers.location)).searchParams.get('error')).toBe('unmet_authentication_requirements');
  });

  it('adds mfa with users.totpSecret, and every level with passkeys or a host login page', async () => {
    expect((await metadataOf({ users: { ...users, totpSecret } })).acr_values_supported).toEqual([ACR_PASSWORD, ACR_MFA]);
    const all = [ACR_PASSWORD, ACR_MFA, ACR_PHISHING_RESISTANT];
    expect((await metadataOf({ users: { ...users, passkeys: new MemoryPasskeys() } })).acr_values_supported).toEqual(all);
    expect((await metadataOf({ login: { url: 'https://host.example.com/sign-in' } })).acr_values_supported).toEqual(all);
  });
});

describe('the registry read behind grant_types_supported', () => {
  afterEach(() => vi.restoreAllMocks());
  const PATH = `${ACCOUNT_PATH}/.well-known/oauth-authorization-server`;

  it('lists the apps of an account once per jwksMaxAge, however many fetch the document', async () => {
    // Anyone may fetch the document without credentials; each fetch read every app of the account (all its rows in a
    // PostgreSQL registry).
    const sentinel = makeSentinel();
    const listApps = vi.spyOn(contextOf(sentinel).apps, 'listApps' as never);
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(sentinel, { path: PATH })));
    for (let i = 0; i < 5; i++) answers.push(await call(sentinel, { path: PATH }));
    expect(answers.map((answer) => answer.status)).toEqual(Array(25).fill(200));
    expect(listApps).toHaveBeenCalledTimes(1);
  });

  it('keeps no failed read, and nothing at all with jwksMaxAge 0', async () => {
    const errors: unknown[] = [];
    const sentinel = makeSentinel({ jwksMaxAge: 0, onError: (error) => errors.push(error) });
    const apps = contextOf(sentinel).apps as { listApps: (accountId: string) => unknown };
    const real = apps.listApps.bind(apps);
    const listApps = vi.spyOn(apps, 'listApps').mockImplementationOnce(() => Promise.reject(new Error('registry down')));
    const failed = await call(sentinel, { path: PATH });
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.body as string).error).toBe('server_error');
    expect(errors).toHaveLength(1);
    listApps.mockImplementation(real);
    expect((await call(sentinel, { path: PATH })).status).toBe(200);
    expect((await call(sentinel, { path: PATH })).status).toBe(200);
    expect(listApps).toHaveBeenCalledTimes(3);
  });
});

describe('ui_locales_supported (OpenID Connect Discovery §3)', () => {
  it('lists the bundled languages, the default first', async () => {
    expect((await metadataOf()).ui_locales_supported).toEqual(['en', 'es', 'pt-BR', 'fr', 'de', 'ja', 'ar']);
  });

  it("adds a host's own language and puts the configured default first, as its catalogue names it", async () => {
    const metadata = await metadataOf({ i18n: { defaultLocale: 'pt-br', catalogues: { it: { signIn: 'Accedi' } } } });
    expect(metadata.ui_locales_supported).toEqual(['pt-BR', 'en', 'es', 'fr', 'de', 'ja', 'ar', 'it']);
  });

  it('every language it lists is the one a page then speaks', async () => {
    const sentinel = makeSentinel();
    for (const tag of (await metadataOf()).ui_locales_supported as string[]) {
      const { loginPath, interaction } = await startInteraction(sentinel, authorizeQuery({ ui_locales: tag }));
      const page = await call(sentinel, { path: loginPath, query: new URLSearchParams({ interaction }) });
      expect(String(page.body), tag).toContain(`lang="${tag}"`);
    }
  });
});
