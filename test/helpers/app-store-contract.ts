/**
 * The conformance suite of a managing {@link AppStore} (one with saveApp, listApps, updateApp, patchApp, deleteApp and
 * rotateClientSecret). Each implementation's test file calls `runAppStoreContract` with a factory, called once per
 * test; every test works in its own random account, so stores may share a database.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App, AppStore } from '../../src/apps/app.js';
import { generateClientSecret, hashClientSecret, MAX_RETIRING_SECRETS, verifyAppSecret } from '../../src/apps/client-secrets.js';

/** What a factory hands to the contract. */
export interface AppStoreUnderTest {
  store: Required<Pick<AppStore, 'saveApp' | 'listApps' | 'updateApp' | 'patchApp' | 'deleteApp' | 'rotateClientSecret'>> & AppStore;
  cleanup(): Promise<void>;
  /**
   * Lets `ms` of the store's time pass for the secret-overlap check. A real sleep unless given: a store that times
   * the overlap by this process's clock (the MemoryAppStore) moves that clock; PostgreSQL keeps its own (`now()`).
   */
  wait?: (ms: number) => Promise<void>;
}

function newApp(accountId: string, overrides: Partial<App> = {}): { app: App; secret: string } {
  const secret = generateClientSecret();
  return {
    secret,
    app: {
      accountId,
      clientId: randomUUID(),
      clientSecretHash: hashClientSecret(secret),
      redirectUris: ['https://app.example.com/cb', 'http://127.0.0.1:8080/cb'],
      grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      tokenEndpointAuthMethod: 'client_secret_basic',
      name: 'Contract app',
      scope: 'openid messages',
      ...overrides,
    },
  };
}

/**
 * Defines `describe(name)` with the AppStore contract run against stores from `makeStore`.
 *
 * @example
 * runAppStoreContract('MemoryAppStore', async () => ({ store: new MemoryAppStore(), cleanup: async () => {} }));
 */
export function runAppStoreContract(name: string, makeStore: () => Promise<AppStoreUnderTest>, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip === true)(`AppStore contract: ${name}`, () => {
    let subject: AppStoreUnderTest;
    let store: AppStoreUnderTest['store'];
    let account: string;

    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
      account = `acct-${randomBytes(6).toString('hex')}`;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    it('finds nothing in an unknown account', async () => {
      expect(await store.findApp(account, randomUUID())).toBeNull();
      expect(await store.hasAccount(account)).toBe(false);
      expect(await store.listApps(account)).toEqual([]);
    });

    it('saves an app and finds it with every field, redirect URIs in order; the account then exists', async () => {
      const { app, secret } = newApp(account);
      await store.saveApp(app);
      const found = await store.findApp(account, app.clientId);
      expect(found).toMatchObject({
        accountId: account,
        clientId: app.clientId,
        clientSecretHash: app.clientSecretHash,
        redirectUris: app.redirectUris,
        grantTypes: app.grantTypes,
        tokenEndpointAuthMethod: 'client_secret_basic',
        name: 'Contract app',
        scope: 'openid messages',
      });
      expect(verifyAppSecret(secret, found)).toBe(true);
      expect(verifyAppSecret(generateClientSecret(), found)).toBe(false);
      expect(await store.hasAccount(account)).toBe(true);
      // Same client id, other account: a different app (here: none).
      expect(await store.findApp(`${account}-other`, app.clientId)).toBeNull();
    });

    it('keeps a public client without a secret', async () => {
      const { app } = newApp(account, { clientSecretHash: undefined, tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code'] });
      await store.saveApp(app);
      const found = await store.findApp(account, app.clientId);
      expect(found?.clientSecretHash).toBeUndefined();
      expect(found?.tokenEndpointAuthMethod).toBe('none');
    });

    it('lists the apps of one account only', async () => {
      const first = newApp(account).app;
      const second = newApp(account).app;
      const elsewhere = newApp(`${account}-b`).app;
      for (const app of [first, second, elsewhere]) await store.saveApp(app);
      const listed = await store.listApps(account);
      expect(listed.map((app) => app.clientId).sort()).toEqual([first.clientId, second.clientId].sort());
      await store.deleteApp(elsewhere.accountId, elsewhere.clientId);
    });

    it('updates metadata but never the secrets; an unknown app is not updated', async () => {
      const { app, secret } = newApp(account);
      await store.saveApp(app);
      const changed = await store.updateApp({
        ...app,
        clientSecretHash: hashClientSecret('attempted-secret-change-attempted'),
        redirectUris: ['https://new.example.com/cb'],
        grantTypes: ['authorization_code'],
        name: 'Renamed',
        scope: undefined,
      });
      expect(changed).toBe(true);
      const found = await store.findApp(account, app.clientId);
      expect(found).toMatchObject({ redirectUris: ['https://new.example.com/cb'], grantTypes: ['authorization_code'], name: 'Renamed' });
      expect(found?.scope).toBeUndefined();
      expect(verifyAppSecret(secret, found)).toBe(true);
      expect(await store.updateApp({ ...app, clientId: randomUUID() })).toBe(false);
    });

    it('updates a disabled app too (it exists): the metadata changes, it stays disabled, its secret stays', async () => {
      const { app, secret } = newApp(account);
      await store.saveApp(app);
      expect(await store.disableApp?.(account, app.clientId)).toBe(true);
      const [listed] = await store.listApps(account);
      expect(await store.updateApp({ ...(listed as App), name: 'Renamed while disabled' })).toBe(true);
      expect(await store.findApp(account, app.clientId)).toBeNull();
      const disabled = await store.findDisabledApp?.(account, app.clientId);
      expect(disabled).toMatchObject({ name: 'Renamed while disabled', disabled: true });
      expect(verifyAppSecret(secret, disabled ?? null)).toBe(true);
      expect(await store.enableApp?.(account, app.clientId)).toBe(true);
      expect(await store.findApp(account, app.clientId)).toMatchObject({ name: 'Renamed while disabled' });
      expect((await store.findApp(account, app.clientId))?.disabled).toBeUndefined();
    });

    it("saves an app copied from a listing without taking its disabled flag as the app's own", async () => {
      // `disabled` is the registry's state, shown by listApps and findDisabledApp: saving a copy that carries it
      // neither disables an enabled app nor enables a disabled one, and never leaves the flag on an enabled app.
      const { app } = newApp(account);
      await store.saveApp(app);
      await store.saveApp({ ...app, name: 'Saved with a stale flag', disabled: true });
      expect(await store.findApp(account, app.clientId)).toMatchObject({ name: 'Saved with a stale flag' });
      expect((await store.findApp(account, app.clientId))?.disabled).toBeUndefined();
      expect((await store.listApps(account))[0]?.disabled).toBeUndefined();
      expect(await store.disableApp?.(account, app.clientId)).toBe(true);
      const [listed] = await store.listApps(account);
      await store.saveApp({ ...(listed as App), name: 'Still disabled' });
      expect(await store.findApp(account, app.clientId)).toBeNull();
      expect(await store.findDisabledApp?.(account, app.clientId)).toMatchObject({ name: 'Still disabled', disabled: true });
    });

    it('patches only the fields the patch names, onto the app as stored; secrets and the rest stay', async () => {
      const { app, secret } = newApp(account, {
        registrationAccessTokenHash: hashClientSecret('registration-access-token-of-the-app'),
        postLogoutRedirectUris: ['https://app.example.com/bye'],
        requireDPoP: true,
        // RFC 8707 resources (MCP authorization) are kept by every registry, and left alone by a patch without them.
        resources: ['https://mcp.example.com/mcp'],
        // OpenID Connect Registration 1.0 §2 default_max_age: kept too (in PostgreSQL, in the metadata column).
        defaultMaxAge: 300,
      });
      await store.saveApp(app);
      // Someone else's change after this writer's read: the patch must be applied on top of it.
      const found = await store.findApp(account, app.clientId);
      await store.updateApp({ ...(found as App), jwks: { keys: [{ kty: 'oct', kid: 'k1' }] }, requireDPoP: false });
      let seen: App | undefined;
      const written = await store.patchApp(account, app.clientId, (current) => {
        seen = current;
        return { name: 'Patched', scope: undefined, redirectUris: ['https://patched.example.com/cb'] };
      });
      expect(seen).toMatchObject({ requireDPoP: false, jwks: { keys: [{ kid: 'k1' }] }, name: 'Contract app' });
      const stored = await store.findApp(account, app.clientId);
      for (const result of [written, stored]) {
        expect(result).toMatchObject({
          name: 'Patched',
          redirectUris: ['https://patched.example.com/cb'],
          grantTypes: app.grantTypes,
          postLogoutRedirectUris: ['https://app.example.com/bye'],
          resources: ['https://mcp.example.com/mcp'],
          defaultMaxAge: 300,
          requireDPoP: false,
          jwks: { keys: [{ kty: 'oct', kid: 'k1' }] },
          registrationAccessTokenHash: app.registrationAccessTokenHash,
        });
        expect(result?.scope).toBeUndefined();
        expect(verifyAppSecret(secret, result)).toBe(true);
      }
    });

    it('patches nothing when the update throws, refuses fields a patch may not hold, and finds no unknown app', async () => {
      const { app, secret } = newApp(account);
      await store.saveApp(app);
      const refusal = new Error('refused by the caller');
      await expect(
        (async () =>
          store.patchApp(account, app.clientId, () => {
            throw refusal;
          }))(),
      ).rejects.toBe(refusal);
      await expect(
        (async () => store.patchApp(account, app.clientId, () => ({ name: 'x', clientSecretHash: 'sha256:x' }) as never))(),
      ).rejects.toThrow(/clientSecretHash/);
      const found = await store.findApp(account, app.clientId);
      expect(found?.name).toBe('Contract app');
      expect(verifyAppSecret(secret, found)).toBe(true);
      expect(await store.patchApp(account, randomUUID(), () => ({ name: 'Nobody' }))).toBeNull();
      expect(await store.hasAccount(`${account}-none`)).toBe(false);
    });

    it('finds a disabled app, marked disabled, only through findDisabledApp, until it is enabled again', async () => {
      const { app } = newApp(account, { backchannelLogoutUri: 'https://app.example.com/logout' });
      await store.saveApp(app);
      expect(await store.findDisabledApp?.(account, app.clientId)).toBeNull();
      expect(await store.disableApp?.(account, app.clientId)).toBe(true);
      expect(await store.findApp(account, app.clientId)).toBeNull();
      expect(await store.findDisabledApp?.(account, app.clientId)).toMatchObject({
        clientId: app.clientId,
        backchannelLogoutUri: 'https://app.example.com/logout',
        disabled: true,
      });
      expect(await store.findDisabledApp?.(account, randomUUID())).toBeNull();
      expect(await store.findDisabledApp?.(`${account}-none`, app.clientId)).toBeNull();
      expect(await store.enableApp?.(account, app.clientId)).toBe(true);
      expect(await store.findDisabledApp?.(account, app.clientId)).toBeNull();
      expect(await store.findApp(account, app.clientId)).toMatchObject({ clientId: app.clientId });
    });

    it('keeps the account while its only apps are disabled (reversible); deleting the last one ends it', async () => {
      // Every store answers alike: a disabled app is still sent its logout tokens, signed by the account's keys and
      // checked against its jwks_uri, so the account (its metadata, its JWKS, its key ring) must not vanish.
      const first = newApp(account).app;
      const second = newApp(account).app;
      await store.saveApp(first);
      await store.saveApp(second);
      expect(await store.disableApp?.(account, first.clientId)).toBe(true);
      expect(await store.hasAccount(account)).toBe(true);
      expect(await store.disableApp?.(account, second.clientId)).toBe(true);
      expect(await store.hasAccount(account)).toBe(true);
      expect(await store.findApp(account, first.clientId)).toBeNull();
      expect(await store.enableApp?.(account, second.clientId)).toBe(true);
      expect(await store.hasAccount(account)).toBe(true);
      expect(await store.disableApp?.(account, second.clientId)).toBe(true);
      expect(await store.deleteApp(account, first.clientId)).toBe(true);
      expect(await store.deleteApp(account, second.clientId)).toBe(true);
      expect(await store.hasAccount(account)).toBe(false);
      expect(await store.hasAccount(`${account}-none`)).toBe(false);
    });

    it('deletes an app: gone, and the account with it when it was the last', async () => {
      const { app } = newApp(account);
      await store.saveApp(app);
      expect(await store.deleteApp(account, app.clientId)).toBe(true);
      expect(await store.findApp(account, app.clientId)).toBeNull();
      expect(await store.hasAccount(account)).toBe(false);
      expect(await store.deleteApp(account, app.clientId)).toBe(false);
    });

    it('rotates a secret: the new one works at once, the old one until the overlap ends', async () => {
      const { app, secret: oldSecret } = newApp(account);
      await store.saveApp(app);
      const newSecret = generateClientSecret();
      const rotated = await store.rotateClientSecret(account, app.clientId, hashClientSecret(newSecret), 1);
      expect(rotated?.clientSecretHash).toBe(hashClientSecret(newSecret));
      const found = await store.findApp(account, app.clientId);
      expect(verifyAppSecret(newSecret, found)).toBe(true);
      expect(verifyAppSecret(oldSecret, found)).toBe(true);
      expect(found?.retiringSecrets?.[0]?.expiresAt).toBeGreaterThan(Date.now() / 1000);
      await (subject.wait ?? sleep)(1500);
      expect(verifyAppSecret(oldSecret, await store.findApp(account, app.clientId))).toBe(false);
      expect(verifyAppSecret(newSecret, await store.findApp(account, app.clientId))).toBe(true);
    });

    it('rotates with no overlap: the old secret stops at once', async () => {
      const { app, secret: oldSecret } = newApp(account);
      await store.saveApp(app);
      const newSecret = generateClientSecret();
      await store.rotateClientSecret(account, app.clientId, hashClientSecret(newSecret), 0);
      const found = await store.findApp(account, app.clientId);
      expect(verifyAppSecret(oldSecret, found)).toBe(false);
      expect(verifyAppSecret(newSecret, found)).toBe(true);
    });

    it('rotates with no overlap after an overlapping rotation: every earlier secret stops at once, the new one works', async () => {
      // A leak found during a routine rotation's overlap: `--overlap 0` must leave the new secret only, not the one
      // still in the earlier rotation's overlap.
      const { app, secret: first } = newApp(account);
      await store.saveApp(app);
      const second = generateClientSecret();
      await store.rotateClientSecret(account, app.clientId, hashClientSecret(second), 3600);
      const third = generateClientSecret();
      await store.rotateClientSecret(account, app.clientId, hashClientSecret(third), 0);
      const found = await store.findApp(account, app.clientId);
      expect(verifyAppSecret(first, found)).toBe(false);
      expect(verifyAppSecret(second, found)).toBe(false);
      expect(verifyAppSecret(third, found)).toBe(true);
      expect(found?.retiringSecrets ?? []).toHaveLength(0);
    });

    it('ends every earlier secret by the shorter overlap of a later rotation, not at its own later expiry', async () => {
      // "The previous secret keeps working for N seconds": a secret of an earlier, longer overlap must not outlive it.
      const { app, secret: first } = newApp(account);
      await store.saveApp(app);
      const second = generateClientSecret();
      await store.rotateClientSecret(account, app.clientId, hashClientSecret(second), 3600);
      const third = generateClientSecret();
      await store.rotateClientSecret(account, app.clientId, hashClientSecret(third), 1);
      const found = await store.findApp(account, app.clientId);
      expect(verifyAppSecret(first, found)).toBe(true);
      expect(verifyAppSecret(second, found)).toBe(true);
      expect(found?.retiringSecrets).toHaveLength(2);
      for (const retiring of found?.retiringSecrets ?? []) expect(retiring.expiresAt).toBeLessThanOrEqual(Date.now() / 1000 + 1.5);
      await (subject.wait ?? sleep)(1500);
      const later = await store.findApp(account, app.clientId);
      expect(verifyAppSecret(first, later)).toBe(false);
      expect(verifyAppSecret(second, later)).toBe(false);
      expect(verifyAppSecret(third, later)).toBe(true);
    });

    it('keeps every secret of overlapping rotations, including concurrent ones, and exactly one current', async () => {
      const { app, secret: first } = newApp(account);
      await store.saveApp(app);
      const secrets = Array.from({ length: MAX_RETIRING_SECRETS - 1 }, () => generateClientSecret());
      await Promise.all(secrets.map((secret) => store.rotateClientSecret(account, app.clientId, hashClientSecret(secret), 3600)));
      const found = await store.findApp(account, app.clientId);
      for (const secret of [first, ...secrets]) expect(verifyAppSecret(secret, found)).toBe(true);
      expect(found?.retiringSecrets).toHaveLength(MAX_RETIRING_SECRETS - 1);
      expect(secrets.map(hashClientSecret)).toContain(found?.clientSecretHash);
    });

    it('keeps at most MAX_RETIRING_SECRETS retiring secrets, dropping the oldest, however often it rotates', async () => {
      // Rotations inside the overlap would otherwise pile up secrets, each compared on every token request.
      const { app, secret: first } = newApp(account);
      await store.saveApp(app);
      const secrets = [first];
      for (let i = 0; i < MAX_RETIRING_SECRETS + 3; i += 1) {
        const next = generateClientSecret();
        secrets.push(next);
        const rotated = await store.rotateClientSecret(account, app.clientId, hashClientSecret(next), 3600);
        expect((rotated?.retiringSecrets ?? []).length).toBeLessThanOrEqual(MAX_RETIRING_SECRETS);
      }
      const found = await store.findApp(account, app.clientId);
      expect(found?.retiringSecrets).toHaveLength(MAX_RETIRING_SECRETS);
      const kept = secrets.slice(-(MAX_RETIRING_SECRETS + 1));
      for (const secret of kept) expect(verifyAppSecret(secret, found)).toBe(true);
      for (const secret of secrets.slice(0, -(MAX_RETIRING_SECRETS + 1))) expect(verifyAppSecret(secret, found)).toBe(false);
      expect(found?.clientSecretHash).toBe(hashClientSecret(secrets.at(-1) as string));
    });

    it('does not rotate the secret of an unknown app', async () => {
      expect(await store.rotateClientSecret(account, randomUUID(), hashClientSecret('x'), 60)).toBeNull();
      expect(await store.hasAccount(account)).toBe(false);
    });
  });
}
