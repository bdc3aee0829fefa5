/**
 * Apps written outside the `apps` option refuse what they do not understand too: `registerApp()` input, and the
 * App handed to the PostgreSQL registry (which keeps only the columns it knows, so a field it has no place for was
 * dropped on save: an app's ID token algorithm and post-logout redirect URIs came back without them) or to the
 * in-memory one (which kept a misspelled field beside the app, which then lacked the demand the host meant).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/apps/app.js';
import { generateClientSecret, hashClientSecret } from '../src/apps/client-secrets.js';
import { MemoryAppStore } from '../src/apps/memory-app-store.js';
import { createSentinel, isConfigurationError } from '../src/index.js';
import { ACCOUNT, baseOptions } from './helpers/fixtures.js';
import { sharedPostgres, useThrowawayAppStore } from './helpers/postgres.js';

async function refusal(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
  } catch (error) {
    if (isConfigurationError(error)) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('registerApp()', () => {
  it('refuses a misspelled field instead of registering an app without it', async () => {
    const sentinel = createSentinel(baseOptions());
    const input = { accountId: ACCOUNT, redirectUri: ['https://n.example/cb'], grantTypes: ['authorization_code'] as const };
    expect(await refusal(() => sentinel.registerApp(input as never))).toBe(
      'sentinel-idp: invalid option app.redirectUri: unknown option "redirectUri" — did you mean "redirectUris"?',
    );
    expect(await refusal(() => sentinel.registerApp({ accountId: ACCOUNT, scopes: 'read' } as never))).toMatch(
      /invalid option app\.scopes: unknown option "scopes" — did you mean "scope"\?$/,
    );
  });
});

describe('MemoryAppStore input', () => {
  const app = (overrides: Record<string, unknown> = {}): App =>
    ({
      accountId: ACCOUNT,
      clientId: randomUUID(),
      clientSecretHash: hashClientSecret(generateClientSecret()),
      redirectUris: ['https://app.example.com/cb'],
      grantTypes: ['authorization_code', 'refresh_token'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      ...overrides,
    }) as App;

  it('refuses a field it does not know, on save, on update and in its constructor, as PostgreSQL does', async () => {
    const store = new MemoryAppStore();
    const typo = app({ requireDpop: true });
    expect(await refusal(async () => store.saveApp(typo))).toBe(
      'sentinel-idp: invalid option app.requireDpop: unknown option "requireDpop" — did you mean "requireDPoP"?',
    );
    expect(store.findApp(ACCOUNT, typo.clientId)).toBeNull();
    expect(store.hasAccount(ACCOUNT)).toBe(false);
    const saved = app();
    store.saveApp(saved);
    expect(await refusal(async () => store.updateApp({ ...saved, redirectUri: ['https://evil.example/cb'] } as App))).toMatch(
      /invalid option app\.redirectUri: .*did you mean "redirectUris"\?$/,
    );
    expect(store.findApp(ACCOUNT, saved.clientId)).not.toHaveProperty('redirectUri');
    expect(await refusal(async () => new MemoryAppStore([app({ requireDpop: true })]))).toMatch(/invalid option app\.requireDpop/);
  });

  it('keeps every field an App has, a listed copy with its disabled flag included', () => {
    const store = new MemoryAppStore();
    const saved = app({ requireDPoP: true, postLogoutRedirectUris: ['https://app.example.com/bye'] });
    store.saveApp(saved);
    store.disableApp(ACCOUNT, saved.clientId);
    const [listed] = store.listApps(ACCOUNT);
    expect(store.updateApp(listed as App)).toBe(true);
    expect(store.findDisabledApp(ACCOUNT, saved.clientId)?.requireDPoP).toBe(true);
  });
});

const available = await sharedPostgres('config-strict-apps');
describe.skipIf(available.skip)('PostgresAppStore input', () => {
  const registry = useThrowawayAppStore(available);

  function app(overrides: Record<string, unknown> = {}): App {
    return {
      accountId: ACCOUNT,
      clientId: randomUUID(),
      clientSecretHash: hashClientSecret(generateClientSecret()),
      redirectUris: ['https://app.example.com/cb'],
      grantTypes: ['authorization_code', 'refresh_token'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      ...overrides,
    } as App;
  }

  it('keeps every field of an App it is given (ID token algorithm, post-logout redirect URIs)', async () => {
    const saved = app({ idTokenSignedResponseAlg: 'ES256', postLogoutRedirectUris: ['https://app.example.com/bye'], requireDPoP: true });
    await registry.store().saveApp(saved);
    const found = await registry.store().findApp(ACCOUNT, saved.clientId);
    expect(found?.idTokenSignedResponseAlg).toBe('ES256');
    expect(found?.postLogoutRedirectUris).toEqual(['https://app.example.com/bye']);
    expect(found?.requireDPoP).toBe(true);
    expect(await registry.store().updateApp({ ...saved, idTokenSignedResponseAlg: 'RS256', postLogoutRedirectUris: undefined })).toBe(true);
    const updated = await registry.store().findApp(ACCOUNT, saved.clientId);
    expect(updated?.idTokenSignedResponseAlg).toBe('RS256');
    expect(updated?.postLogoutRedirectUris).toBeUndefined();
  });

  it('refuses a field it does not know, on save and on update, and stores nothing', async () => {
    const typo = app({ requireDpop: true });
    expect(await refusal(() => registry.store().saveApp(typo))).toBe(
      'sentinel-idp: invalid option app.requireDpop: unknown option "requireDpop" — did you mean "requireDPoP"?',
    );
    expect(await registry.store().findApp(ACCOUNT, typo.clientId)).toBeNull();
    const saved = app();
    await registry.store().saveApp(saved);
    expect(await refusal(() => registry.store().updateApp({ ...saved, redirectUri: ['https://evil.example/cb'] } as App))).toMatch(
      /invalid option app\.redirectUri: .*did you mean "redirectUris"\?$/,
    );
    expect((await registry.store().findApp(ACCOUNT, saved.clientId))?.redirectUris).toEqual(['https://app.example.com/cb']);
  });
});
